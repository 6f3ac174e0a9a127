"""Client-side rate limits: the token bucket every client-go client waits on before it sends.

Follows client-go util/flowcontrol/throttle.go (NewTokenBucketRateLimiter over
golang.org/x/time/rate.Limiter), rest/config.go (DefaultQPS 5, DefaultBurst 10; a QPS below 0
means no limiter) and rest/request.go tryThrottleWithInfo: every request, watches included,
first waits for a token; a wait longer than longThrottleLatency (50 ms) is logged at -v=3, one
longer than extraLongThrottleLatency (1 s) through a throttled logger (at most once a second)
as

    Waited for 1.466666666s due to client-side throttling, not priority and fairness,
    request: POST:https://10.0.0.1:6443/api/v1/namespaces/default/pods

The component configs set each client's qps and burst (ClientConnectionConfiguration in
component-base's config: kube-scheduler's clientConnection and kube-proxy's, kubelet's
kubeAPIQPS/kubeAPIBurst, kube-controller-manager's --kube-api-qps/--kube-api-burst);
kubelab/cluster/components.py holds upstream's defaults.

The wait is virtual time. Wait() is Reserve().Delay() and a sleep: the token is taken at once
(the bucket may go into debt), and the caller is told how long it would have slept. A client
has no goroutine to put to sleep, so the request is sent at once and its caller charges the
wait on the clock: a controller's worker stays busy for it (kubelab/client/controller_loop.py),
as a Go worker blocked in Wait does (docs/ARCHITECTURE.md, departures).
"""

from __future__ import annotations

from dataclasses import dataclass

from kubelab.client.rate import Limiter
from kubelab.sim.clock import Clock

__all__ = ["DEFAULT_BURST", "DEFAULT_QPS", "EXTRA_LONG_THROTTLE_LATENCY", "LONG_THROTTLE_LATENCY",
           "ClientConnection", "TokenBucketRateLimiter", "go_duration", "throttle_message"]

DEFAULT_QPS = 5.0    # rest.DefaultQPS
DEFAULT_BURST = 10   # rest.DefaultBurst
LONG_THROTTLE_LATENCY = 0.05       # logged at -v=3
EXTRA_LONG_THROTTLE_LATENCY = 1.0  # logged at the default verbosity, at most once a second
THROTTLED_LOG_INTERVAL = 1.0       # globalThrottledLogger's minLogInterval


@dataclass(frozen=True)
class ClientConnection:
    """ClientConnectionConfiguration's qps and burst. qps 0 takes client-go's default (5), burst
    0 its 10; a qps below 0 turns the limiter off (rest.RESTClientFor)."""

    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST

    def __post_init__(self) -> None:
        for name, value in (("qps", self.qps), ("burst", self.burst)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
        if not isinstance(self.burst, int) or self.burst < 0:
            raise ValueError(f"burst must be an integer >= 0, got {self.burst!r}")

    def rate_limiter(self, clock: Clock) -> TokenBucketRateLimiter | None:
        qps = self.qps or DEFAULT_QPS
        if qps < 0:
            return None
        return TokenBucketRateLimiter(clock, qps, self.burst or DEFAULT_BURST)


class TokenBucketRateLimiter:
    """flowcontrol.NewTokenBucketRateLimiter(qps, burst): full at first, `qps` tokens a second
    up to `burst`. wait() takes a token and returns the virtual seconds the caller waits."""

    def __init__(self, clock: Clock, qps: float, burst: int) -> None:
        self.clock = clock
        self._bucket = Limiter(clock, qps, burst)
        self.qps, self.burst = qps, burst
        self.waits = 0        # requests that had to wait
        self.waited = 0.0     # the seconds they waited, in all
        self.longest = 0.0    # the longest single wait

    def wait(self) -> float:
        delay = self._bucket.reserve()
        if delay > 0:
            self.waits += 1
            self.waited += delay
            self.longest = max(self.longest, delay)
        return delay

    def tokens(self) -> float:
        """Tokens in the bucket now (below 0: reservations not yet covered)."""
        return self._bucket.tokens()

    def __repr__(self) -> str:
        return f"<TokenBucketRateLimiter qps={self.qps:g} burst={self.burst}>"


class ThrottledLogger:
    """rest/request.go's throttledLogger: says a long wait at most once per interval."""

    def __init__(self, clock: Clock, interval: float = THROTTLED_LOG_INTERVAL) -> None:
        self.clock, self.interval = clock, interval
        self._last: float | None = None

    def attempt_to_log(self) -> bool:
        now = self.clock.now
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        return True


def throttle_message(wait: float, verb: str, url: str) -> str:
    """tryThrottleWithInfo's message for a request that waited `wait` seconds."""
    return (f"Waited for {go_duration(wait)} due to client-side throttling, not priority and "
            f"fairness, request: {verb}:{url}")


def go_duration(seconds: float) -> str:
    """Go's time.Duration.String, to the nanosecond: 52.5ms, 1.466666666s, 1m3.5s."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size or unit == "ns":
                whole, frac = divmod(ns, size)
                digits = len(str(size)) - 1
                text = f"{whole}.{frac:0{digits}d}".rstrip("0").rstrip(".") if digits else str(whole)
                return f"{text}{unit}"
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    whole, frac = divmod(rest, 1_000_000_000)
    secs = f"{whole}.{frac:09d}".rstrip("0").rstrip(".")
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"
