"""Exercises for notebook 04 · The scheduler: filter, score, bind.

Two plugins for the scheduling framework (kubelab/scheduler/interface.py). The grader registers
yours as an out-of-tree plugin of a running kube-scheduler and enables it in the profile, as a
KubeSchedulerConfiguration does:

    profiles:
    - schedulerName: default-scheduler
      plugins:
        filter: {disabled: [{name: TaintToleration}], enabled: [{name: TaintFilter}]}

then schedules pods onto tainted and filling nodes, and compares every placement and every
FailedScheduling message with what kubelab's own plugins do in the same seeded cluster.

    kubelab grade 4                                          # both exercises
    from kubelab.grading import grade; grade("4.1")

A plugin that succeeds returns None (Go's nil *Status); Status(Code.X, "reason") says no.
Do not import kubelab.scheduler.plugins here: writing them is the exercise.
"""

from __future__ import annotations

from typing import Any

from kubelab.scheduler.interface import Code, CycleState, Status
from kubelab.scheduler.types import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, NodeInfo, pod_requests


class TaintFilter:
    """Exercise 4.1: A Filter plugin: taints and tolerations.

    Notebook 04_scheduler, section "Taints and tolerations". Medium, 10 points.

    The Filter half of the scheduler's TaintToleration plugin
    (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go, with
    ToleratesTaint from k8s.io/api core/v1/toleration.go):

    - Only taints with effect NoSchedule or NoExecute keep a pod away (PreferNoSchedule is
      for scoring). node_info.taints lists the node's taints (key, value, effect).
    - A toleration (pod.spec.tolerations) tolerates a taint when its effect is empty or the
      same as the taint's, and: its key is empty and its operator is Exists (it tolerates
      everything), or its key equals the taint's and either the operator is Exists (value
      ignored) or the operator is Equal (the default when left out) and the values are equal
      (a missing value is "").
    - Return None when every such taint is tolerated; otherwise
      Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")
      (1.34's wording: since kubernetes#134740 the reason does not name the taint).
    """

    name = "TaintFilter"

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status | None:
        ### BEGIN SOLUTION
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        for taint in node_info.taints:
            if taint.get("effect") not in ("NoSchedule", "NoExecute"):
                continue
            if not any(_tolerates(t, taint) for t in tolerations):
                return Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")
        return None
        ### END SOLUTION


### BEGIN SOLUTION
def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != (taint.get("key") or ""):
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")
### END SOLUTION


class BinPackingScore:
    """Exercise 4.2: A Score plugin: bin packing (MostAllocated).

    Notebook 04_scheduler, section "Spreading vs bin packing". Medium, 10 points.

    NodeResourcesFit's MostAllocated scoring strategy for cpu and memory, each with weight 1
    (pkg/scheduler/framework/plugins/noderesources/most_allocated.go): the fuller a node would
    be with this pod on it, the higher its score, so pods pack onto few nodes.

    - requested (per resource) = what the node's pods request, counting a container without a
      request as 100m CPU and 200Mi memory (node_info.non_zero_requested: .milli_cpu, .memory)
      + the pod's own request counted the same way: pod_requests(pod, {"cpu":
      DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}) gives cpu in millicores
      and memory in bytes.
    - allocatable = node_info.allocatable.milli_cpu and .memory.
    - per resource with allocatable > 0: min(requested, allocatable) * 100 // allocatable
      (integer arithmetic, as Go's int64); the node's score is the sum of those divided (//)
      by how many resources counted; 0 if none did.
    - Return an int in [0, 100].
    """

    name = "BinPackingScore"

    def score(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> int:
        ### BEGIN SOLUTION
        request = pod_requests(pod, {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST})
        used, have = node_info.non_zero_requested, node_info.allocatable
        total = counted = 0
        for requested, allocatable in ((used.milli_cpu + request.get("cpu", 0), have.milli_cpu),
                                       (used.memory + request.get("memory", 0), have.memory)):
            if allocatable > 0:
                total += min(requested, allocatable) * 100 // allocatable
                counted += 1
        return total // counted if counted else 0
        ### END SOLUTION
