"""Per-kind rules of the generic registry: what create resets, what update keeps, what bumps
metadata.generation, and how long a deletion waits.

Upstream each kind has a strategy (pkg/registry/<group>/<kind>/strategy.go: PrepareForCreate,
PrepareForUpdate, CheckGracefulDelete); the generic store calls them. The same happens here:
registry.py is generic and asks a Strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ParseError
from kubelab.api.quantity import Quantity, parse_quantity
from kubelab.apiserver.apiextensions.crd import add_stored_version, crd_status
from kubelab.apiserver.registry.batch import generate_selector
from kubelab.apiserver.registry.certificates import prepare_csr_for_create, prepare_csr_for_update
from kubelab.apiserver.registry.service.strategy import drop_type_dependent_fields

if TYPE_CHECKING:
    from kubelab.apiserver.auth.authn import UserInfo

__all__ = ["Strategy", "grace_period", "prepare_for_create", "prepare_for_update", "qos_class",
           "strategy_for"]

@dataclass(frozen=True)
class Strategy:
    # A status subresource exists: updates of the object keep the old status and updates of
    # status keep the old spec ("the main resource ignores status, status ignores spec").
    has_status: bool = False
    # metadata.generation is 1 on create and +1 on each change of the desired state.
    generation: bool = False
    generation_on_annotations: bool = False  # deployments: annotations are copied to RSes
    custom: bool = False                     # a custom resource: all but metadata/status is spec
    create_clears_status: bool = False
    graceful: bool = False                   # pods: deletion waits terminationGracePeriodSeconds


STRATEGIES = {
    "pods": Strategy(has_status=True, generation=True, create_clears_status=True, graceful=True),
    "deployments": Strategy(has_status=True, generation=True, generation_on_annotations=True,
                            create_clears_status=True),
    "replicasets": Strategy(has_status=True, generation=True, create_clears_status=True),
    "daemonsets": Strategy(has_status=True, generation=True, create_clears_status=True),
    "nodes": Strategy(has_status=True),
    "namespaces": Strategy(has_status=True, create_clears_status=True),
    "customresourcedefinitions": Strategy(has_status=True, generation=True,
                                          create_clears_status=True),
    # pkg/registry/flowcontrol/{flowschema,prioritylevelconfiguration}/strategy.go
    "flowschemas": Strategy(has_status=True, generation=True, create_clears_status=True),
    "prioritylevelconfigurations": Strategy(has_status=True, generation=True,
                                            create_clears_status=True),
    "jobs": Strategy(has_status=True, generation=True, create_clears_status=True),
    "services": Strategy(has_status=True, create_clears_status=True),
    # endpointslice/strategy.go: generation 1, bumped by any change beyond metadata.
    "endpointslices": Strategy(generation=True, custom=True),
    # --- i31-sts --- pkg/registry/apps/statefulset, pkg/registry/core/replicationcontroller
    "statefulsets": Strategy(has_status=True, generation=True, create_clears_status=True),
    "replicationcontrollers": Strategy(has_status=True, generation=True, create_clears_status=True),
    # --- i31-cron-pdb ---
    # pkg/registry/batch/cronjob/strategy.go, pkg/registry/policy/poddisruptionbudget/strategy.go
    "cronjobs": Strategy(has_status=True, generation=True, create_clears_status=True),
    "poddisruptionbudgets": Strategy(has_status=True, generation=True, create_clears_status=True),
    # --- i31-storage ---
    # pkg/registry/core/persistentvolume{,claim}/strategy.go: status is a subresource, create
    # starts Pending; no generation.
    "persistentvolumes": Strategy(has_status=True, create_clears_status=True),
    "persistentvolumeclaims": Strategy(has_status=True, create_clears_status=True),
    # --- hpacsi --- volumeattachment/strategy.go: the status is the attacher's
    "volumeattachments": Strategy(has_status=True, create_clears_status=True),
    # networking/ingress/strategy.go: generation bumps on spec changes; status is a subresource.
    "ingresses": Strategy(has_status=True, generation=True, create_clears_status=True),
    "ingressclasses": Strategy(generation=True),
    "networkpolicies": Strategy(generation=True),
    # core/resourcequota/strategy.go: create clears status, each half keeps the other's.
    "resourcequotas": Strategy(has_status=True, create_clears_status=True),
    # --- i31-hpa ---
    # pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go: the status is reset on create.
    "horizontalpodautoscalers": Strategy(has_status=True, create_clears_status=True),
    # --- csr --- pkg/registry/certificates/certificates/strategy.go (registry/certificates.py)
    "certificatesigningrequests": Strategy(has_status=True, create_clears_status=True),
}
PLAIN = Strategy()


def strategy_for(resource: str, *, custom: bool = False, has_status: bool = False) -> Strategy:
    if custom:
        return Strategy(has_status=has_status, generation=True, custom=True,
                        create_clears_status=has_status)
    return STRATEGIES.get(resource, PLAIN)


def node_pod_cidrs(obj: Object) -> None:
    """The v1 <-> internal conversion of a NodeSpec (pkg/apis/core/v1/conversion.go):
    spec.podCIDRs is the truth, the deprecated spec.podCIDR is its first item (a v1 object
    with only podCIDR gets podCIDRs from it). A patch of podCIDR alone so changes nothing,
    as upstream."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    cidrs = spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else [])
    if cidrs:
        spec["podCIDRs"], spec["podCIDR"] = cidrs, cidrs[0]


