"""Rollback the old way: the deprecated.deployment.rollback.to annotation (kubernetes/kubernetes
pkg/controller/deployment/rollback.go).

apps/v1 has no spec.rollbackTo; extensions/v1beta1 had it, and the API server still converts
it to this annotation. The controller then copies the pod template of the ReplicaSet with that
revision (0: the previous one) into the Deployment and removes the annotation; the ordinary
rollout does the rest. Today `kubectl rollout undo` does the copying itself, client side
(kubelab.kubectl.rollout), so this path is rarely taken: it is here because the controller
still has it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.client.events import NORMAL, WARNING
from kubelab.controllers.deployment.sync import get_all_replica_sets_and_sync_revision
from kubelab.controllers.deployment.util import (
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY,
    DEPRECATED_ROLLBACK_TO,
    equal_ignore_hash,
    last_revision,
    revision,
    set_deployment_annotations_to,
)

if TYPE_CHECKING:
    from kubelab.controllers.deployment.controller import DeploymentController

__all__ = ["get_rollback_to", "rollback"]

def get_rollback_to(d: Object) -> int | None:
    """The revision asked for, or None (no annotation, or not a number: ignored)."""
    value = (d["metadata"].get("annotations") or {}).get(DEPRECATED_ROLLBACK_TO)
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def rollback(dc: DeploymentController, d: Object, rs_list: list[Object]) -> None:
    new_rs, old_rss = get_all_replica_sets_and_sync_revision(dc, d, rs_list, True)
    all_rss = [rs for rs in [*old_rss, new_rs] if rs is not None]
    to = get_rollback_to(d) or 0
    if to == 0:
        to = last_revision(all_rss)
        if to == 0:
            dc.recorder.event(d, WARNING, "DeploymentRollbackRevisionNotFound",
                              "Unable to find last revision.")
            _update_deployment_and_clear_rollback_to(dc, d)
            return
    for rs in all_rss:
        if revision(rs) == to:
            if _rollback_to_template(dc, d, rs):
                dc.recorder.event(d, NORMAL, "DeploymentRollback",
                                  f'Rolled back deployment "{d["metadata"]["name"]}" to revision {to}')
            return
    dc.recorder.event(d, WARNING, "DeploymentRollbackRevisionNotFound",
                      "Unable to find the revision to rollback to.")
    _update_deployment_and_clear_rollback_to(dc, d)


def _rollback_to_template(dc: DeploymentController, d: Object, rs: Object) -> bool:
    performed = False
    if not equal_ignore_hash(d["spec"].get("template"), rs["spec"].get("template")):
        template = dict(rs["spec"]["template"])
        meta = dict(template.get("metadata") or {})
        labels = {k: v for k, v in (meta.get("labels") or {}).items()
                  if k != DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY}
        meta["labels"] = labels
        template["metadata"] = meta
        d["spec"]["template"] = template
        # Take the ReplicaSet's annotations too, or its change-cause would be overwritten by
        # the Deployment's current one.
        set_deployment_annotations_to(d, rs)
        performed = True
    else:
        dc.recorder.event(d, WARNING, "DeploymentRollbackTemplateUnchanged",
                          "The rollback revision contains the same template as current deployment "
                          f'"{d["metadata"]["name"]}"')
    _update_deployment_and_clear_rollback_to(dc, d)
    return performed


def _update_deployment_and_clear_rollback_to(dc: DeploymentController, d: Object) -> None:
    (d["metadata"].get("annotations") or {}).pop(DEPRECATED_ROLLBACK_TO, None)
    dc.client.update(d)
