"""What the DaemonSet controller puts into each daemon pod, and how it reads one back
(kubernetes/kubernetes pkg/controller/daemon/util/daemonset_util.go).

- AddOrUpdateDaemonPodTolerations: every daemon pod tolerates the taints a node problem brings
  (not-ready and unreachable NoExecute; disk-, memory- and pid-pressure and unschedulable
  NoSchedule; network-unavailable NoSchedule for a hostNetwork pod), so `kubectl cordon` or a
  sick node never moves the node's own agents away.
- CreatePodTemplate: the DaemonSet's template with those tolerations and two labels,
  `controller-revision-hash` (the template's ControllerRevision) and `pod-template-generation`.
- ReplaceDaemonSetPodNodeNameNodeAffinity: each pod names its node in a required node affinity
  (matchFields metadata.name In [node]); the default scheduler binds it there. Since 1.12 the
  controller no longer sets spec.nodeName itself.
- GetTargetNodeName, IsPodUpdated, SurgeCount, UnavailableCount.

The node-affinity match (component-helpers' nodeaffinity.GetRequiredNodeAffinity) and the
taint matching (v1helper.FindMatchingUntoleratedTaint) are small enough to restate here:
components never import each other, so the scheduler's copies are out of reach.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubelab.api import Object
from kubelab.api.meta import deep_copy

__all__ = ["CONTROLLER_REVISION_HASH", "TEMPLATE_GENERATION_ANNOTATION",
           "TEMPLATE_GENERATION_LABEL", "add_or_update_daemon_pod_tolerations",
           "create_pod_template", "find_matching_untolerated_taint", "get_target_node_name",
           "get_template_generation", "is_pod_updated", "matches_required_node_affinity", "new_pod",
           "node_should_run_daemon_pod",
           "replace_daemon_set_pod_node_name_node_affinity", "surge_count", "unavailable_count"]

CONTROLLER_REVISION_HASH = "controller-revision-hash"  # apps.DefaultDaemonSetUniqueLabelKey
TEMPLATE_GENERATION_LABEL = "pod-template-generation"  # extensions.DaemonSetTemplateGenerationKey
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"

_NO_EXECUTE = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_NO_SCHEDULE = ("node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
                "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable")
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"


def _add_or_update_toleration(spec: Object, toleration: Object) -> None:
    """v1helper.AddOrUpdateTolerationInPodSpec: replace a toleration of the same key and
    effect (and operator/value semantics), else append."""
    tolerations = spec.setdefault("tolerations", [])
    for i, t in enumerate(tolerations):
        if t.get("key") == toleration["key"] and t.get("effect") == toleration["effect"]:
            tolerations[i] = toleration
            return
    tolerations.append(toleration)


def add_or_update_daemon_pod_tolerations(spec: Object) -> None:
    for key in _NO_EXECUTE:
        _add_or_update_toleration(spec, {"key": key, "operator": "Exists", "effect": "NoExecute"})
    for key in _NO_SCHEDULE:
        _add_or_update_toleration(spec, {"key": key, "operator": "Exists", "effect": "NoSchedule"})
    if spec.get("hostNetwork"):
        _add_or_update_toleration(spec, {"key": NETWORK_UNAVAILABLE, "operator": "Exists",
                                         "effect": "NoSchedule"})


def get_template_generation(ds: Object) -> int | None:
    """GetTemplateGeneration: the deprecated annotation the API server keeps; None if absent
    or not a number."""
    text = ((ds.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def create_pod_template(template: Object, generation: int | None, hash_: str) -> Object:
    """CreatePodTemplate: a copy with the daemon tolerations and the two labels."""
    new = deep_copy(template)
    add_or_update_daemon_pod_tolerations(new.setdefault("spec", {}))
    labels = new.setdefault("metadata", {}).setdefault("labels", {})
    if generation is not None:
        labels[TEMPLATE_GENERATION_LABEL] = str(generation)
    if hash_:
        labels[CONTROLLER_REVISION_HASH] = hash_
    return new


def replace_daemon_set_pod_node_name_node_affinity(affinity: Object | None, node: str) -> Object:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node selector becomes exactly one
    term, matchFields metadata.name In [node]; preferred terms and other affinities stay."""
    requirement = {"key": "metadata.name", "operator": "In", "values": [node]}
    affinity = deep_copy(affinity) if affinity else {}
    node_affinity = affinity.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [{"matchFields": [requirement]}]}
    return affinity


