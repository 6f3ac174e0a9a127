"""A StatefulSet's pods: names, identities, storage and revisions (kubernetes/kubernetes
pkg/controller/statefulset/stateful_set_utils.go).

Pod `<set>-<ordinal>` of a StatefulSet keeps its name, its hostname (the name) and subdomain
(spec.serviceName), and its claims `<template>-<set>-<ordinal>` whatever node it runs on and
however often it is recreated. Ordinals run from spec.ordinals.start (0 by default) to
start + replicas - 1. A pod carries its identity in the labels statefulset.kubernetes.io/pod-name
and apps.kubernetes.io/pod-index, and its revision in controller-revision-hash: the name of the
ControllerRevision (`<set>-<hash>`) whose template it was made from.
"""

from __future__ import annotations

import re

from kubelab.api import Object
from kubelab.api.meta import deep_copy
from kubelab.controllers.controller_utils import is_pod_available, is_pod_ready, new_controller_ref

__all__ = [
    "CONTROLLER_REVISION_HASH",
    "POD_INDEX_LABEL",
    "STATEFUL_SET_POD_NAME_LABEL",
    "allows_burst",
    "apply_revision",
    "get_end_ordinal",
    "get_ordinal",
    "get_parent_name_and_ordinal",
    "get_patch",
    "get_persistent_volume_claim_name",
    "get_persistent_volume_claims",
    "get_pod_name",
    "get_pod_revision",
    "get_start_ordinal",
    "identity_matches",
    "is_created",
    "is_failed",
    "is_healthy",
    "is_member_of",
    "is_pending",
    "is_running_and_available",
    "is_running_and_ready",
    "is_succeeded",
    "is_terminating",
    "new_stateful_set_pod",
    "new_versioned_stateful_set_pod",
    "pod_in_ordinal_range",
    "set_pod_revision",
    "storage_matches",
    "update_identity",
    "update_storage",
]

STATEFUL_SET_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"   # apps.StatefulSetPodNameLabel
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"                      # apps.PodIndexLabel (GA 1.32)
CONTROLLER_REVISION_HASH = "controller-revision-hash"                 # apps.ControllerRevisionHashLabelKey

# statefulPodRegex: the set's name, a dash, the ordinal.
_STATEFUL_POD = re.compile(r"(.*)-([0-9]+)$")


def get_parent_name_and_ordinal(pod: Object) -> tuple[str, int]:
    """getParentNameAndOrdinal: ("", -1) for a name that is not <parent>-<ordinal>."""
    match = _STATEFUL_POD.fullmatch(pod["metadata"].get("name", ""))
    if match is None:
        return "", -1
    return match.group(1), int(match.group(2))


def get_ordinal(pod: Object) -> int:
    return get_parent_name_and_ordinal(pod)[1]


def get_start_ordinal(sts: Object) -> int:
    """getStartOrdinal: spec.ordinals.start, or 0."""
    return int(((sts.get("spec") or {}).get("ordinals") or {}).get("start") or 0)


def get_end_ordinal(sts: Object) -> int:
    return get_start_ordinal(sts) + int(sts["spec"].get("replicas", 1)) - 1


def pod_in_ordinal_range(pod: Object, sts: Object) -> bool:
    ordinal = get_ordinal(pod)
    return get_start_ordinal(sts) <= ordinal <= get_end_ordinal(sts)


def get_pod_name(sts: Object, ordinal: int) -> str:
    return f"{sts['metadata']['name']}-{ordinal}"


def get_persistent_volume_claim_name(sts: Object, claim: Object, ordinal: int) -> str:
    """`<template>-<set>-<ordinal>`: www-web-0."""
    return f"{claim['metadata']['name']}-{sts['metadata']['name']}-{ordinal}"


def is_member_of(sts: Object, pod: Object) -> bool:
    return bool(get_parent_name_and_ordinal(pod)[0] == sts["metadata"]["name"])


def identity_matches(sts: Object, pod: Object) -> bool:
    """identityMatches: the name, namespace and identity labels are the ordinal's."""
    parent, ordinal = get_parent_name_and_ordinal(pod)
    labels = pod["metadata"].get("labels") or {}
    return (ordinal >= 0 and parent == sts["metadata"]["name"] and
            pod["metadata"]["name"] == get_pod_name(sts, ordinal) and
            pod["metadata"].get("namespace") == sts["metadata"].get("namespace") and
            labels.get(STATEFUL_SET_POD_NAME_LABEL) == pod["metadata"]["name"] and
            labels.get(POD_INDEX_LABEL) == str(ordinal))


def storage_matches(sts: Object, pod: Object) -> bool:
    """storageMatches: each claim template is a volume of the pod naming the ordinal's claim."""
    ordinal = get_ordinal(pod)
    if ordinal < 0:
        return False
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or ()}
    for claim in sts["spec"].get("volumeClaimTemplates") or ():
        volume = volumes.get(claim["metadata"]["name"])
        source = (volume or {}).get("persistentVolumeClaim")
        if not source or source.get("claimName") != get_persistent_volume_claim_name(sts, claim, ordinal):
            return False
    return True


def get_persistent_volume_claims(sts: Object, pod: Object) -> dict[str, Object]:
    """getPersistentVolumeClaims: template name -> the claim for this pod's ordinal, labelled
    with the set's selector's matchLabels."""
    ordinal = get_ordinal(pod)
    match_labels = ((sts["spec"].get("selector") or {}).get("matchLabels") or {})
    claims: dict[str, Object] = {}
    for template in sts["spec"].get("volumeClaimTemplates") or ():
        claim = deep_copy(template)
        claim.pop("status", None)
        meta = claim["metadata"]
        meta["name"] = get_persistent_volume_claim_name(sts, template, ordinal)
        meta["namespace"] = sts["metadata"].get("namespace", "default")
        meta["labels"] = {**(meta.get("labels") or {}), **match_labels}
        claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"
        claims[template["metadata"]["name"]] = claim
    return claims


