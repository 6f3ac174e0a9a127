"""What the scheduler knows about nodes and pods: PodInfo and NodeInfo; and why a pod fits nowhere.

Mirrors pkg/scheduler/framework/types.go (NodeInfo, PodInfo, Resource, Diagnosis, FitError). Objects stay
Kubernetes-shaped dicts; what the hot path needs is computed once and kept as integers:
milli-CPU and bytes, summed incrementally as pods are added to and removed from a node
(NodeInfo.update in types.go).

Pod requests follow component-helpers resource/helpers.go PodRequests: containers are summed;
an init container runs alone, so the pod needs max(sum of containers, each init container);
restartable ("sidecar") init containers keep running and are added cumulatively; pod overhead
is added on top.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubelab.api.quantity import parse_quantity

if TYPE_CHECKING:
    from kubelab.scheduler.explain import Explanation
    from kubelab.scheduler.interface import PostFilterResult, Status

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "Diagnosis",
    "FitError",
    "NodeInfo",
    "Object",
    "PodInfo",
    "Resource",
    "normalized_image_name",
    "pod_key",
    "pod_requests",
]

Object = Mapping[str, Any]

# pkg/scheduler/util/pod_resources.go: what a container without a request counts as when
# scoring, so that many zero-request pods do not all land on one node.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@functools.lru_cache(maxsize=4096)
def _parse(name: str, text: str) -> int:
    # Quantities are parsed once per distinct string: "100m" appears in thousands of pods.
    quantity = parse_quantity(text)
    return quantity.milli_value() if name == "cpu" else quantity.value()


def _resource_list(values: Mapping[str, Any] | None) -> dict[str, int]:
    """A ResourceList as integers: cpu in millicores, everything else in whole units."""
    if not values:
        return {}
    return {name: _parse(name, str(value)) for name, value in values.items()}


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, 0) + value


def _max(into: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        if name not in into or value > into[name]:
            into[name] = value


def pod_requests(pod: Object, non_missing: Mapping[str, int] | None = None) -> dict[str, int]:
    """PodRequests: the pod's total requests as integers (cpu in millicores).

    `non_missing` fills in a value for each container that does not request that resource
    (upstream's NonMissingContainerRequests, used for the scoring defaults)."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        _add(total, _container_requests(c, non_missing))
    init_containers = spec.get("initContainers")
    if init_containers:
        sidecars: dict[str, int] = {}
        init_peak: dict[str, int] = {}
        for c in init_containers:
            reqs = _container_requests(c, non_missing)
            if c.get("restartPolicy") == "Always":  # a sidecar keeps running beside the rest
                _add(total, reqs)
                _add(sidecars, reqs)
                reqs = dict(sidecars)
            else:
                _add(reqs, sidecars)
            _max(init_peak, reqs)
        _max(total, init_peak)
    overhead = spec.get("overhead")
    if overhead:
        _add(total, _resource_list(overhead))
    return total


def _container_requests(c: Mapping[str, Any], non_missing: Mapping[str, int] | None) -> dict[str, int]:
    reqs = _resource_list((c.get("resources") or {}).get("requests"))
    if non_missing:
        for name, value in non_missing.items():
            reqs.setdefault(name, value)
    return reqs


class Resource:
    """A resource vector in integers (types.go Resource). Names other than cpu, memory,
    ephemeral-storage and pods are scalar resources (extended resources, hugepages)."""

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar_resources")

    def __init__(self, values: Mapping[str, int] | None = None) -> None:
        self.milli_cpu = 0
        self.memory = 0
        self.ephemeral_storage = 0
        self.allowed_pod_number = 0
        self.scalar_resources: dict[str, int] = {}
        if values:
            self.add(values, 1)

    def add(self, values: Mapping[str, int], sign: int = 1) -> None:
        for name, value in values.items():
            if name == "cpu":
                self.milli_cpu += sign * value
            elif name == "memory":
                self.memory += sign * value
            elif name == "ephemeral-storage":
                self.ephemeral_storage += sign * value
            elif name == "pods":
                self.allowed_pod_number += sign * value
            else:
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + sign * value

    def get(self, name: str) -> int:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if name == "ephemeral-storage":
            return self.ephemeral_storage
        if name == "pods":
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def __repr__(self) -> str:
        return (f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, "
                f"ephemeral_storage={self.ephemeral_storage}, pods={self.allowed_pod_number}, "
                f"scalar={self.scalar_resources})")


def pod_key(pod: Object) -> str:
    """How the cache names a pod: its uid (types.go GetPodKey), else namespace/name."""
    meta = pod.get("metadata") or {}
    return str(meta.get("uid") or f"{meta.get('namespace', 'default')}/{meta.get('name', '')}")


class PodInfo:
    """A pod plus what the scheduler computes from it once (types.go PodInfo).

    Invariant: `requests` and `non0_*` describe `pod` as it was when the PodInfo was built;
    build a new PodInfo when the pod changes."""

    __slots__ = ("key", "labels", "name", "namespace", "non0_cpu", "non0_mem", "pod", "requests",
                 "terminating")

    def __init__(self, pod: Object) -> None:
        meta = pod.get("metadata") or {}
        self.pod = pod
        self.key = pod_key(pod)
        self.name: str = meta.get("name", "")
        self.namespace: str = meta.get("namespace", "default")
        self.labels: Mapping[str, str] = meta.get("labels") or {}
        self.terminating = meta.get("deletionTimestamp") is not None
        self.requests = pod_requests(pod)
        # CalculateResource: for scoring, each container counts at least the defaults.
        non0 = pod_requests(pod, {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST})
        self.non0_cpu = non0.get("cpu", 0)
        self.non0_mem = non0.get("memory", 0)

    def __repr__(self) -> str:
        return f"PodInfo({self.namespace}/{self.name}, requests={self.requests})"


def normalized_image_name(name: str) -> str:
    """image_locality.go normalizedImageName: an image without a tag means ":latest"."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


# types.go nextGeneration: one counter for all NodeInfos, so that a node deleted and added back
# under the same name never gets a generation it had before (kubernetes issue #63262).
_generations = itertools.count(1)


class NodeInfo:
    """A node and the pods on it, with requested resources kept as running integer sums.

    Allocatable comes from status.allocatable, as upstream; a node written by hand with only
    status.capacity uses that instead (kubelet would have filled allocatable in).

    Invariant: change a NodeInfo only through set_node, add_pod(_info) and remove_pod. Each
    of them gives it a new `generation` (types.go Generation): a NodeInfo whose generation
    has not moved is the same node with the same pods (upstream's cache.UpdateSnapshot copies
    only the nodes whose generation is newer than the snapshot's)."""

    __slots__ = ("allocatable", "generation", "images", "labels", "name", "no_schedule_taints", "node",
                 "non_zero_requested", "pods", "prefer_no_schedule_taints", "requested", "taints",
                 "unschedulable")

    def __init__(self, node: Object | None = None, pods: Iterable[Object] = ()) -> None:
        self.node: Object = {}
        self.name = ""
        self.labels: Mapping[str, str] = {}
        self.taints: list[Mapping[str, Any]] = []
        self.no_schedule_taints: list[Mapping[str, Any]] = []  # NoSchedule or NoExecute
        self.prefer_no_schedule_taints: list[Mapping[str, Any]] = []
        self.unschedulable = False
        self.allocatable = Resource()
        self.images: dict[str, int] = {}  # every name of every image on the node -> size
        self.pods: dict[str, PodInfo] = {}  # pod_key -> PodInfo, in the order they arrived
        self.requested = Resource()  # sum of the pods' requests (Filter uses this)
        self.non_zero_requested = Resource()  # the same with the defaults applied (scoring)
        self.generation = next(_generations)
        if node is not None:
            self.set_node(node)
        for pod in pods:
            self.add_pod(pod)

    def set_node(self, node: Object) -> None:
        meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
        self.generation = next(_generations)
        self.node = node
        self.name = meta.get("name", "")
        self.labels = meta.get("labels") or {}
        self.taints = list(spec.get("taints") or ())
        self.no_schedule_taints = [t for t in self.taints if t.get("effect") in ("NoSchedule", "NoExecute")]
        self.prefer_no_schedule_taints = [t for t in self.taints if t.get("effect") == "PreferNoSchedule"]
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable = Resource(_resource_list(status.get("allocatable") or status.get("capacity")))
        self.images = {}
        for image in status.get("images") or ():
            for image_name in image.get("names") or ():
                self.images[image_name] = int(image.get("sizeBytes") or 0)

    def add_pod(self, pod: Object) -> PodInfo:
        info = PodInfo(pod)
        self.add_pod_info(info)
        return info

    def add_pod_info(self, info: PodInfo) -> None:
        if info.key in self.pods:
            self._update(self.pods.pop(info.key), -1)
        self.pods[info.key] = info
        self._update(info, 1)

    def remove_pod(self, pod: Object | PodInfo) -> None:
        key = pod.key if isinstance(pod, PodInfo) else pod_key(pod)
        info = self.pods.pop(key, None)
        if info is None:
            raise KeyError(f"no corresponding pod {key} in pods of node {self.name}")
        self._update(info, -1)

    def _update(self, info: PodInfo, sign: int) -> None:
        self.generation = next(_generations)
        self.requested.add(info.requests, sign)
        self.non_zero_requested.milli_cpu += sign * info.non0_cpu
        self.non_zero_requested.memory += sign * info.non0_mem

    def snapshot(self) -> NodeInfo:
        """A copy whose pods can be added and removed without touching this one (types.go
        Snapshot): what preemption's dry run and the nominated pods' filter pass work on."""
        clone = NodeInfo(self.node) if self.node else NodeInfo()
        for info in self.pods.values():
            clone.add_pod_info(info)
        return clone

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)}, requested={self.requested})"


