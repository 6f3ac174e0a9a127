"""retry_on_conflict: optimistic concurrency from the writer's side.

Read the latest version, change it, write it back with its resourceVersion; if somebody else
wrote in between, the API server answers 409 Conflict and we start again from a fresh read. No
locks, so a writer that dies holds nothing. Follows client-go util/retry/util.go
(RetryOnConflict with DefaultRetry: 5 steps, 10 ms, factor 1, jitter 0.1).

In kubelab the retries happen at once (there are no goroutines to sleep); the backoff each
attempt would have waited is returned in RetryResult so a caller on the clock can charge it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from kubelab.api.errors import ApiError

__all__ = ["DEFAULT_RETRY", "Backoff", "RetryResult", "is_conflict", "retry_on_conflict"]

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """wait.Backoff: duration, factor, jitter, steps."""

    duration: float = 0.010
    factor: float = 1.0
    jitter: float = 0.1
    steps: int = 5

    def delays(self, rand: random.Random | None = None) -> list[float]:
        out, delay = [], self.duration
        for _ in range(self.steps - 1):
            jitter = delay * self.jitter * rand.random() if (rand and self.jitter) else 0.0
            out.append(delay + jitter)
            delay *= self.factor
        return out


DEFAULT_RETRY = Backoff()


@dataclass
class RetryResult:
    attempts: int
    waited: float  # virtual seconds of backoff between attempts


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, ApiError) and err.code == 409 and err.reason == "Conflict"


def retry_on_conflict(
    fn: Callable[[], T],
    backoff: Backoff = DEFAULT_RETRY,
    rand: random.Random | None = None,
    on_retry: Callable[[RetryResult], None] | None = None,
) -> T:
    """Call fn until it does not raise a Conflict, at most backoff.steps times.

    The last Conflict is raised when every attempt lost the race; any other error at once.
    """
    delays = backoff.delays(rand)
    result = RetryResult(attempts=0, waited=0.0)
    while True:
        result.attempts += 1
        try:
            return fn()
        except ApiError as err:
            if not is_conflict(err) or result.attempts > len(delays):
                raise
            result.waited += delays[result.attempts - 1]
            if on_retry is not None:
                on_retry(result)
