"""The one clock that drives a simulated cluster.

Go's goroutines and timers become callbacks on a heap of (time, priority, seq, callback), in the
shape of simpy's Environment. Nothing in kubelab reads the wall clock: virtual time only moves
when the clock steps, so the same seed and the same fault schedule always give the same story.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Clock", "LivelockError", "RealTimeClock", "Timer"]


class LivelockError(RuntimeError):
    """Something keeps rescheduling itself: run_until_idle saw more steps than its guard allows,
    or virtual time stood still for more than the clock's steps_per_instant."""


# How many callbacks may run at one virtual instant before the clock calls it a livelock. A
# callback that re-arms itself with a delay too small to move a float clock (1e-15 s at
# t = 100 s) would otherwise spin forever, and c.run() would never return. The busiest honest
# instant measured is far below this: about 1,400 callbacks in the density run (1,000 nodes
# x 30 pods, every Deployment applied at once).
STEPS_PER_INSTANT = 200_000


def _name(callback: Callable[..., Any]) -> str:
    module = getattr(callback, "__module__", None)
    qualname = getattr(callback, "__qualname__", None)
    return f"{module}.{qualname}" if module and qualname else repr(callback)


@dataclass(eq=False, slots=True)
class Timer:
    """A scheduled callback; call cancel() to stop it. Timers run in (when, priority, seq)
    order: seq keeps insertion order stable."""

    when: float
    priority: int
    seq: int
    callback: Callable[..., Any]
    args: tuple[Any, ...] = ()
    cancelled: bool = False
    # Periodic timers (background loops) do not count as pending work for run_until_idle.
    background: bool = False
    # The clock that still holds this timer; None once it has run or been cancelled.
    _clock: Clock | None = field(default=None, repr=False)

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            if self._clock is not None:
                self._clock._forget(self)
                self._clock = None


class Clock:
    """Virtual time in seconds, starting at 0.0."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        # Entries are (when, priority, seq, timer): plain tuples, so heapq compares them in C,
        # and seq is unique, so two timers are never compared themselves.
        self._heap: list[tuple[float, int, int, Timer]] = []
        self._seq = 0
        self._live = 0        # timers scheduled and neither run nor cancelled
        self._foreground = 0  # ... of which not background
        self.steps_per_instant = STEPS_PER_INSTANT
        self._steps_here = 0  # callbacks run since virtual time last moved

    @property
    def now(self) -> float:
        return self._now

    def call_at(
        self,
        when: float,
        callback: Callable[..., Any],
        *args: Any,
        priority: int = 0,
        background: bool = False,
    ) -> Timer:
        """Run callback(*args) at virtual time `when` (never in the past)."""
        if when != when:  # NaN would corrupt the heap order
            raise ValueError("call_at: time must be a number, got NaN")
        if when < self._now:
            when = self._now
        self._seq += 1
        timer = Timer(when, priority, self._seq, callback, args, False, background, self)
        heapq.heappush(self._heap, (when, priority, self._seq, timer))
        self._live += 1
        if not background:
            self._foreground += 1
        return timer

    def call_later(
        self,
        delay: float,
        callback: Callable[..., Any],
        *args: Any,
        priority: int = 0,
        background: bool = False,
    ) -> Timer:
        """Run callback(*args) `delay` virtual seconds from now."""
        if delay < 0:
            raise ValueError(f"call_later: delay must be >= 0, got {delay}")
        return self.call_at(self._now + delay, callback, *args, priority=priority,
                            background=background)

    def cancel(self, timer: Timer) -> None:
        timer.cancel()

    def peek(self) -> float | None:
        """Time of the next live timer, or None when nothing is scheduled."""
        self._drop_cancelled()
        return self._heap[0][0] if self._heap else None

    def pending(self, *, include_background: bool = True) -> int:
        """How many timers are waiting to run (not counting cancelled ones)."""
        return self._live if include_background else self._foreground

    def step(self) -> bool:
        """Run the next callback. Returns False when there is nothing left to run.

        Raises LivelockError, leaving the callback in place, when steps_per_instant callbacks
        have run since virtual time last moved and the next one is due at the same instant.
        """
        self._drop_cancelled()
        if not self._heap:
            return False
        if self._heap[0][0] <= self._now and self._steps_here >= self.steps_per_instant:
            raise LivelockError(
                f"virtual time stands still: {self._steps_here} callbacks ran at t={self._now!r}s "
                f"and {_name(self._heap[0][3].callback)} is due at the same instant again "
                "(a callback that keeps rescheduling itself with a delay too small to move the "
                "clock?)")
        timer = heapq.heappop(self._heap)[3]
        self._forget(timer)
        timer._clock = None
        self._advance_to(timer.when)
        self._steps_here += 1
        timer.callback(*timer.args)
        return True

    def run(self, until: float | None = None) -> None:
        """Run callbacks up to and including virtual time `until`, then set now to `until`.

        With until=None, run until the heap is empty (which never happens once periodic loops
        such as heartbeats exist: use run_until_idle or give a time).
        """
        if until is not None and until < self._now:
            raise ValueError(f"run(until={until}) is in the past (now={self._now})")
        while True:
            nxt = self.peek()
            if nxt is None or (until is not None and nxt > until):
                break
            self.step()
        if until is not None:
            self._advance_to(until)

    def run_until_idle(self, max_steps: int = 100_000) -> int:
        """Run until only background timers remain. Returns the number of steps taken.

        Raises LivelockError after max_steps: a callback that keeps scheduling foreground work
        (a controller that requeues forever, say) would otherwise hang the notebook.
        """
        steps = 0
        while self._foreground:
            if steps >= max_steps:
                raise LivelockError(
                    f"run_until_idle: still busy after {max_steps} steps at t={self._now:.3f}s; "
                    "something keeps rescheduling itself (a hot loop or a requeue without backoff?)"
                )
            self.step()
            steps += 1
        return steps

    def _forget(self, timer: Timer) -> None:
        """timer leaves the live count (it is about to run, or it was cancelled)."""
        self._live -= 1
        if not timer.background:
            self._foreground -= 1

    def _advance_to(self, when: float) -> None:
        if when > self._now:
            self._now, self._steps_here = when, 0

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0][3].cancelled:
            heapq.heappop(self._heap)


class RealTimeClock(Clock):
    """A clock for live widgets: stepping waits until the wall clock catches up.

    `speed` is virtual seconds per real second. Only how step() waits changes: the order of
    callbacks, and so the trace, is the same as on a plain Clock.
    """

    def __init__(
        self,
        start: float = 0.0,
        speed: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(start)
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.speed = speed
        self._sleep = sleep
        self._monotonic = monotonic
        self._anchor: tuple[float, float] | None = None  # (real, virtual) when we started waiting

    def _advance_to(self, when: float) -> None:
        if when > self._now:
            real_now = self._monotonic()
            if self._anchor is None:
                self._anchor = (real_now, self._now)
            real0, virt0 = self._anchor
            due = real0 + (when - virt0) / self.speed
            if due > real_now:
                self._sleep(due - real_now)
        super()._advance_to(when)

    def resync(self) -> None:
        """Forget the anchor (after a pause), so the next step does not try to catch up."""
        self._anchor = None

    def behind(self) -> float:
        """Real seconds the virtual time lags the wall clock's pace (0 before the first wait).
        A caller that paused (a notebook between two cells) resyncs when this is large."""
        if self._anchor is None:
            return 0.0
        real0, virt0 = self._anchor
        return max(0.0, (self._monotonic() - real0) - (self._now - virt0) / self.speed)
