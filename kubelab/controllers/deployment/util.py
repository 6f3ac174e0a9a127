"""deployment_util.go, part one: revisions, annotations, the pod-template-hash and how a
Deployment recognises its new and old ReplicaSets (kubernetes/kubernetes
pkg/controller/deployment/util/deployment_util.go, pkg/controller/controller_utils.go
ComputeHash).

A departure: EqualIgnoreHash compares with Python's `==`, not Semantic.DeepEqual, so a labels
map the deletion of the hash leaves empty, and a metadata left empty, are dropped first (Go
would take them for nil); any other empty map still differs from a missing one.
"""

from __future__ import annotations

import json

from kubelab.api import Object
from kubelab.api.meta import deep_copy, rfc3339
from kubelab.controllers.pod_ranking import sort_by_creation_timestamp

__all__ = [
    "DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY",
    "DEPRECATED_ROLLBACK_TO",
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_REPLICAS_ANNOTATION",
    "REVISION_ANNOTATION",
    "REVISION_HISTORY_ANNOTATION",
    "compute_hash",
    "copy_deployment_annotations_to_replica_set",
    "equal_ignore_hash",
    "find_new_replica_set",
    "find_old_replica_sets",
    "get_condition",
    "last_revision",
    "max_revision",
    "new_condition",
    "remove_condition",
    "revision",
    "set_condition",
    "set_deployment_annotations_to",
    "set_new_replica_set_annotations",
    "set_replicas_annotations",
]

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
DEPRECATED_ROLLBACK_TO = "deprecated.deployment.rollback.to"
DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000  # sync.go
# Annotations a Deployment never copies to its ReplicaSets (and back, on rollback).
ANNOTATIONS_TO_SKIP = frozenset({LAST_APPLIED, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
                                 DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION,
                                 DEPRECATED_ROLLBACK_TO})
# utilrand's alphabet: SafeEncodeString maps each character of the hash onto it.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


# ---------------------------------------------------------------- the pod-template-hash


def _fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def compute_hash(template: Object, collision_count: int | None = None) -> str:
    """ComputeHash: FNV-1a (32 bit) of the pod template, then the collision count (8 bytes,
    little endian), printed in decimal and each digit mapped onto utilrand's alphabet.

    One difference, on purpose: upstream hashes a spew dump of the Go struct; we hash the
    template's canonical JSON (sorted keys, no spaces). Same algorithm, different bytes, so
    kubelab's hashes do not equal a real cluster's for the same template."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    h = _fnv32a(data)
    if collision_count is not None:
        h = _fnv32a((collision_count & 0xFFFFFFFF).to_bytes(8, "little"), h)
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def equal_ignore_hash(template1: Object | None, template2: Object | None) -> bool:
    """EqualIgnoreHash: the same pod template, ignoring the pod-template-hash label.

    As upstream: copy both templates, delete the label from the copies' labels, compare.
    Python's `==` on the JSON trees stands for apiequality.Semantic.DeepEqual, with one
    adjustment that Go's types make for free: a labels map the deletion leaves empty, and a
    metadata left empty, are dropped (Go's DeepEqual takes an empty map for nil, and a zero
    ObjectMeta is what a missing one decodes to). The copies are meta.deep_copy, kubelab's
    generated-DeepCopy counterpart (a JSON tree copied node by node)."""
    t1_copy = deep_copy(template1 or {})
    t2_copy = deep_copy(template2 or {})
    # Remove hash labels from the templates' labels before comparing.
    _delete_label(t1_copy, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY)
    _delete_label(t2_copy, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY)
    return t1_copy == t2_copy


def _delete_label(template: Object, key: str) -> None:
    """delete(template.Labels, key), then drop what the deletion left empty (see above)."""
    meta = template.get("metadata")
    if isinstance(meta, dict):
        labels = meta.get("labels")
        if isinstance(labels, dict):
            labels.pop(key, None)
        if "labels" in meta and not labels:
            del meta["labels"]
    if "metadata" in template and not meta:
        del template["metadata"]


def find_new_replica_set(deployment: Object, rss: list[Object]) -> Object | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's."""
    template = deployment["spec"].get("template")
    for rs in sort_by_creation_timestamp(rss):
        if equal_ignore_hash(rs["spec"].get("template"), template):
            return rs
    return None


def find_old_replica_sets(deployment: Object, rss: list[Object]) -> tuple[list[Object], list[Object]]:
    """FindOldReplicaSets: (old ones with replicas > 0, all old ones)."""
    new = find_new_replica_set(deployment, rss)
    new_uid = new["metadata"]["uid"] if new is not None else None
    old = [rs for rs in rss if rs["metadata"]["uid"] != new_uid]
    return [rs for rs in old if rs["spec"].get("replicas", 1) != 0], old


