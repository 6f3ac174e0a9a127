"""KubeletConfiguration: the knobs, with upstream's names and defaults.

Defaults from pkg/kubelet/apis/config/v1beta1/defaults.go (SetDefaults_KubeletConfiguration) and
pkg/kubelet/kubelet.go (backOffPeriod, MaxContainerBackOff), pod_workers.go (backOffPeriod of a
failed sync) and kuberuntime (minimumGracePeriodInSeconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["KubeletConfiguration"]


@dataclass
class KubeletConfiguration:
    node_status_update_frequency: float = 10.0   # compute node status this often...
    node_status_report_frequency: float = 300.0  # ...but post it only on change or every 5 min
    node_lease_duration_seconds: int = 40        # the Lease is renewed every 1/4 of this: 10 s
    sync_frequency: float = 60.0                 # resync of a pod that synced fine
    housekeeping_interval: float = 2.0           # look for pods to clean up
    container_backoff: tuple[float, float] = (10.0, 300.0)  # CrashLoopBackOff: 10 s .. 5 min
    image_backoff: tuple[float, float] = (10.0, 300.0)      # ImagePullBackOff: 10 s .. 5 min
    pod_worker_backoff: float = 10.0             # retry of a sync that failed for another reason
    minimum_grace_period: float = 2.0            # a container always gets this long to stop
    serialize_image_pulls: bool = True
    max_pods: int = 110
    register_with_taints: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("node_status_update_frequency", "node_status_report_frequency", "sync_frequency",
                     "housekeeping_interval", "pod_worker_backoff"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.node_lease_duration_seconds <= 0:
            raise ValueError("nodeLeaseDurationSeconds must be greater than 0, got "
                             f"{self.node_lease_duration_seconds}")

    @property
    def lease_renew_interval(self) -> float:
        """nodelease.NewController: renewInterval = leaseDuration * 0.25."""
        return self.node_lease_duration_seconds * 0.25
