"""The core evaluators (kubernetes pkg/quota/v1/evaluator/core: pods.go, services.go,
persistent_volume_claims.go, registry.go) and the standard quota names
(pkg/apis/core/helper/helpers.go).

pods: `pods` and the compute resources count only pods that have not ended (QuotaV1Pod: not
Succeeded or Failed, not past their deletion grace); `count/pods` counts every stored pod. A
quota on cpu or memory makes every container state it (Constraints: "must specify
limits.cpu for: web"). A pod's requests are its containers' summed, or an init container's when
larger (resourcehelper.PodRequests; kubelab does not add restartable init containers or pod
overhead). Scopes: Terminating, NotTerminating (activeDeadlineSeconds), BestEffort,
NotBestEffort (the QoS class), PriorityClass (In, NotIn, Exists, DoesNotExist on
priorityClassName), CrossNamespacePodAffinity.

services: services, count/services, services.nodeports, services.loadbalancers.
persistentvolumeclaims: persistentvolumeclaims, count/persistentvolumeclaims, requests.storage,
and per class `<class>.storageclass.storage.k8s.io/requests.storage` and
`.../persistentvolumeclaims`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kubelab.api import Object
from kubelab.api.meta import parse_time
from kubelab.api.quantity import parse_quantity
from kubelab.api.quota.generic import ONE, Evaluator, ListFunc, ObjectCountEvaluator
from kubelab.api.quota.resources import ResourceList, add, intersection, max_, parse_resource_list

__all__ = ["STANDARD_QUOTA_RESOURCES", "STANDARD_SCOPES", "PersistentVolumeClaimEvaluator",
           "PodEvaluator", "ServiceEvaluator", "new_evaluators", "scope_valid_for_resource"]

# helpers.go: standardQuotaResources and standardResourceQuotaScopes.
STANDARD_QUOTA_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "quota", "services", "replicationcontrollers", "resourcequotas", "secrets",
    "persistentvolumeclaims", "configmaps", "services.nodeports", "services.loadbalancers"})
STANDARD_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort",
                   "PriorityClass", "CrossNamespacePodAffinity", "VolumeAttributesClass")
POD_OBJECT_COUNT = frozenset({"pods"})
POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu",
                         "requests.memory"})
PVC_RESOURCES = frozenset({"persistentvolumeclaims", "requests.storage"})
EXISTS_ONLY = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating",
               "CrossNamespacePodAffinity")
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
# The legacy object counts with their old names (registry.go legacyObjectCountAliases).
LEGACY_ALIASES = {"configmaps": "configmaps", "resourcequotas": "resourcequotas",
                  "replicationcontrollers": "replicationcontrollers", "secrets": "secrets"}


def scope_valid_for_resource(scope: str, resource: str) -> bool:
    """IsResourceQuotaScopeValidForResource."""
    if scope in ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass",
                 "CrossNamespacePodAffinity"):
        return resource in POD_OBJECT_COUNT or resource in POD_COMPUTE
    if scope == "BestEffort":
        return resource in POD_OBJECT_COUNT
    if scope == "VolumeAttributesClass":
        return resource in PVC_RESOURCES
    return True


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------------ pods

POD_RESOURCES = ("count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu",
                 "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
                 "limits.ephemeral-storage", "pods")
VALIDATION_SET = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                            "limits.memory"})


def pod_compute_usage_helper(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """podComputeUsageHelper: pods=1 and each request and limit under its quota names."""
    result: ResourceList = {"pods": ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, q in requests.items():
        if name.startswith("hugepages-"):
            result[name] = result[f"requests.{name}"] = q
        elif "/" in name and not name.startswith("kubernetes.io/") and "requests." not in name:
            result[f"requests.{name}"] = q  # an extended resource: requests.<name> only
    return result


def _container_resources(container: Any) -> tuple[ResourceList, ResourceList]:
    resources = _dict(_dict(container).get("resources"))
    return parse_resource_list(resources.get("requests")), parse_resource_list(resources.get("limits"))


def pod_requests_and_limits(pod: Object) -> tuple[ResourceList, ResourceList]:
    """resourcehelper.PodRequests and PodLimits: the containers' sum, or an init container's
    own when larger."""
    spec = _dict(pod.get("spec"))
    requests: ResourceList = {}
    limits: ResourceList = {}
    for c in spec.get("containers") or ():
        r, lim = _container_resources(c)
        requests, limits = add(requests, r), add(limits, lim)
    for c in spec.get("initContainers") or ():
        r, lim = _container_resources(c)
        requests, limits = max_(requests, r), max_(limits, lim)
    return requests, limits


def is_terminal(pod: Object) -> bool:
    return _dict(pod.get("status")).get("phase") in ("Succeeded", "Failed")


def quota_v1_pod(pod: Object, now: float) -> bool:
    """QuotaV1Pod: does the pod still count against compute quota?"""
    if is_terminal(pod):
        return False
    meta = _dict(pod.get("metadata"))
    stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    return not (stamp and grace is not None and now > parse_time(stamp) + float(grace))


def is_best_effort(pod: Object) -> bool:
    """qos.GetPodQOS(pod) == BestEffort: no container asks for or is limited in cpu or memory."""
    given = _dict(pod.get("status")).get("qosClass")
    if given:
        return bool(given == "BestEffort")
    for c in [*(_dict(pod.get("spec")).get("initContainers") or ()),
              *(_dict(pod.get("spec")).get("containers") or ())]:
        for resources in _container_resources(c):
            if any(not resources[n].is_zero() for n in ("cpu", "memory") if n in resources):
                return False
    return True


def _cross_namespace_affinity(pod: Object) -> bool:
    """crossNamespacePodAffinityTerm on any (anti-)affinity term of the pod."""
    affinity = _dict(_dict(pod.get("spec")).get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        a = _dict(affinity.get(kind))
        terms = [*(a.get("requiredDuringSchedulingIgnoredDuringExecution") or ()),
                 *(_dict(t).get("podAffinityTerm") for t in
                   a.get("preferredDuringSchedulingIgnoredDuringExecution") or ())]
        if any(_dict(t).get("namespaces") or _dict(t).get("namespaceSelector") is not None
               for t in terms):
            return True
    return False


class PodEvaluator(Evaluator):
    resource = "pods"

    def __init__(self, list_func: ListFunc | None = None,
                 now: Callable[[], float] = lambda: 0.0) -> None:
        super().__init__(list_func)
        self.now = now

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        """podResources, plus hugepages-* and requests.<extended resource>."""
        return sorted({n for n in names if n in POD_RESOURCES or n.startswith("hugepages-") or
                       n.startswith("requests.hugepages-") or
                       (n.startswith("requests.") and "/" in n)})

    def constraints(self, required: list[str], item: Object) -> str:
        """Constraints: with cpu or memory quota'd, every container must state them."""
        required_set = set(required) & VALIDATION_SET
        missing: dict[str, set[str]] = {}
        spec = _dict(item.get("spec"))
        for c in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
            stated = set(pod_compute_usage_helper(*_container_resources(c)))
            for name in required_set - stated:
                missing.setdefault(name, set()).add(str(_dict(c).get("name", "")))
        return "; ".join(f"must specify {name} for: {','.join(sorted(missing[name]))}"
                         for name in sorted(missing))

    def usage(self, item: Object) -> ResourceList:
        """PodUsageFunc."""
        result: ResourceList = {"count/pods": ONE}
        if not quota_v1_pod(item, self.now()):
            return result
        return add(result, pod_compute_usage_helper(*pod_requests_and_limits(item)))

    def matches_scope(self, selector: dict[str, Any], item: Object) -> bool:
        """podMatchesScopeFunc."""
        spec = _dict(item.get("spec"))
        scope = selector.get("scopeName")
        deadline = spec.get("activeDeadlineSeconds")
        if scope == "Terminating":
            return isinstance(deadline, int) and deadline >= 0
        if scope == "NotTerminating":
            return not (isinstance(deadline, int) and deadline >= 0)
        if scope == "BestEffort":
            return is_best_effort(item)
        if scope == "NotBestEffort":
            return not is_best_effort(item)
        if scope == "PriorityClass":
            name = str(spec.get("priorityClassName") or "")
            if selector.get("operator") == "Exists":
                return bool(name)
            # podMatchesSelector: the labels {PriorityClass: <the pod's class>} against the
            # requirement; the key is always there, so DoesNotExist never matches.
            values = list(selector.get("values") or ())
            return {"In": name in values, "NotIn": name not in values}.get(
                str(selector.get("operator")), False)
        if scope == "CrossNamespacePodAffinity":
            return _cross_namespace_affinity(item)
        return False


