"""What a reconciler is handed and returns (controller-runtime pkg/reconcile/reconcile.go).

A Request names one object, never an event: the reconciler reads what the object looks like
*now* and makes the world match. It must be idempotent, since it runs again after a crash, a
relist, a resync or a requeue, and level-triggered, since it never learns which event woke it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelab.client.client import Client
    from kubelab.client.events import EventRecorder
    from kubelab.client.operator.cache import Cache
    from kubelab.sim.clock import Clock

__all__ = ["Reconciler", "Request", "Result", "TerminalError"]


@dataclass(frozen=True)
class Request:
    """reconcile.Request: the NamespacedName of the object to reconcile."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Result:
    """reconcile.Result: requeue_after > 0 looks again after that many seconds (and resets
    the back-off); requeue alone looks again with the rate limiter's back-off."""

    requeue: bool = False
    requeue_after: float = 0.0


class TerminalError(Exception):
    """reconcile.TerminalError: the error is logged, and the key is not retried."""


class Reconciler:
    """Subclass and write reconcile(). The Operator sets, before it starts:
    client (writes, and reads the cache cannot answer), cache (the informers' objects: shared,
    read-only), clock and recorder (events)."""

    client: Client
    cache: Cache
    clock: Clock
    recorder: EventRecorder

    def reconcile(self, request: Request) -> Result | None:
        raise NotImplementedError

    def inject(self, client: Client, cache: Cache, clock: Clock, recorder: EventRecorder,
               **_: Any) -> None:
        self.client, self.cache, self.clock, self.recorder = client, cache, clock, recorder
