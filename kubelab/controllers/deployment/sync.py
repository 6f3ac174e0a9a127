"""Scaling, revisions, history clean-up and status (kubernetes/kubernetes
pkg/controller/deployment/sync.go).

`sync` handles everything that is not a rollout: a paused Deployment and a scaling event
(spec.replicas changed while the template did not). A rollout goes through rolling.py or
recreate.py, which also come here for the new ReplicaSet (get_new_replica_set).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.client.events import NORMAL, WARNING
from kubelab.controllers.controller_utils import has_namespace_terminating_cause, new_controller_ref
from kubelab.controllers.deployment.replicas import (
    has_progress_deadline,
    has_revision_history_limit,
    max_surge,
    max_unavailable,
    new_rs_new_replicas,
    replicas_of,
    sum_status,
)
from kubelab.controllers.deployment.scale import scale
from kubelab.controllers.deployment.util import (
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY,
    DESIRED_REPLICAS_ANNOTATION,
    REVISION_ANNOTATION,
    compute_hash,
    equal_ignore_hash,
    find_new_replica_set,
    find_old_replica_sets,
    get_condition,
    max_revision,
    new_condition,
    revision,
    set_condition,
    set_new_replica_set_annotations,
)
from kubelab.controllers.pod_ranking import filter_active_replica_sets

if TYPE_CHECKING:
    from kubelab.controllers.deployment.controller import DeploymentController

__all__ = ["calculate_status", "check_paused_conditions", "cleanup_deployment",
           "get_all_replica_sets_and_sync_revision", "is_scaling_event", "sync", "sync_status_only"]

def sync_status_only(dc: DeploymentController, d: Object, rs_list: list[Object]) -> None:
    new_rs, old_rss = get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    sync_deployment_status(dc, [*old_rss, new_rs], new_rs, d)


def sync(dc: DeploymentController, d: Object, rs_list: list[Object]) -> None:
    """Reconcile a scaling event or a paused Deployment: no rollout happens here."""
    new_rs, old_rss = get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    scale(dc, d, new_rs, old_rss)
    if d["spec"].get("paused"):  # history is only cleaned when no rollout is under way
        cleanup_deployment(dc, old_rss, d)
    sync_deployment_status(dc, [*old_rss, new_rs], new_rs, d)


def check_paused_conditions(dc: DeploymentController, d: Object) -> None:
    """A paused Deployment says so in its Progressing condition, so that the time it spent
    paused never counts against progressDeadlineSeconds."""
    if not has_progress_deadline(d):
        return
    status = d.setdefault("status", {})
    cond = get_condition(status, "Progressing")
    if cond is not None and cond.get("reason") == "ProgressDeadlineExceeded":
        return  # do not overwrite a reported lack of progress
    paused_cond = cond is not None and cond.get("reason") == "DeploymentPaused"
    if d["spec"].get("paused") and not paused_cond:
        set_condition(status, new_condition("Progressing", "Unknown", "DeploymentPaused",
                                            "Deployment is paused", dc.now))
    elif not d["spec"].get("paused") and paused_cond:
        set_condition(status, new_condition("Progressing", "Unknown", "DeploymentResumed",
                                            "Deployment is resumed", dc.now))
    else:
        return
    _update_status(dc, d)


def _update_status(dc: DeploymentController, d: Object) -> None:
    updated = dc.client.update_status(d)
    # Later writes in this sync start from what the server now has (ours, not upstream's:
    # upstream writes again with the old resourceVersion and retries after a conflict).
    d["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]


def get_all_replica_sets_and_sync_revision(dc: DeploymentController, d: Object, rs_list: list[Object],
                                           create: bool) -> tuple[Object | None, list[Object]]:
    """The new ReplicaSet (created if asked and missing) with its revision synced, and all
    the old ones."""
    _, all_old = find_old_replica_sets(d, rs_list)
    return get_new_replica_set(dc, d, rs_list, all_old, create), all_old


def get_new_replica_set(dc: DeploymentController, d: Object, rs_list: list[Object],
                        old_rss: list[Object], create: bool) -> Object | None:
    existing = find_new_replica_set(d, rs_list)
    new_revision = str(max_revision(old_rss) + 1)
    status = d.setdefault("status", {})
    if existing is not None:
        # Upstream copies the ReplicaSet before it sets the annotations. Every sync comes
        # here (twice), and almost never changes anything: we try them on a copy of the
        # annotations alone, and copy the ReplicaSet only to write it. Unchanged, it is
        # returned as the cache has it, read-only like the old ReplicaSets.
        annotations = dict(existing["metadata"].get("annotations") or {})
        changed = set_new_replica_set_annotations(d, {"metadata": {"annotations": annotations}},
                                                  new_revision, True, max_surge(d))
        min_ready = d["spec"].get("minReadySeconds", 0)
        if changed or existing["spec"].get("minReadySeconds", 0) != min_ready:
            rs = deep_copy(existing)
            rs["metadata"]["annotations"] = annotations
            rs["spec"]["minReadySeconds"] = min_ready
            return dc.client.update(rs)
        rs = existing
        needs_update = _set_deployment_revision(d, (rs["metadata"].get("annotations") or {})
                                                .get(REVISION_ANNOTATION, ""))
        if has_progress_deadline(d) and get_condition(status, "Progressing") is None:
            set_condition(status, new_condition("Progressing", "True", "FoundNewReplicaSet",
                                                f'Found new replica set "{rs["metadata"]["name"]}"',
                                                dc.now))
            needs_update = True
        if needs_update:
            _update_status(dc, d)
        return rs
    if not create:
        return None
    # No ReplicaSet has the Deployment's template yet: make one, named after the hash of it.
    template = deep_copy(d["spec"]["template"])
    pod_hash = compute_hash(template, status.get("collisionCount"))
    labels = {**(template.get("metadata") or {}).get("labels", {}),
              DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: pod_hash}
    template.setdefault("metadata", {})["labels"] = labels
    selector = deep_copy(d["spec"]["selector"])
    selector.setdefault("matchLabels", {})[DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY] = pod_hash
    namespace = d["metadata"].get("namespace", "default")
    new_rs: Object = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": f"{d['metadata']['name']}-{pod_hash}", "namespace": namespace,
                     "ownerReferences": [new_controller_ref(d)], "labels": dict(labels)},
        "spec": {"replicas": 0, "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                 "selector": selector, "template": template}}
    replicas = new_rs_new_replicas(d, [*old_rss, new_rs], new_rs)
    new_rs["spec"]["replicas"] = replicas
    set_new_replica_set_annotations(d, new_rs, new_revision, False, max_surge(d))
    already_exists = False
    try:
        created = dc.client.create(new_rs, namespace)
    except ApiError as err:
        if err.code == 409 and err.reason == "AlreadyExists":
            created = _resolve_already_exists(dc, d, new_rs, err)
            already_exists = True
        elif has_namespace_terminating_cause(err):
            raise
        else:
            message = f'Failed to create new replica set "{new_rs["metadata"]["name"]}": {err.message}'
            if has_progress_deadline(d):
                set_condition(status, new_condition("Progressing", "False", "ReplicaSetCreateError",
                                                    message, dc.now))
                with contextlib.suppress(ApiError):  # the bigger problem is the one reported
                    _update_status(dc, d)
            dc.recorder.event(d, WARNING, "ReplicaSetCreateError", message)
            raise
    if not already_exists and replicas > 0:
        dc.recorder.event(d, NORMAL, "ScalingReplicaSet",
                          f"Scaled up replica set {created['metadata']['name']} from 0 to {replicas}")
    needs_update = _set_deployment_revision(d, new_revision)
    if not already_exists and has_progress_deadline(d):
        set_condition(status, new_condition("Progressing", "True", "NewReplicaSetCreated",
                                            f'Created new replica set "{created["metadata"]["name"]}"',
                                            dc.now))
        needs_update = True
    if needs_update:
        _update_status(dc, d)
    return created


def _resolve_already_exists(dc: DeploymentController, d: Object, new_rs: Object,
                            err: ApiError) -> Object:
    """Our cache was late (the ReplicaSet is ours) or two templates hashed alike: then bump
    status.collisionCount, so the next attempt hashes differently, and fail this sync."""
    meta = new_rs["metadata"]
    rs, exists = dc.rs_indexer.get_by_key(f"{meta['namespace']}/{meta['name']}")
    if not exists:
        rs = dc.client.get("replicasets", meta["name"], meta["namespace"])
    ref = next((r for r in rs["metadata"].get("ownerReferences") or () if r.get("controller")), None)
    if ref is not None and ref.get("uid") == d["metadata"]["uid"] and \
            equal_ignore_hash(d["spec"]["template"], rs["spec"].get("template")):
        return rs  # type: ignore[no-any-return]
    status = d.setdefault("status", {})
    status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
    dc.client.update_status(d)
    raise err


def _set_deployment_revision(d: Object, value: str) -> bool:
    """SetDeploymentRevision: the Deployment carries its newest revision as an annotation."""
    annotations = d["metadata"].setdefault("annotations", {})
    if annotations.get(REVISION_ANNOTATION) == value:
        return False
    annotations[REVISION_ANNOTATION] = value
    return True


def cleanup_deployment(dc: DeploymentController, old_rss: list[Object], d: Object) -> None:
    """Delete the oldest old ReplicaSets beyond revisionHistoryLimit, if they are empty."""
    if not has_revision_history_limit(d):
        return
    alive = [rs for rs in old_rss if rs is not None and not rs["metadata"].get("deletionTimestamp")]
    diff = len(alive) - int(d["spec"]["revisionHistoryLimit"])
    if diff <= 0:
        return
    for rs in sorted(alive, key=lambda r: (revision(r), r["metadata"]["name"]))[:diff]:
        status, meta = rs.get("status") or {}, rs["metadata"]
        if status.get("replicas", 0) != 0 or replicas_of(rs) != 0 or \
                meta.get("generation", 0) > status.get("observedGeneration", 0):
            continue  # never delete a ReplicaSet that still has (or may have) pods
        try:
            dc.client.delete("replicasets", meta["name"], meta.get("namespace", "default"))
        except ApiError as err:
            if err.code != 404:
                raise


def calculate_status(all_rss: list[Object | None], new_rs: Object | None, d: Object,
                     now: float) -> Object:
    """calculateStatus: the counts summed over the ReplicaSets, and the Available condition."""
    available = sum_status(all_rss, "availableReplicas")
    total = sum(replicas_of(rs) for rs in all_rss if rs is not None)
    old = d.get("status") or {}
    status: Object = {
        "observedGeneration": d["metadata"].get("generation", 0),
        "replicas": sum_status(all_rss, "replicas"),
        "updatedReplicas": sum_status([new_rs], "replicas"),
        "readyReplicas": sum_status(all_rss, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(0, total - available),
    }
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        status["conditions"] = deep_copy(old["conditions"])
    if available >= replicas_of(d) - max_unavailable(d):
        set_condition(status, new_condition("Available", "True", "MinimumReplicasAvailable",
                                            "Deployment has minimum availability.", now))
    else:
        set_condition(status, new_condition("Available", "False", "MinimumReplicasUnavailable",
                                            "Deployment does not have minimum availability.", now))
    return status


def sync_deployment_status(dc: DeploymentController, all_rss: list[Object | None],
                           new_rs: Object | None, d: Object) -> None:
    status = calculate_status(all_rss, new_rs, d, dc.now)
    if d.get("status") == status:
        return
    d["status"] = status
    dc.client.update_status(d)


def is_scaling_event(dc: DeploymentController, d: Object, rs_list: list[Object]) -> bool:
    """A scaling event: some active ReplicaSet was made for a different spec.replicas (its
    desired-replicas annotation says so) while the template stayed the same."""
    new_rs, old_rss = get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    for rs in filter_active_replica_sets([*old_rss, new_rs]):
        desired = (rs["metadata"].get("annotations") or {}).get(DESIRED_REPLICAS_ANNOTATION)
        try:
            if desired is not None and int(desired) != replicas_of(d):
                return True
        except ValueError:
            continue
    return False