def get_target_node_name(pod: Object) -> str | None:
    """GetTargetNodeName: spec.nodeName, else the node its affinity names; None if neither."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for req in term.get("matchFields") or []:
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and \
                    len(req.get("values") or []) == 1:
                return str(req["values"][0])
    return None


def is_pod_updated(pod: Object, hash_: str, generation: int | None) -> bool:
    """IsPodUpdated: the pod carries the current revision's hash or template generation."""
    labels = pod["metadata"].get("labels") or {}
    template_matches = generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(generation)
    return (bool(hash_) and labels.get(CONTROLLER_REVISION_HASH) == hash_) or template_matches


def _scaled(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value or 0)


def _rolling(ds: Object) -> Object | None:
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    return strategy.get("rollingUpdate") or {} if strategy.get("type") == "RollingUpdate" else None


def surge_count(ds: Object, number_to_schedule: int) -> int:
    """SurgeCount: maxSurge scaled to the nodes that should run the pod (0 unless rolling)."""
    rolling = _rolling(ds)
    return 0 if rolling is None else _scaled(rolling.get("maxSurge"), number_to_schedule)


def unavailable_count(ds: Object, number_to_schedule: int) -> int:
    rolling = _rolling(ds)
    return 0 if rolling is None else _scaled(rolling.get("maxUnavailable"), number_to_schedule)


# ---------------------------------------------------------------- component-helpers' matching


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def find_matching_untolerated_taint(taints: Iterable[Mapping[str, Any]],
                                    tolerations: Iterable[Mapping[str, Any]],
                                    keep: Callable[[Mapping[str, Any]], bool]) -> Mapping[str, Any] | None:
    tolerations = list(tolerations)
    for taint in taints:
        if keep(taint) and not any(_tolerates(t, taint) for t in tolerations):
            return taint
    return None


def _requirement(req: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = req.get("key", ""), req.get("operator"), req.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and len(values) == 1:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _field(req: Mapping[str, Any], node_name: str) -> bool:
    values = req.get("values") or []
    if req.get("key") != "metadata.name" or len(values) != 1:
        return False
    if req.get("operator") == "In":
        return bool(node_name == values[0])
    return req.get("operator") == "NotIn" and node_name != values[0]


def matches_required_node_affinity(pod_spec: Object, node: Object) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector AND one of the
    required terms (empty terms ignored)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    name = str(node["metadata"]["name"])
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    terms = [t for t in required.get("nodeSelectorTerms") or []
             if t.get("matchExpressions") or t.get("matchFields")]
    return any(all(_requirement(r, labels) for r in t.get("matchExpressions") or [])
               and all(_field(r, name) for r in t.get("matchFields") or []) for t in terms)


# ---------------------------------------------------------------- daemon_controller.go


def new_pod(ds: Object, node_name: str) -> Object:
    """NewPod: the pod the DaemonSet would run on node_name (its template, the daemon
    tolerations), for the scheduling checks."""
    template = create_pod_template((ds.get("spec") or {}).get("template") or {}, None, "")
    pod = {"metadata": {**(template.get("metadata") or {}),
                        "namespace": ds["metadata"].get("namespace", "")},
           "spec": template.get("spec") or {}}
    pod["spec"]["nodeName"] = node_name
    return pod


def node_should_run_daemon_pod(node: Object, ds: Object) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod (daemon_controller.go; here so that update.py shares it):
    (should a new daemon pod be created there, should a running one keep running). A running
    pod stays despite a NoSchedule taint it does not tolerate, never despite a NoExecute one."""
    pod = new_pod(ds, node["metadata"]["name"])
    template_node = ((ds["spec"].get("template") or {}).get("spec") or {}).get("nodeName")
    if template_node and template_node != node["metadata"]["name"]:
        return False, False
    if not matches_required_node_affinity(pod["spec"], node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tolerations = pod["spec"].get("tolerations") or []
    if find_matching_untolerated_taint(taints, tolerations,
                                       lambda t: t.get("effect") in ("NoSchedule", "NoExecute")):
        untolerated = find_matching_untolerated_taint(taints, tolerations,
                                                      lambda t: t.get("effect") == "NoExecute")
        return False, untolerated is None
    return True, True
