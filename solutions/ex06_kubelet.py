"""Exercises for notebook 06 · The kubelet: pods on a node, the container runtime, probes.

Two pieces of the kubelet. The grader puts yours inside a running kubelet: your Backoff decides
when the image manager may pull again while the registry refuses an expired credential for an
hour; your ReadinessProbe keeps the count of every readiness probe, and so decides when pods
turn Ready and NotReady. Each pod's story (pulls, events, Ready transitions) must be exactly
the one kubelab's own kubelet tells in the same seeded cluster.

    kubelab grade 6                                          # both exercises
    from kubelab.grading import grade; grade("6.1")

Do not import kubelab.kubelet here: writing these is the exercise.
"""

from __future__ import annotations

from typing import Any

from kubelab.sim.clock import Clock

EPSILON = 1e-6  # seconds: how far from a window's end a time still counts as at its end


class Backoff:
    """Exercise 6.1: Image pull back-off.

    Notebook 06_kubelet, section "The 15-hour ImagePullBackOff". Medium, 10 points.

    Per-key exponential back-off (client-go util/flowcontrol/backoff.go), as the kubelet's
    image manager uses it: one key per (pod, image), 10 s doubling to 300 s, no jitter.

    - next(key, event_time): a failure. If the key has no entry, or its entry has expired
      (event_time - its last update > 2 * maximum), the window is `initial`; otherwise it
      doubles, up to `maximum`. Either way the entry's last update is now (clock.now).
    - is_in_back_off_since_update(key, event_time) -> bool: True when the key has an entry
      that has not expired (as above) and event_time - last update < window - EPSILON. The
      kubelet asks this before pulling: True means "do not pull, report ImagePullBackOff".
      (Virtual times are floats, where Go counts integer nanoseconds: a retry timed for the
      very end of the window may land a hair before it. EPSILON forgives that.)
    - get(key) -> float: the current window in seconds (0.0 without an entry).
    - gc(): forget every entry that has expired (clock.now - last update > 2 * maximum).
    """

    def __init__(self, clock: Clock, initial: float = 10.0, maximum: float = 300.0) -> None:
        self.clock = clock
        self.initial = initial
        self.maximum = maximum
        ### BEGIN SOLUTION
        self._entries: dict[str, tuple[float, float]] = {}  # key -> (window, last update)
        ### END SOLUTION

    def next(self, key: str, event_time: float) -> None:
        ### BEGIN SOLUTION
        entry = self._entries.get(key)
        if entry is None or event_time - entry[1] > 2 * self.maximum:
            window = self.initial
        else:
            window = min(entry[0] * 2, self.maximum)
        self._entries[key] = (window, self.clock.now)
        ### END SOLUTION

    def is_in_back_off_since_update(self, key: str, event_time: float) -> bool:
        ### BEGIN SOLUTION
        entry = self._entries.get(key)
        if entry is None or event_time - entry[1] > 2 * self.maximum:
            return False
        return event_time - entry[1] < entry[0] - EPSILON
        ### END SOLUTION

    def get(self, key: str) -> float:
        ### BEGIN SOLUTION
        entry = self._entries.get(key)
        return entry[0] if entry else 0.0
        ### END SOLUTION

    def gc(self) -> None:
        ### BEGIN SOLUTION
        now = self.clock.now
        for key in [k for k, (_, last) in self._entries.items() if now - last > 2 * self.maximum]:
            del self._entries[key]
        ### END SOLUTION


class ReadinessProbe:
    """Exercise 6.2: A readiness probe.

    Notebook 06_kubelet, section "Liveness vs readiness". Medium, 10 points.

    The bookkeeping of the kubelet's prober worker for one container's readinessProbe
    (pkg/kubelet/prober/worker.go doProbe), built with the probe's settings as the API server
    defaulted them (initialDelaySeconds 0, periodSeconds 10, successThreshold 1,
    failureThreshold 3). The kubelet calls it every periodSeconds.

    - Until a probe says otherwise the result is "Failure": a new container is not ready.
    - due(running_for) -> bool: may a probe run now, running_for seconds after the container
      started? Not while int(running_for) < initialDelaySeconds.
    - observe(ok) -> str: the outcome of one probe. Count outcomes in a row: the result becomes
      "Success" after successThreshold successes in a row and "Failure" after
      failureThreshold failures in a row; until then the previous result stands. Return the
      result ("Success" or "Failure").
    """

    def __init__(self, initial_delay_seconds: int, period_seconds: int, success_threshold: int,
                 failure_threshold: int) -> None:
        self.initial_delay_seconds = initial_delay_seconds
        self.period_seconds = period_seconds
        self.success_threshold = success_threshold
        self.failure_threshold = failure_threshold
        self.result = "Failure"
        ### BEGIN SOLUTION
        self._last: bool | None = None
        self._run = 0
        ### END SOLUTION

    def due(self, running_for: float) -> bool:
        ### BEGIN SOLUTION
        return int(running_for) >= self.initial_delay_seconds
        ### END SOLUTION

    def observe(self, ok: bool) -> str:
        ### BEGIN SOLUTION
        if ok == self._last:
            self._run += 1
        else:
            self._last, self._run = ok, 1
        if self._run >= (self.success_threshold if ok else self.failure_threshold):
            self.result = "Success" if ok else "Failure"
        return self.result
        ### END SOLUTION


### BEGIN HIDDEN TESTS
def _self_check(_: Any = None) -> None:  # an instructor's quick look
    probe = ReadinessProbe(0, 10, 2, 2)
    assert [probe.observe(ok) for ok in (True, True, False, True, False, False)] == \
        ["Failure", "Success", "Success", "Success", "Success", "Failure"]
### END HIDDEN TESTS
