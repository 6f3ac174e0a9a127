"""BoundedFrequencyRunner: run a function when asked, but no more often than min_interval
(after a burst of burst_runs) and no less often than max_interval (pkg/util/async/
bounded_frequency_runner.go; kube-proxy is its user, so kubelab keeps it beside kube-proxy).

Upstream's Loop goroutine waits on a timer and a "run" channel, and asks a token-bucket limiter
(qps 1/min_interval, burst burst_runs) before each run. kubelab's is the same limiter on the
simulated clock: run() schedules the next run as soon as a token is there (a run already
scheduled earlier is not moved), and each run re-arms the max_interval timer.

Departures: no RetryAfter; the max_interval timer is a background timer (it is no pending work
for run_until_idle), and its firing asks for a run through the limiter like any other request.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.sim.clock import Clock, Timer

__all__ = ["BoundedFrequencyRunner"]


class BoundedFrequencyRunner:
    """NewBoundedFrequencyRunner(name, fn, minInterval, maxInterval, burstRuns)."""

    def __init__(self, clock: Clock, name: str, fn: Callable[[], None], min_interval: float,
                 max_interval: float, burst_runs: int) -> None:
        if min_interval > max_interval:
            raise ValueError(f"{name}: min_interval ({min_interval}) must be <= max_interval "
                             f"({max_interval})")
        self.clock, self.name, self.fn = clock, name, fn
        self.min_interval, self.max_interval, self.burst_runs = min_interval, max_interval, burst_runs
        self.running = False
        self._tokens = float(burst_runs)  # the limiter's bucket, full at the start
        self._tokens_at = 0.0
        self._timer: Timer | None = None     # the next run asked for
        self._due: float | None = None       # ... and when it happens
        self._periodic: Timer | None = None  # the max_interval timer

    def loop(self) -> None:
        """Loop: start serving run() requests (the bucket, full when made, refills from now)."""
        self.running = True
        self._tokens_at = self.clock.now

    def stop(self) -> None:
        """Loop's stop channel closed: no run happens any more."""
        self.running = False
        for timer in (self._timer, self._periodic):
            if timer is not None:
                timer.cancel()
        self._timer = self._periodic = self._due = None

    def run(self) -> None:
        """Run: ask for a run as soon as the limiter allows."""
        if not self.running:
            return
        self._refill()
        if self._tokens >= 1:
            self._schedule(self.clock.now)
        else:
            self._schedule(self.clock.now + (1 - self._tokens) * self.min_interval)

    def _refill(self) -> None:
        now = self.clock.now
        self._tokens = min(self.burst_runs, self._tokens + (now - self._tokens_at) / self.min_interval)
        self._tokens_at = now

    def _schedule(self, at: float) -> None:
        if self._due is not None and self._due <= at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._due = at
        self._timer = self.clock.call_later(at - self.clock.now, self._try_run)

    def _try_run(self) -> None:
        """tryRun: take a token, run fn, and re-arm the max_interval timer."""
        self._timer, self._due = None, None
        if not self.running:
            return
        self._refill()
        self._tokens -= 1
        self.fn()
        if self._periodic is not None:
            self._periodic.cancel()
        self._periodic = self.clock.call_later(self.max_interval, self.run, background=True)
