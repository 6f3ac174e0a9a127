"""kube-scheduler: the Scheduler component and the scheduling framework it runs (notebook 04).

    from kubelab.scheduler import Scheduler, load_config
    Cluster(replace={"scheduler": lambda ctx: Scheduler(ctx, config=load_config(yaml_text), explain=True)})

Imports kubelab.api, kubelab.sim and kubelab.client only (docs/ARCHITECTURE.md).
"""

from kubelab.scheduler.cache import Cache, CacheError
from kubelab.scheduler.config import (
    DEFAULT_SCHEDULER_NAME,
    Profile,
    SchedulerConfigError,
    SchedulerConfiguration,
    default_profile,
    load_config,
)
from kubelab.scheduler.events import ActionType, ClusterEvent, QueueingHint
from kubelab.scheduler.explain import Explanation
from kubelab.scheduler.framework import Framework
from kubelab.scheduler.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, CycleState, NodeScore, Status
from kubelab.scheduler.schedule_one import (
    NoNodesAvailableError,
    ScheduleResult,
    SchedulingError,
    num_feasible_nodes_to_find,
)
from kubelab.scheduler.scheduler import DEFAULT_CYCLE_COST, Scheduler
from kubelab.scheduler.scheduling_queue import PriorityQueue, QueuedPodInfo
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import FitError, NodeInfo, PodInfo, Resource

__all__ = [
    "DEFAULT_CYCLE_COST",
    "DEFAULT_SCHEDULER_NAME",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "ActionType",
    "Cache",
    "CacheError",
    "ClusterEvent",
    "Code",
    "CycleState",
    "Explanation",
    "FitError",
    "Framework",
    "NoNodesAvailableError",
    "NodeInfo",
    "NodeScore",
    "PodInfo",
    "PriorityQueue",
    "Profile",
    "QueuedPodInfo",
    "QueueingHint",
    "Resource",
    "ScheduleResult",
    "Scheduler",
    "SchedulerConfigError",
    "SchedulerConfiguration",
    "SchedulingError",
    "Snapshot",
    "Status",
    "default_profile",
    "load_config",
    "num_feasible_nodes_to_find",
]