def update_storage(sts: Object, pod: Object) -> None:
    """updateStorage: one persistentVolumeClaim volume per template (in the templates' order,
    where upstream ranges over a map), then the pod's other volumes."""
    claims = get_persistent_volume_claims(sts, pod)
    spec = pod.setdefault("spec", {})
    volumes = [{"name": name, "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
               for name, claim in claims.items()]
    volumes += [v for v in spec.get("volumes") or () if v.get("name") not in claims]
    if volumes:
        spec["volumes"] = volumes


def update_identity(sts: Object, pod: Object) -> None:
    """updateIdentity: the ordinal's name and namespace, and the identity labels."""
    ordinal = get_ordinal(pod)
    meta = pod["metadata"]
    meta["name"] = get_pod_name(sts, ordinal)
    meta["namespace"] = sts["metadata"].get("namespace", "default")
    labels = meta.setdefault("labels", {})
    labels[STATEFUL_SET_POD_NAME_LABEL] = meta["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)


def init_identity(sts: Object, pod: Object) -> None:
    """initIdentity: updateIdentity, and the hostname and subdomain that give the pod its DNS
    name `<pod>.<serviceName>`."""
    update_identity(sts, pod)
    spec = pod.setdefault("spec", {})
    spec["hostname"] = pod["metadata"]["name"]
    if sts["spec"].get("serviceName"):
        spec["subdomain"] = sts["spec"]["serviceName"]


def is_running_and_ready(pod: Object) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_ready(pod)


def is_running_and_available(pod: Object, min_ready_seconds: int, now: float) -> bool:
    return is_pod_available(pod, min_ready_seconds, now)


def is_created(pod: Object) -> bool:
    """isCreated: the pod has a phase, so it came from the API (a pod still to be created has none)."""
    return bool((pod.get("status") or {}).get("phase"))


def is_pending(pod: Object) -> bool:
    return (pod.get("status") or {}).get("phase") == "Pending"


def is_failed(pod: Object) -> bool:
    return (pod.get("status") or {}).get("phase") == "Failed"


def is_succeeded(pod: Object) -> bool:
    return (pod.get("status") or {}).get("phase") == "Succeeded"


def is_terminating(pod: Object) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_healthy(pod: Object) -> bool:
    return is_running_and_ready(pod) and not is_terminating(pod)


def allows_burst(sts: Object) -> bool:
    """allowsBurst: Parallel pod management creates and deletes without waiting."""
    return bool(sts["spec"].get("podManagementPolicy") == "Parallel")


def set_pod_revision(pod: Object, revision: str) -> None:
    pod["metadata"].setdefault("labels", {})[CONTROLLER_REVISION_HASH] = revision


def get_pod_revision(pod: Object) -> str:
    return str((pod["metadata"].get("labels") or {}).get(CONTROLLER_REVISION_HASH, ""))


def new_stateful_set_pod(sts: Object, ordinal: int) -> Object:
    """newStatefulSetPod: GetPodFromTemplate with the set as controller, then the ordinal's
    identity and storage. It has no status yet (is_created says no)."""
    template = sts["spec"].get("template") or {}
    meta = template.get("metadata") or {}
    pod_meta: Object = {"name": get_pod_name(sts, ordinal),
                        "namespace": sts["metadata"].get("namespace", "default"),
                        "ownerReferences": [new_controller_ref(sts)]}
    for field in ("labels", "annotations"):
        if meta.get(field):
            pod_meta[field] = dict(meta[field])
    if meta.get("finalizers"):
        pod_meta["finalizers"] = list(meta["finalizers"])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
           "spec": deep_copy(template.get("spec") or {})}
    init_identity(sts, pod)
    update_storage(sts, pod)
    return pod


def new_versioned_stateful_set_pod(current_set: Object, update_set: Object, current_revision: str,
                                   update_revision: str, ordinal: int) -> Object:
    """newVersionedStatefulSetPod: below the partition (or, without a rollingUpdate, below
    status.currentReplicas) a recreated pod keeps the current revision; else the update one."""
    strategy = current_set["spec"].get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate")
    start = get_start_ordinal(current_set)
    if strategy.get("type") == "RollingUpdate" and (
            (rolling is None and
             ordinal < start + int((current_set.get("status") or {}).get("currentReplicas") or 0)) or
            (rolling is not None and ordinal < start + int(rolling.get("partition") or 0))):
        pod = new_stateful_set_pod(current_set, ordinal)
        set_pod_revision(pod, current_revision)
        return pod
    pod = new_stateful_set_pod(update_set, ordinal)
    set_pod_revision(pod, update_revision)
    return pod


def get_patch(sts: Object) -> Object:
    """getPatch: the template alone, as a strategic merge patch that replaces it whole. It is
    the ControllerRevision's data."""
    template = deep_copy(sts["spec"].get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def apply_revision(sts: Object, revision: Object) -> Object:
    """ApplyRevision: a copy of the set with the revision's template (its patch replaces the
    template whole, so applying it is taking that template)."""
    clone = deep_copy(sts)
    template = deep_copy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    clone["spec"]["template"] = template
    return clone