def prepare_for_create(resource: str, strategy: Strategy, obj: Object,
                       user: UserInfo | None = None) -> None:
    if resource == "nodes":
        node_pod_cidrs(obj)
    if strategy.create_clears_status:
        obj.pop("status", None)
    if strategy.generation:
        obj["metadata"]["generation"] = 1
    if resource == "pods":
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj)}
    elif resource == "namespaces":
        obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
        obj["status"] = {"phase": "Active"}
    elif resource in ("deployments", "replicasets"):
        obj["status"] = {}
    elif resource == "daemonsets":  # DaemonSetStatus{}: these four have no omitempty
        obj["status"] = dict.fromkeys(("currentNumberScheduled", "numberMisscheduled",
                                       "desiredNumberScheduled", "numberReady"), 0)
        _template_generation(obj, 1)
    elif resource == "services":
        obj["status"] = {"loadBalancer": {}}
    elif resource == "customresourcedefinitions":
        obj["status"] = crd_status(obj)
    elif resource == "jobs":
        generate_selector(obj)
        obj["status"] = {}
    # --- i31-sts --- the status fields without omitempty
    elif resource == "statefulsets":
        obj["status"] = {"replicas": 0, "availableReplicas": 0}
        drop_stateful_set_disabled_fields(obj, None)
    elif resource == "replicationcontrollers":
        obj["status"] = {"replicas": 0}
    # --- i31-cron-pdb ---
    elif resource == "cronjobs":
        obj["status"] = {}
    elif resource == "poddisruptionbudgets":  # PodDisruptionBudgetStatus{}: no omitempty
        obj["status"] = dict.fromkeys(("disruptionsAllowed", "currentHealthy", "desiredHealthy",
                                       "expectedPods"), 0)
    elif resource in ("persistentvolumes", "persistentvolumeclaims"):  # --- i31-storage ---
        obj["status"] = {"phase": "Pending"}
    # --- i31-hpa ---
    if resource == "horizontalpodautoscalers":  # v2 status: desiredReplicas has no omitempty
        obj["status"] = {"desiredReplicas": 0}
    elif resource == "certificatesigningrequests":  # --- csr --- the requestor is the user
        prepare_csr_for_create(obj, user)