@dataclass
class Diagnosis:
    """Why nodes were rejected: each rejected node's Status, plus one Status standing for
    the nodes never looked at because PreFilter ruled them out (NodeToStatus.absentNodesStatus)."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_nodes_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if status.plugin and status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    """No node fits. str(err) is upstream's message, e.g.
    `0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.`"""

    def __init__(self, pod: Object, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        self.explanation: Explanation | None = None
        self.post_filter_result: PostFilterResult | None = None  # e.g. a node to nominate

    def __str__(self) -> str:
        d, n = self.diagnosis, self.num_all_nodes
        message = f"0/{n} nodes are available:"
        if d.pre_filter_msg:
            message += f" {d.pre_filter_msg}."
        else:  # count each reason over the nodes; sort "count reason" strings as text
            reasons: Counter[str] = Counter()
            for status in d.node_to_status.values():
                reasons.update(status.reasons)
            if len(d.node_to_status) < n and d.absent_nodes_status is not None:
                for reason in d.absent_nodes_status.reasons:
                    reasons[reason] += n - len(d.node_to_status)
            histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
            if histogram:
                message += " " + ", ".join(histogram) + "."
        if d.post_filter_msg:  # only when a PostFilter plugin (preemption) ran
            message += f" {d.post_filter_msg}"
        return message
