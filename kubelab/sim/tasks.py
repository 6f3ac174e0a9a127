"""Goroutines on the simulated clock: a Future for a result that arrives later, and a Task that
runs a generator step by step.

The kubelet's code is sequential in Go: pull the image, then create the container, then start
it, each call blocking its goroutine. Written as a generator it reads the same way:

    ref = yield self.runtime.pull_image(image)   # a Future: the task sleeps until it is done
    yield 0.5                                    # a number: sleep that many virtual seconds

A Task resumes the generator when the Future completes (on the clock), so nothing ever blocks
and no thread is involved. When the kubelet crashes its tasks are simply never resumed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

from kubelab.sim.clock import Clock, Timer

__all__ = ["Future", "Step", "Task", "done"]

T = TypeVar("T")
Step = Generator[Any, Any, Any]  # yields Future | float; returns the task's result


class Future(Generic[T]):
    """A result (or an exception) that becomes available later."""

    def __init__(self) -> None:
        self.done = False
        self.result: T | None = None
        self.error: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []

    def set_result(self, result: T) -> None:
        self._finish(result, None)

    def set_error(self, error: BaseException) -> None:
        self._finish(None, error)

    def add_done_callback(self, fn: Callable[[Future[T]], None]) -> None:
        if self.done:
            fn(self)
        else:
            self._callbacks.append(fn)

    def _finish(self, result: T | None, error: BaseException | None) -> None:
        if self.done:
            return
        self.done, self.result, self.error = True, result, error
        callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn(self)


def done(result: T) -> Future[T]:
    """A Future that is already complete."""
    future: Future[T] = Future()
    future.set_result(result)
    return future


class Task:
    """Runs a generator to completion on the clock. `alive()` is asked before every step: once
    it says False (the component crashed) the generator is closed and never resumed.

    background: its sleeps are background timers (a loop that runs for ever, such as leader
    election's, is no pending work for run_until_idle). cancel() drops the sleep under way."""

    def __init__(self, clock: Clock, gen: Step, *, alive: Callable[[], bool] = lambda: True,
                 on_done: Callable[[Any, BaseException | None], None] | None = None,
                 background: bool = False) -> None:
        self.clock, self._gen, self._alive, self._on_done = clock, gen, alive, on_done
        self.background = background
        self.finished = False
        self._timer: Timer | None = None
        self._step(None, None)

    def cancel(self) -> None:
        """Stop now: the generator is closed and its pending sleep is cancelled."""
        if self._timer is not None:
            self._timer.cancel()
        if not self.finished:
            self.finished = True
            with contextlib.suppress(ValueError):  # cancelled from inside its own step: it
                self._gen.close()                   # stops at its next yield

    def _step(self, value: Any, error: BaseException | None) -> None:
        # A loop, not recursion: futures that are already done are fed back at once.
        while True:
            if self.finished:
                return
            if not self._alive():
                self.finished = True
                self._gen.close()
                return
            try:
                yielded = self._gen.throw(error) if error is not None else self._gen.send(value)
            except StopIteration as stop:
                self._finish(stop.value, None)
                return
            except Exception as err:  # the task failed: report it, do not crash the clock
                self._finish(None, err)
                return
            if self.finished:  # it cancelled itself during that step
                self._gen.close()
                return
            if isinstance(yielded, Future):
                if yielded.done:
                    value, error = yielded.result, yielded.error
                    continue
                yielded.add_done_callback(lambda f: self._step(f.result, f.error))
                return
            if isinstance(yielded, (int, float)):
                self._timer = self.clock.call_later(max(0.0, float(yielded)), self._step, None, None,
                                                    background=self.background)
                return
            self._gen.close()
            raise TypeError(f"a task may yield a Future or a number of seconds, not {yielded!r}")

    def _finish(self, result: Any, error: BaseException | None) -> None:
        self.finished = True
        if self._on_done is not None:
            self._on_done(result, error)
        elif error is not None:
            raise error
