"""`kubectl rollout status|history|undo|restart` for StatefulSets (k8s.io/kubectl
pkg/polymorphichelpers: rollout_status.go StatefulSetStatusViewer, history.go
StatefulSetHistoryViewer and printHistory, rollback.go StatefulSetRollbacker, findHistory and
statefulsetMatch, objectrestarter.go).

A StatefulSet's history is its ControllerRevisions: each holds one template as a strategic
merge patch, so `undo` sends that patch back to the set, and `history --revision=N` prints the
template it holds (shortened, as rollout.py says). `status` prints the current line and
returns (kubectl's --watch=false).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy, rfc3339
from kubelab.client.client import Client
from kubelab.kubectl.common import print_template

__all__ = ["RolloutStatefulSetError", "stateful_set_rollout", "stateful_set_status"]

CHANGE_CAUSE = "kubernetes.io/change-cause"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


class RolloutStatefulSetError(ValueError):
    """kubectl prints these as `error: ...`; rollout.py raises them as its RolloutError."""


def stateful_set_status(sts: Object) -> str:
    """StatefulSetStatusViewer.Status."""
    spec, st = sts.get("spec") or {}, sts.get("status") or {}
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type") != "RollingUpdate":
        raise RolloutStatefulSetError("rollout status is only available for RollingUpdate strategy type")
    if not st.get("observedGeneration") or sts["metadata"].get("generation", 0) > st["observedGeneration"]:
        return "Waiting for statefulset spec update to be observed..."
    replicas = spec.get("replicas", 1)
    if st.get("readyReplicas", 0) < replicas:
        return f"Waiting for {replicas - st.get('readyReplicas', 0)} pods to be ready..."
    updated = st.get("updatedReplicas", 0)
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        partition = rolling.get("partition")
        if partition is not None and updated < replicas - partition:
            return (f"Waiting for partitioned roll out to finish: {updated} out of "
                    f"{replicas - partition} new pods have been updated...")
        return f"partitioned roll out complete: {updated} new pods have been updated..."
    if st.get("updateRevision") != st.get("currentRevision"):
        return (f"waiting for statefulset rolling update to complete {updated} pods at revision "
                f"{st.get('updateRevision')}...")
    return (f"statefulset rolling update complete {st.get('currentReplicas', 0)} pods at revision "
            f"{st.get('currentRevision')}...")


def stateful_set_history(client: Client, sts: Object) -> list[Object]:
    """statefulSetHistory: the revisions its selector matches that it controls."""
    labels = ",".join(f"{k}={v}" for k, v in
                      sorted(((sts["spec"].get("selector") or {}).get("matchLabels") or {}).items()))
    items = client.list("controllerrevisions", sts["metadata"].get("namespace", "default"),
                        label_selector=labels)["items"]
    uid = sts["metadata"]["uid"]
    return [r for r in items if any(o.get("uid") == uid and o.get("controller")
                                    for o in r["metadata"].get("ownerReferences") or ())]


def _template_of(revision: Object) -> Object:
    template = deep_copy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def history(client: Client, sts: Object, revision: int) -> str:
    """ViewHistory and printHistory."""
    prefix = f"statefulset.apps/{sts['metadata']['name']}"
    by_revision = {int(r.get("revision", 0)): r for r in stateful_set_history(client, sts)}
    if not by_revision:
        return f"{prefix} \nNo rollout history found."
    if revision > 0:
        found = by_revision.get(revision)
        if found is None:
            raise RolloutStatefulSetError("unable to find the specified revision")
        return f"{prefix} with revision #{revision}\n{print_template(_template_of(found))}"
    rows = [("REVISION", "CHANGE-CAUSE")] + [
        (str(r), (by_revision[r]["metadata"].get("annotations") or {}).get(CHANGE_CAUSE) or "<none>")
        for r in sorted(by_revision)]
    width = max(len(r[0]) for r in rows) + 2  # tabwriter: padding 2
    return f"{prefix} \n" + "\n".join(r[0].ljust(width) + r[1] for r in rows) + "\n"


def undo(client: Client, sts: Object, to_revision: int) -> str:
    """StatefulSetRollbacker.Rollback: send the chosen revision's patch back to the set."""
    if to_revision < 0:
        raise RolloutStatefulSetError(f"unable to find specified revision {to_revision} in history")
    revisions = sorted(stateful_set_history(client, sts), key=lambda r: r.get("revision", 0))
    if to_revision == 0 and len(revisions) <= 1:
        raise RolloutStatefulSetError("no last revision to roll back to")
    target = revisions[-2] if to_revision == 0 else \
        next((r for r in revisions if r.get("revision") == to_revision), None)
    if target is None:
        raise RolloutStatefulSetError(f"unable to find specified revision {to_revision} in history")
    current: Any = deep_copy(sts["spec"].get("template") or {})
    current["$patch"] = "replace"
    if {"spec": {"template": current}} == target.get("data"):  # statefulsetMatch
        return f"skipped rollback (current template already matches revision {to_revision})"
    try:
        client.patch("statefulsets", sts["metadata"]["name"], target["data"],
                     sts["metadata"].get("namespace", "default"), patch_type="strategic")
    except ApiError as err:
        raise RolloutStatefulSetError(f"failed restoring revision {to_revision}: {err.message}") from None
    return "rolled back"


def stateful_set_rollout(client: Client, sub: str, sts: Object, namespace: str, now: float,
                         to_revision: int, revision: int) -> str:
    name = sts["metadata"]["name"]
    if sub == "status":
        return stateful_set_status(sts)
    if sub == "history":
        return history(client, sts, revision)
    if sub == "undo":
        return f"statefulset.apps/{name} {undo(client, sts, to_revision)}"
    client.patch("statefulsets", name, {"spec": {"template": {"metadata": {"annotations": {
        RESTARTED_AT: rfc3339(now)}}}}}, namespace, patch_type="strategic")
    return f"statefulset.apps/{name} restarted"
