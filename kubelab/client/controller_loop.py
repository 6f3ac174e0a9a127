"""The controller loop every kubelab controller runs, as kubernetes/sample-controller does.

    informer event -> enqueue(key) -> worker: process_next_work_item()
        -> sync_handler(key)  (reads from the lister, never from the event)
        -> done(key); forget(key) on success, add_rate_limited(key) on error

It is level-triggered: an event only says "look at this key again"; sync_handler compares the
desired state with the actual state as the cache shows it now. So a burst of updates to one
key becomes one reconcile (the queue holds a key once), and a lost event is repaired by the
next event, resync or relist for that key.

(The file is not called controller.py: in client-go that name is tools/cache/controller.go,
the loop inside an informer. This one is the worker loop of sample-controller's controller.go.)

Workers are callbacks on the simulated clock, as many as upstream's controller starts
goroutines (ConcurrentReplicaSetSyncs 5, ...). A sync takes virtual time, so that events close
together coalesce in the queue as they do behind a busy Go worker. The cost model
(docs/ARCHITECTURE.md, "Work takes time"): a worker stays busy, holding its key, for

    cost (DEFAULT_SYNC_COST, 5 ms: a sync's own work and its round trips)
    + the wait for its last request's client-side rate-limit token (kubelab/client/flowcontrol.py)

measured from when the sync started (a sync runs at one virtual instant). cost 0 and a client
without a rate limiter give the old behaviour: a sync takes no time at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.client.indexer import meta_namespace_key_func
from kubelab.client.shared_informer import ResourceEventHandler
from kubelab.client.workqueue import RateLimitingQueue, default_controller_rate_limiter
from kubelab.sim.clock import Clock
from kubelab.sim.trace import Trace

__all__ = ["DEFAULT_SYNC_COST", "Controller", "SyncHandler", "enqueue_handler"]

DEFAULT_SYNC_COST = 0.005  # virtual seconds one sync takes, besides its throttling waits

SyncHandler = Callable[[str], None]


class Controller:
    def __init__(
        self,
        name: str,
        sync_handler: SyncHandler,
        clock: Clock,
        *,
        workers: int = 1,
        cost: float | None = None,
        trace: Trace | None = None,
        queue: RateLimitingQueue[str] | None = None,
        client: Client | None = None,
    ) -> None:
        """cost: virtual seconds per sync (None: DEFAULT_SYNC_COST); client: the client the
        sync handler sends with, whose rate-limit waits the worker is charged."""
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        cost = DEFAULT_SYNC_COST if cost is None else cost
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not cost >= 0:
            raise ValueError(f"cost must be a number of seconds >= 0, got {cost!r}")
        self.name = name
        self.sync_handler = sync_handler
        self.clock = clock
        self.cost = float(cost)
        self.client = client
        self.workers = workers
        self.trace = trace
        if queue is None:
            queue = RateLimitingQueue(clock, default_controller_rate_limiter(clock), name=name)
        self.queue: RateLimitingQueue[str] = queue
        self._idle = workers
        self.syncs = 0          # sync_handler calls
        self.errors = 0         # ... that failed and were requeued with backoff
        self.throttled = 0.0    # virtual seconds its workers waited for rate-limit tokens
        self._running = False

    # ------------------------------------------------------------------ wiring

    def enqueue(self, obj: Any) -> None:
        """Put obj's `namespace/name` key on the queue (deletion tombstones included)."""
        key = obj.key if hasattr(obj, "key") and not isinstance(obj, dict) else \
            meta_namespace_key_func(obj)
        self.queue.add(key)

    def handler(self) -> ResourceEventHandler:
        """An event handler that enqueues every add, update and delete."""
        return enqueue_handler(self.enqueue)

    def run(self) -> None:
        self._running = True
        self.queue.on_ready(self._wake)

    def stop(self) -> None:
        """A crash: the queue and everything in it are lost."""
        self._running = False
        self.queue.shut_down()

    # ------------------------------------------------------------------ workers

    def _wake(self) -> None:
        while self._running and self._idle > 0 and len(self.queue) > 0:
            self._idle -= 1
            if not self.process_next_work_item():
                self._idle += 1
                return

    def process_next_work_item(self) -> bool:
        """Take one key and sync it. The key stays "being processed" for `cost` virtual
        seconds: adding it again meanwhile queues it for after done(), never for a second
        worker at the same time."""
        key, shutdown = self.queue.get()
        if shutdown or key is None:
            return False
        self.syncs += 1
        until = self.client.throttled_until if self.client is not None else 0.0
        try:
            self.sync_handler(key)
        except Exception as err:  # a failed sync is retried later, never fatal to the loop
            self.errors += 1
            if self.trace is not None:
                reason = err.reason if isinstance(err, ApiError) else type(err).__name__
                self.trace.record(self.name, "sync-error", key, error=reason,
                                  requeues=self.queue.num_requeues(key) + 1)
            failed = True
        else:
            failed = False
        throttled = 0.0
        if self.client is not None and self.client.throttled_until > until:
            throttled = max(0.0, self.client.throttled_until - self.clock.now)
        self.throttled += throttled
        self.clock.call_later(self.cost + throttled, self._finish, key, failed)
        return True

    def _finish(self, key: str, failed: bool) -> None:
        if failed:
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)
        self.queue.done(key)
        self._idle += 1
        self._wake()


def enqueue_handler(enqueue: Callable[[Any], None]) -> ResourceEventHandler:
    return ResourceEventHandler(on_add=enqueue, on_update=lambda _old, new: enqueue(new),
                                on_delete=enqueue)
