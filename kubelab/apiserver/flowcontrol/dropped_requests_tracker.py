"""The Retry-After of a 429: how long priority and fairness asks a refused client to wait.

Follows k8s.io/apiserver pkg/util/flowcontrol/dropped_requests_tracker.go: each priority level
keeps its drops per second (of the simulated clock) and a retryAfter that starts at 1 s. When
the last retryAfter seconds saw at least 3 x retryAfter drops it doubles, at most to 32 s, and
when they saw fewer than retryAfter it falls by one; either happens at most once per second.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MAX_RETRY_AFTER", "DroppedRequestsStats"]

MAX_RETRY_AFTER = 32


@dataclass(eq=False, slots=True)
class DroppedRequestsStats:
    """droppedRequestsStats: one priority level's drops and the Retry-After they suggest."""

    retry_after: int = 1
    retry_after_updated: int = 0
    drops: dict[int, int] = field(default_factory=dict)  # second -> requests dropped in it

    def record_dropped_request(self, now: float) -> int:
        """One more request dropped at now; returns the Retry-After to send it."""
        second = int(now)
        if second not in self.drops:  # updateRetryAfterIfNeededLocked, once per second
            recent = sum(n for s, n in self.drops.items() if second - s <= self.retry_after)
            if second - self.retry_after_updated >= self.retry_after and \
                    recent >= 3 * self.retry_after:
                self.retry_after = min(self.retry_after * 2, MAX_RETRY_AFTER)
                self.retry_after_updated = second
            elif recent < self.retry_after and self.retry_after > 1:
                self.retry_after -= 1
            self.drops = {s: n for s, n in self.drops.items() if second - s <= MAX_RETRY_AFTER}
        self.drops[second] = self.drops.get(second, 0) + 1
        return self.retry_after