# ------------------------------------------------------------------ services

class ServiceEvaluator(Evaluator):
    resource = "services"
    operations = ("CREATE", "UPDATE")
    names = ("count/services", "services", "services.nodeports", "services.loadbalancers")

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return intersection(names, self.names)

    def usage(self, item: Object) -> ResourceList:
        """ServiceUsageFunc: one service; a NodePort's ports as node ports; a LoadBalancer
        also one balancer (with allocateLoadBalancerNodePorts false, only the ports that name
        a nodePort count)."""
        spec = _dict(item.get("spec"))
        result: ResourceList = {"count/services": ONE, "services": ONE}
        kind, ports = spec.get("type") or "ClusterIP", list(spec.get("ports") or ())
        if kind == "NodePort":
            result["services.nodeports"] = parse_quantity(len(ports))
        elif kind == "LoadBalancer":
            result["services.loadbalancers"] = ONE
            if spec.get("allocateLoadBalancerNodePorts", True) is False:  # portsWithNodePorts
                ports = [p for p in ports if _dict(p).get("nodePort")]
            result["services.nodeports"] = parse_quantity(len(ports))
        return result


# ------------------------------------------------------------------ persistentvolumeclaims

def _class_name(pvc: Object) -> str:
    """GetPersistentVolumeClaimClass: spec.storageClassName, or the beta annotation."""
    annotations = _dict(_dict(pvc.get("metadata")).get("annotations"))
    name = annotations.get("volume.beta.kubernetes.io/storage-class")
    return str(name if name is not None else _dict(pvc.get("spec")).get("storageClassName") or "")


