"""A histogram of plain numbers: what a Prometheus histogram keeps, with no prometheus_client.

The components count their metrics as plain numbers (kubelab/cluster/prometheus.py writes them
in Prometheus' text format), so this sits under them, beside the clock. Observations are
virtual seconds (or counts), never wall-clock time. exponential_buckets is component-base's
metrics.ExponentialBuckets (k8s.io/component-base/metrics/buckets.go).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

__all__ = ["Histogram", "exponential_buckets"]


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """count upper bounds: start, start*factor, start*factor*factor, ... (multiplied in turn,
    as Go does, so the bounds print as upstream's)."""
    bounds = []
    for _ in range(count):
        bounds.append(start)
        start *= factor
    return tuple(bounds)


@dataclass
class Histogram:
    """Observations per bucket (le upper bound, inclusive), their count and their sum."""

    bounds: tuple[float, ...]
    buckets: list[int] = field(default_factory=list)  # not cumulative: cumulated when written
    count: int = 0
    sum: float = 0.0

    def __post_init__(self) -> None:
        if not self.buckets:
            self.buckets = [0] * len(self.bounds)

    def observe(self, value: float) -> None:
        at = bisect.bisect_left(self.bounds, value)
        if at < len(self.buckets):
            self.buckets[at] += 1
        self.count += 1
        self.sum += value
