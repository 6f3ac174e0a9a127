"""The work queue every controller pulls keys from (client-go util/workqueue/queue.go).

Three promises make it the heart of a controller:

* a key is never queued twice: adding a key that is already waiting does nothing (the `dirty`
  set), so a burst of 100 updates to one object becomes one reconcile;
* a key is never handed to two workers at once: a key added while it is being processed waits
  (the `processing` set) and is queued again, once, when the worker calls done();
* after shut_down(), add() is ignored and get() reports shutdown once the queue is empty.

Go's Get() blocks a worker goroutine until there is an item. kubelab has no goroutines: get()
returns at once, (None, False) when there is nothing to do. A worker that wants to be woken
registers on_ready(callback); see there.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from kubelab.sim.clock import Clock, Timer
from kubelab.sim.histogram import Histogram, exponential_buckets

__all__ = ["WORKQUEUE_BUCKETS", "Queue"]

# component-base/metrics/prometheus/workqueue/metrics.go: ExponentialBuckets(10e-7, 10, 10),
# 1 microsecond to 1000 seconds.
WORKQUEUE_BUCKETS = exponential_buckets(10e-7, 10, 10)

T = TypeVar("T", bound=Hashable)


class Queue(Generic[T]):
    """workqueue.Typed: a FIFO of keys with the dedupe and one-worker-per-key promises.

    The clock wakes workers (on_ready) and times the metrics. client-go's queueMetrics
    (util/workqueue/metrics.go), kept as plain numbers for /metrics (the controller manager's
    workqueue_* families, label name=the queue's name; an unnamed queue is not exposed):

    * adds: keys that became dirty (workqueue_adds_total; an add of a key that is already
      waiting is deduplicated and not counted);
    * depth(): keys added and not yet handed out (workqueue_depth: the dirty keys, so a key
      added again while it is processed counts);
    * queue_duration, work_duration: histograms of the virtual seconds from a key's add to its
      get, and from get to done (workqueue_queue_duration_seconds, ..._work_duration_seconds);
    * unfinished_work_seconds(), longest_running_processor_seconds(): the work in progress;
    * gets: keys handed to a worker by get(); dones: done() calls for a key being processed.
    """

    def __init__(self, clock: Clock, name: str = "") -> None:
        self.name = name
        self._clock = clock
        # The order in which keys are handed out. Every key in it is in _dirty and not in
        # _processing, and it holds no duplicates.
        self._queue: deque[T] = deque()
        # Every key that needs processing: queued, or added again while being processed.
        self._dirty: set[T] = set()
        # Keys a worker holds between get() and done(). A key may be in _dirty at the same time.
        self._processing: set[T] = set()
        self._shutting_down = False
        self._drain = False
        self._ready_callbacks: list[Callable[[], None]] = []
        self._wake: Timer | None = None  # the pending wake-up, so a burst schedules only one
        self._drained_callbacks: list[Callable[[], None]] = []
        self.adds = 0
        self.gets = 0
        self.dones = 0
        self.queue_duration = Histogram(WORKQUEUE_BUCKETS)
        self.work_duration = Histogram(WORKQUEUE_BUCKETS)
        self._added_at: dict[T, float] = {}       # queueMetrics.addTimes
        self._started_at: dict[T, float] = {}     # queueMetrics.processingStartTimes

    def add(self, item: T) -> None:
        """Mark item as needing processing. Ignored once the queue is shutting down."""
        if self._shutting_down or item in self._dirty:
            return
        self.adds += 1
        self._added_at.setdefault(item, self._clock.now)
        self._dirty.add(item)
        if item in self._processing:
            return  # done() will queue it again
        self._queue.append(item)
        self._signal()

    def __len__(self) -> int:
        """Queue length (client-go's Len): keys waiting for a worker, not those in processing."""
        return len(self._queue)

    def get(self) -> tuple[T | None, bool]:
        """Hand out the next key: (item, False); you must call done(item) when finished.

        (None, True) means the queue is shut down and empty: the worker should stop.
        (None, False) means there is nothing to do now (Go's Get() would block here).
        """
        if not self._queue:
            return None, self._shutting_down
        item = self._queue.popleft()
        self.gets += 1
        now = self._clock.now
        added = self._added_at.pop(item, None)
        if added is not None:
            self.queue_duration.observe(now - added)
        self._started_at[item] = now
        self._processing.add(item)
        self._dirty.discard(item)
        return item, False

    def done(self, item: T) -> None:
        """Finish processing item. If it was added again meanwhile, it is queued again now.

        Calling done() for a key nobody is processing changes nothing (client-go would queue a
        dirty key a second time; we keep the no-duplicates promise instead).
        """
        if item not in self._processing:
            return
        self.dones += 1
        started = self._started_at.pop(item, None)
        if started is not None:
            self.work_duration.observe(self._clock.now - started)
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._signal()
        elif not self._processing and self._drain:
            self._drained()

    def shut_down(self) -> None:
        """Ignore new items; workers get what is queued, then (None, True).

        Also stops a shut_down_with_drain() from waiting, as in client-go.
        """
        self._drain = False
        self._shutting_down = True
        self._signal()
        self._drained()

    def shut_down_with_drain(self, on_drained: Callable[[], None] | None = None) -> None:
        """shut_down(), then wait until every key handed out has been done().

        Go's ShutDownWithDrain blocks; ours returns at once and calls on_drained (through the
        clock) when the processing set becomes empty, or when shut_down() forces the end.
        """
        if on_drained is not None:
            self._drained_callbacks.append(on_drained)
        self._drain = True
        self._shutting_down = True
        self._signal()
        if not self._processing:
            self._drained()

    def depth(self) -> int:
        """workqueue_depth: keys added and not handed out yet (upstream counts the dirty set)."""
        return len(self._dirty)

    def unfinished_work_seconds(self) -> float:
        """workqueue_unfinished_work_seconds: the seconds every key being processed has taken
        so far (upstream updates it every 500 ms; this one is exact when read)."""
        now = self._clock.now
        return sum(now - started for started in self._started_at.values())

    def longest_running_processor_seconds(self) -> float:
        """workqueue_longest_running_processor_seconds."""
        now = self._clock.now
        return max((now - started for started in self._started_at.values()), default=0.0)

    def shutting_down(self) -> bool:
        return self._shutting_down

    def on_ready(self, callback: Callable[[], None]) -> None:
        """Wake callback() when get() may have something new: an item or the shutdown signal.

        This replaces Go's condition variable. The callback never runs inside add() or done():
        it is scheduled with clock.call_later(0), and a burst of adds schedules a single
        wake-up. Like a woken goroutine, the worker should call get() until it returns
        (None, False) or reports shutdown; an extra wake-up with nothing to do is harmless.
        """
        self._ready_callbacks.append(callback)
        if self._queue or self._shutting_down:
            self._signal()

    def _signal(self) -> None:
        if self._ready_callbacks and self._wake is None:
            self._wake = self._clock.call_later(0, self._wake_up)

    def _wake_up(self) -> None:
        self._wake = None
        if self._queue or self._shutting_down:
            for callback in list(self._ready_callbacks):
                callback()

    def _drained(self) -> None:
        callbacks, self._drained_callbacks = self._drained_callbacks, []
        for callback in callbacks:
            self._clock.call_later(0, callback)

    def __repr__(self) -> str:
        name = f" {self.name!r}" if self.name else ""
        return (f"<{type(self).__name__}{name} len={len(self._queue)} "
                f"processing={len(self._processing)} shutting_down={self._shutting_down}>")
