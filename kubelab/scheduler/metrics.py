"""The scheduler's metrics, counted as plain numbers (kubernetes/kubernetes
pkg/scheduler/metrics/metrics.go; kubelab/cluster/prometheus.py writes them for /metrics).

* scheduler_schedule_attempts_total{result, profile} and
  scheduler_scheduling_attempt_duration_seconds{result, profile}: one per attempt, when its
  result is known: "scheduled" once the binding succeeded (metrics.PodScheduled in
  bindingCycle), "unschedulable" or "error" in handleSchedulingFailure; the duration runs from
  the start of the scheduling cycle, in virtual seconds (cycle_cost, bind_latency, PreBind's
  waits);
* scheduler_pod_scheduling_sli_duration_seconds{attempts}: for a bound pod, from its first
  entry into activeQ (QueuedPodInfo.InitialAttemptTimestamp);
* scheduler_queue_incoming_pods_total{queue, event}: pods moved into activeQ, backoffQ or
  unschedulablePods, and by which event;
* scheduler_pending_pods{queue} is read off the queue when scraped (pending_pods()).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubelab.sim.histogram import Histogram, exponential_buckets

if TYPE_CHECKING:
    from kubelab.scheduler.scheduling_queue import PriorityQueue

__all__ = ["ATTEMPT_BUCKETS", "SLI_BUCKETS", "SchedulerMetrics", "pending_pods"]

ATTEMPT_BUCKETS = exponential_buckets(0.001, 2, 15)  # 1 ms .. ~16 s
SLI_BUCKETS = exponential_buckets(0.01, 2, 20)       # 10 ms .. ~88 min
QUEUE_LABELS = {"activeQ": "active", "backoffQ": "backoff", "unschedulablePods": "unschedulable"}


@dataclass
class SchedulerMetrics:
    attempts: dict[tuple[str, str], Histogram] = field(default_factory=dict)  # (result, profile)
    sli: dict[str, Histogram] = field(default_factory=dict)                   # attempts label
    incoming: dict[tuple[str, str], int] = field(default_factory=dict)        # (queue, event)

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """metrics.PodScheduled / PodUnschedulable / PodScheduleError."""
        self.attempts.setdefault((result, profile), Histogram(ATTEMPT_BUCKETS)).observe(seconds)

    def scheduled_sli(self, attempts: int, seconds: float) -> None:
        """PodSchedulingSLIDuration, labelled as getAttemptsLabel does (15 and more: "15+")."""
        label = "15+" if attempts >= 15 else str(attempts)
        self.sli.setdefault(label, Histogram(SLI_BUCKETS)).observe(seconds)

    def incoming_pod(self, queue: str, event: str) -> None:
        key = (QUEUE_LABELS.get(queue, queue), event)
        self.incoming[key] = self.incoming.get(key, 0) + 1


def pending_pods(queue: PriorityQueue) -> dict[str, int]:
    """scheduler_pending_pods: kubelab has no scheduling gates, so "gated" is always 0."""
    return {"active": len(queue.active_q), "backoff": len(queue.backoff_q),
            "unschedulable": len(queue.unschedulable_pods), "gated": 0}