def prepare_for_update(resource: str, strategy: Strategy, obj: Object, old: Object,
                       subresource: str, now: str = "") -> Object:
    """The object to store, from the request's obj and the live old (both private copies);
    now is the request's time (metav1.Now), for the strategies that stamp conditions."""
    if resource == "certificatesigningrequests":  # --- csr --- its three strategies
        return prepare_csr_for_update(obj, old, subresource, now)
    if subresource == "status":
        # Only status changes; everything else stays as it was (and so does generation).
        new = {k: v for k, v in old.items() if k != "status"}
        if "status" in obj:
            new["status"] = obj["status"]
        # Status strategies reset the spec, not the metadata: a controller may write an
        # annotation with its status (the Deployment controller writes its revision so, in
        # pkg/controller/deployment/sync.go). Deployments also keep their labels
        # (pkg/registry/apps/deployment/strategy.go deploymentStatusStrategy.PrepareForUpdate).
        new["metadata"] = dict(old["metadata"])
        meta = obj.get("metadata") or {}
        for field in ("annotations", "labels"):
            if field in meta and not (field == "labels" and resource == "deployments"):
                new["metadata"][field] = meta[field]
        return new
    if subresource == "ephemeralcontainers":
        # ephemeralContainersStrategy: only spec.ephemeralContainers changes.
        new = dict(old)
        new["spec"] = {**(old.get("spec") or {}),
                       "ephemeralContainers": (obj.get("spec") or {}).get("ephemeralContainers") or []}
        return new
    if subresource == "finalize":  # namespaces/finalize: only spec.finalizers changes
        new = dict(old)
        new["spec"] = {**(old.get("spec") or {}),
                       "finalizers": (obj.get("spec") or {}).get("finalizers") or []}
        return new
    if strategy.has_status:
        obj.pop("status", None)
        if "status" in old:
            obj["status"] = old["status"]
    if resource == "nodes":
        node_pod_cidrs(obj)
    if resource == "customresourcedefinitions":
        add_stored_version(obj)
    if resource == "services":
        drop_type_dependent_fields(obj, old)
    if resource == "namespaces":
        obj.setdefault("spec", {})["finalizers"] = (old.get("spec") or {}).get("finalizers", [])
    if resource == "statefulsets":  # --- i31-sts ---
        drop_stateful_set_disabled_fields(obj, old)
    if resource == "daemonsets":
        before = int((old["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION, 0) or 0)
        changed = (obj.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template")
        _template_generation(obj, before + 1 if changed else before)
    meta, old_meta = obj["metadata"], old["metadata"]
    if strategy.generation:
        generation = old_meta.get("generation", 1)
        if _spec_changed(strategy, obj, old) or (strategy.generation_on_annotations and
                                                 meta.get("annotations") != old_meta.get("annotations")):
            generation += 1
        meta["generation"] = generation
    return obj


# pkg/registry/apps/daemonset/strategy.go keeps spec.templateGeneration (1 on create, +1 on
# each change of the template), which apps/v1 shows as this annotation.
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _template_generation(obj: Object, generation: int) -> None:
    meta = obj["metadata"]
    if generation:
        meta["annotations"] = {**(meta.get("annotations") or {}), TEMPLATE_GENERATION: str(generation)}


# --- i31-sts ---
def drop_stateful_set_disabled_fields(obj: Object, old: Object | None) -> None:
    """dropStatefulSetDisabledFields (pkg/registry/apps/statefulset/strategy.go): 1.34's
    MaxUnavailableStatefulSet gate is alpha, off, so a new maxUnavailable is dropped unless
    the old object already had one."""
    def rolling(o: Object | None) -> Any:
        strategy = ((o or {}).get("spec") or {}).get("updateStrategy")
        return strategy.get("rollingUpdate") if isinstance(strategy, dict) else None
    old_rolling = rolling(old)
    if isinstance(old_rolling, dict) and old_rolling.get("maxUnavailable") is not None:
        return
    new_rolling = rolling(obj)
    if isinstance(new_rolling, dict):
        new_rolling.pop("maxUnavailable", None)


def _spec_changed(strategy: Strategy, obj: Object, old: Object) -> bool:
    if strategy.custom:
        skip = ("metadata", "status", "apiVersion", "kind")
        return {k: v for k, v in obj.items() if k not in skip} != \
            {k: v for k, v in old.items() if k not in skip}
    return obj.get("spec") != old.get("spec")


def grace_period(resource: str, obj: Object, requested: int | None) -> int | None:
    """CheckGracefulDelete: seconds the deletion waits, or None when it is not graceful.

    Pods only (pkg/registry/core/pod/strategy.go): the requested period, else the pod's
    terminationGracePeriodSeconds; 0 for a pod never scheduled or already finished."""
    if resource != "pods":
        return None
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    period = requested if requested is not None else spec.get("terminationGracePeriodSeconds", 0)
    if not spec.get("nodeName") or status.get("phase") in ("Failed", "Succeeded"):
        period = 0
    return 1 if period < 0 else period


def qos_class(pod: Object) -> str:
    """GetPodQOS (pkg/apis/core/helper/qos): Guaranteed, Burstable or BestEffort."""
    spec = pod.get("spec") or {}
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        resources = (container.get("resources") or {}) if isinstance(container, dict) else {}
        _add(requests, resources.get("requests"))
        found = _add(limits, resources.get("limits"))
        if not {"cpu", "memory"} <= found:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and len(requests) == len(limits) and \
            all(name in limits and limits[name].cmp(q) == 0 for name, q in requests.items()):
        return "Guaranteed"
    return "Burstable"


def _add(total: dict[str, Quantity], resources: Any) -> set[str]:
    found: set[str] = set()
    for name, text in (resources or {}).items() if isinstance(resources, dict) else ():
        if name not in ("cpu", "memory"):
            continue
        try:
            quantity = parse_quantity(text)
        except (ParseError, TypeError):
            continue
        if quantity.cmp(parse_quantity(0)) > 0:
            found.add(name)
            total[name] = total[name] + quantity if name in total else quantity
    return found
