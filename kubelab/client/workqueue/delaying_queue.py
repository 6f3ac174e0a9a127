"""A work queue that can add a key later (client-go util/workqueue/delaying_queue.go).

client-go runs a waitingLoop goroutine over a heap of (readyAt, item), woken by a timer for
the earliest entry and a 10-second heartbeat "just in case". On the simulated clock each
waiting key gets one clock timer instead: the clock's own heap orders them, and no heartbeat is
needed because virtual timers never fire late.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.client.workqueue.queue import Queue, T
from kubelab.sim.clock import Clock, Timer

__all__ = ["DelayingQueue"]


class DelayingQueue(Queue[T]):
    """workqueue.TypedDelayingInterface: a Queue with add_after(item, duration).

    Adds a `retries` counter (workqueue_retries_total): every add_after() accepted while the
    queue is running, delayed or not.
    """

    def __init__(self, clock: Clock, name: str = "") -> None:
        super().__init__(clock, name)
        # Keys waiting for their time (upstream's waitingEntryByData), one timer each. A key
        # waits at most once: the earliest readyAt wins.
        self._waiting: dict[T, Timer] = {}
        self.retries = 0

    def add_after(self, item: T, duration: float) -> None:
        """Add item after `duration` virtual seconds; duration <= 0 adds it now.

        If item is already waiting, the earlier of the two times is kept.
        """
        if self.shutting_down():
            return
        self.retries += 1
        if duration <= 0:
            self.add(item)
            return
        ready_at = self._clock.now + duration
        waiting = self._waiting.get(item)
        if waiting is not None:
            if waiting.when <= ready_at:
                return
            waiting.cancel()
        self._waiting[item] = self._clock.call_at(ready_at, self._ready, item)

    def shut_down(self) -> None:
        """As Queue.shut_down; keys still waiting for their time are dropped."""
        super().shut_down()
        self._stop_waiting()

    def shut_down_with_drain(self, on_drained: Callable[[], None] | None = None) -> None:
        super().shut_down_with_drain(on_drained)
        self._stop_waiting()

    def _ready(self, item: T) -> None:
        del self._waiting[item]
        self.add(item)

    def _stop_waiting(self) -> None:
        for timer in self._waiting.values():
            timer.cancel()
        self._waiting.clear()