class PersistentVolumeClaimEvaluator(Evaluator):
    resource = "persistentvolumeclaims"
    operations = ("CREATE", "UPDATE")

    def handles(self, operation: str, subresource: str, obj: Object | None,
                old: Object | None) -> bool:
        """Handles: a create, or an update that may grow the claim (expansion)."""
        return not subresource and operation in self.operations

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        """persistentvolumeclaims, count/..., requests.storage and the per-class names."""
        return sorted({n for n in names if n in ("count/persistentvolumeclaims",
                                                 "persistentvolumeclaims", "requests.storage") or
                       (STORAGE_CLASS_SUFFIX in n and n.rsplit("/", 1)[1] in PVC_RESOURCES)})

    def usage(self, item: Object) -> ResourceList:
        """PersistentVolumeClaimUsageFunc: one claim and its request (or, when larger, the
        size allocated to it)."""
        result: ResourceList = {"count/persistentvolumeclaims": ONE, "persistentvolumeclaims": ONE}
        cls = _class_name(item)
        if cls:
            result[f"{cls}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = ONE
        spec, status = _dict(item.get("spec")), _dict(item.get("status"))
        request = parse_resource_list(_dict(spec.get("resources")).get("requests")).get("storage")
        allocated = parse_resource_list(status.get("allocatedResources")).get("storage")
        if request is not None and allocated is not None and allocated.cmp(request) > 0:
            request = allocated  # getStorageUsage: what was allocated, when more than asked
        if request is not None:
            result["requests.storage"] = request
            if cls:
                result[f"{cls}{STORAGE_CLASS_SUFFIX}requests.storage"] = request
        return result


def new_evaluators(list_func: ListFunc | None = None,
                   now: Callable[[], float] = lambda: 0.0) -> list[Evaluator]:
    """NewEvaluators: the three with their own logic, then the legacy object counts."""
    result: list[Evaluator] = [PodEvaluator(list_func, now), ServiceEvaluator(list_func),
                               PersistentVolumeClaimEvaluator(list_func)]
    result += [ObjectCountEvaluator("", resource, list_func, alias)
               for resource, alias in LEGACY_ALIASES.items()]
    return result