# ---------------------------------------------------------------- revisions and annotations


def revision(obj: Object | None) -> int:
    """Revision: the revision annotation as a number (0 when missing, -1 when unparsable)."""
    value = ((obj or {}).get("metadata", {}).get("annotations") or {}).get(REVISION_ANNOTATION)
    if value is None:
        return 0
    try:
        return int(value)
    except ValueError:
        return -1


def max_revision(rss: list[Object]) -> int:
    return max((revision(rs) for rs in rss), default=0)


def last_revision(rss: list[Object]) -> int:
    """LastRevision: the second highest revision (the one before the current)."""
    top = second = 0
    for rs in rss:
        v = revision(rs)
        if v >= top:
            top, second = v, top
        elif v > second:
            second = v
    return second


def _annotations(obj: Object) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    if meta.get("annotations") is None:
        meta["annotations"] = {}
    return meta["annotations"]  # type: ignore[no-any-return]


def copy_deployment_annotations_to_replica_set(deployment: Object, rs: Object) -> bool:
    """Copy the Deployment's annotations (but not the skipped ones) to rs; True if changed."""
    changed = False
    rs_annotations = _annotations(rs)
    for key, value in (deployment["metadata"].get("annotations") or {}).items():
        if key in ANNOTATIONS_TO_SKIP or rs_annotations.get(key) == value:
            continue
        rs_annotations[key] = value
        changed = True
    return changed


def set_deployment_annotations_to(deployment: Object, rs: Object) -> None:
    """SetDeploymentAnnotationsTo: on rollback, the Deployment takes the annotations of the
    ReplicaSet it rolls back to (change-cause included), keeping its own skipped ones."""
    annotations = {k: v for k, v in (deployment["metadata"].get("annotations") or {}).items()
                   if k in ANNOTATIONS_TO_SKIP}
    for key, value in (rs["metadata"].get("annotations") or {}).items():
        if key not in ANNOTATIONS_TO_SKIP:
            annotations[key] = value
    deployment["metadata"]["annotations"] = annotations


def set_replicas_annotations(rs: Object, desired: int, max_replicas: int) -> bool:
    annotations = _annotations(rs)
    changed = False
    for key, value in ((DESIRED_REPLICAS_ANNOTATION, str(desired)),
                       (MAX_REPLICAS_ANNOTATION, str(max_replicas))):
        if annotations.get(key) != value:
            annotations[key] = value
            changed = True
    return changed


def set_new_replica_set_annotations(deployment: Object, rs: Object, new_revision: str, exists: bool,
                                    max_surge: int) -> bool:
    """SetNewReplicaSetAnnotations: copy annotations, raise the revision to new_revision (never
    lower it), remember the revisions a rolled-back-to ReplicaSet had in revision-history."""
    changed = copy_deployment_annotations_to_replica_set(deployment, rs)
    annotations = _annotations(rs)
    old = annotations.get(REVISION_ANNOTATION)
    try:
        old_int = int(old) if old else 0
    except ValueError:
        return False
    if old_int < int(new_revision):
        annotations[REVISION_ANNOTATION] = new_revision
        changed = True
        if old is not None:  # rolling back to this ReplicaSet: keep its old revision number
            history = annotations.get(REVISION_HISTORY_ANNOTATION, "")
            revisions = [r for r in history.split(",") if r] if history else []
            while revisions and len(",".join([*revisions, old])) > MAX_REV_HISTORY_LENGTH_IN_CHARS:
                revisions.pop(0)
            annotations[REVISION_HISTORY_ANNOTATION] = ",".join([*revisions, old])
    replicas = int(deployment["spec"].get("replicas", 1))
    if not exists and set_replicas_annotations(rs, replicas, replicas + max_surge):
        changed = True
    return changed


# ---------------------------------------------------------------- conditions


def new_condition(type_: str, status: str, reason: str, message: str, now: float) -> Object:
    stamp = rfc3339(now)
    return {"type": type_, "status": status, "lastUpdateTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def get_condition(status: Object, type_: str) -> Object | None:
    for condition in status.get("conditions") or ():
        if condition.get("type") == type_:
            return condition  # type: ignore[no-any-return]
    return None


def set_condition(status: Object, condition: Object) -> None:
    """SetDeploymentCondition: no change for the same status and reason; lastTransitionTime
    survives when only the reason changes."""
    current = get_condition(status, condition["type"])
    if current is not None and current.get("status") == condition["status"] and \
            current.get("reason") == condition["reason"]:
        return
    if current is not None and current.get("status") == condition["status"]:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(status, condition["type"])
    status.setdefault("conditions", []).append(condition)


def remove_condition(status: Object, type_: str) -> None:
    conditions = [c for c in status.get("conditions") or () if c.get("type") != type_]
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
