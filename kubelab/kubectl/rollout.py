"""`kubectl rollout status|history|undo|pause|resume|restart` for Deployments, `status`
and `restart` for DaemonSets (DaemonSetStatusViewer; history and undo of a DaemonSet's
ControllerRevisions are not written yet), and `status|history|undo|restart` for StatefulSets
(rollout_statefulset.py).

Follows kubectl (staging/src/k8s.io/kubectl/pkg/cmd/rollout/ and pkg/polymorphichelpers:
rollout_status.go, history.go, rollback.go, objectpauser.go, objectresumer.go,
objectrestarter.go), with kubectl's exact lines: `deployment.apps/web rolled back`,
`Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...`,
`deployment "web" successfully rolled out`.

Several names (`rollout status deploy a b`) are each handled; one that is not found is
reported after the others' lines, and a second error after the first one a line, as kubectl's
checkErr prints an aggregate.

Two differences: `rollout status` prints the current line and returns, as kubectl does with
--watch=false (kubelab's kubectl has no clock to wait on; loop with cluster.run_until to watch),
and `rollout history --revision=N` prints a short template (labels, annotations, images).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.client.client import Client
from kubelab.kubectl.common import check_errors, get_object, print_template, resource_args
from kubelab.kubectl.rollout_statefulset import RolloutStatefulSetError, stateful_set_rollout

__all__ = ["rollout"]

REVISION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"
HASH_LABEL = "pod-template-hash"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
# Annotations `rollout undo` keeps from the Deployment (deployment_util's annotationsToSkip).
SKIP = {"kubectl.kubernetes.io/last-applied-configuration", REVISION,
        "deployment.kubernetes.io/revision-history", "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas", "deprecated.deployment.rollback.to"}
SUBCOMMANDS = ("history", "pause", "restart", "resume", "status", "undo")


class RolloutError(ValueError):
    """kubectl prints these as `error: ...`."""


def rollout(client: Client, words: list[str], namespace: str = "default", *, now: float = 0.0,
            to_revision: int | None = None, revision: int | None = None) -> str:
    if not words:
        raise RolloutError("You must specify a subcommand: " + ", ".join(SUBCOMMANDS))
    if words[0] not in SUBCOMMANDS:  # DefaultSubCommandRun's RequireNoArguments: every word
        raise RolloutError(f'unknown command "{" ".join(words)}"\n'
                           "See 'kubectl rollout -h' for help and examples")
    sub, rest = words[0], words[1:]
    if not rest or (len(rest) == 1 and "/" not in rest[0]):
        raise RolloutError("required resource not specified")
    looked_up: list[Object | ApiError] = []  # each name's object, or why it is not there
    for info, names in resource_args(client, rest):
        if info.resource == "daemonsets" and sub in ("status", "restart"):
            pass  # a DaemonSet has a status viewer and a restarter (and no history yet)
        elif info.resource == "statefulsets" and sub in ("status", "history", "undo", "restart"):
            pass  # --- i31-sts --- kubectl/rollout_statefulset.py
        elif info.resource != "deployments":
            verb = {"status": "no status viewer has been implemented for",
                    "history": "no history viewer has been implemented for",
                    "undo": "no rollbacker has been implemented for"}.get(sub)
            if verb:
                raise RolloutError(f"{verb} {info.kind}")
            raise RolloutError(f'{info.qualified} "{names[0]}" {sub}ing is not supported'
                               if sub != "restart" else
                               f'{info.qualified} "{names[0]}" restarting is not supported')
        for name in names:
            try:
                looked_up.append(get_object(client, info, name, namespace))
            except ApiError as err:
                looked_up.append(err)
    # status, history and undo visit the objects in order; pause, resume and restart read them
    # all first (their Infos()) and report what was not found before what then failed.
    lines: list[str] = []
    errors: list[Exception] = []
    if sub not in ("status", "history", "undo"):
        errors += [e for e in looked_up if isinstance(e, ApiError)]
    for d in looked_up:
        if isinstance(d, ApiError):
            if sub in ("status", "history", "undo"):
                errors.append(d)
            continue
        try:
            lines.append(_run(client, sub, d, namespace, now, to_revision or 0, revision or 0))
        except (ApiError, RolloutError) as err:
            errors.append(err)
    return check_errors(lines, errors)


def _run(client: Client, sub: str, d: Object, namespace: str, now: float, to_revision: int,
         revision: int) -> str:
    name = d["metadata"]["name"]
    if d.get("kind") == "StatefulSet":  # --- i31-sts ---
        try:
            return stateful_set_rollout(client, sub, d, namespace, now, to_revision, revision)
        except RolloutStatefulSetError as err:
            raise RolloutError(str(err)) from None
    if d.get("kind") == "DaemonSet":
        if sub == "status":
            return daemon_set_status(d)
        client.patch("daemonsets", name, {"spec": {"template": {"metadata": {"annotations": {
            RESTARTED_AT: rfc3339(now)}}}}}, namespace, patch_type="strategic")
        return f"daemonset.apps/{name} restarted"
    prefix = f"deployment.apps/{name}"
    if sub == "status":
        return status(d)
    if sub == "history":
        return history(client, d, revision)
    if sub == "undo":
        return f"{prefix} {undo(client, d, to_revision)}"
    if sub == "pause":
        if d["spec"].get("paused"):
            raise RolloutError(f'deployments.apps "{name}" is already paused')
        client.patch("deployments", name, {"spec": {"paused": True}}, namespace, patch_type="strategic")
        return f"{prefix} paused"
    if sub == "resume":
        if not d["spec"].get("paused"):
            raise RolloutError(f'deployments.apps "{name}" is not paused')
        client.patch("deployments", name, {"spec": {"paused": None}}, namespace, patch_type="strategic")
        return f"{prefix} resumed"
    if d["spec"].get("paused"):
        raise RolloutError(f'deployments.apps "{name}" can\'t restart paused deployment (run rollout '
                           "resume first)")
    client.patch("deployments", name, {"spec": {"template": {"metadata": {"annotations": {
        RESTARTED_AT: rfc3339(now)}}}}}, namespace, patch_type="strategic")
    return f"{prefix} restarted"


def status(d: Object) -> str:
    """DeploymentStatusViewer.Status: one line; "successfully rolled out" when done."""
    name, spec, st = d["metadata"]["name"], d["spec"], d.get("status") or {}
    if d["metadata"].get("generation", 0) > st.get("observedGeneration", 0):
        return "Waiting for deployment spec update to be observed..."
    for c in st.get("conditions") or ():
        if c.get("type") == "Progressing" and c.get("reason") == "ProgressDeadlineExceeded":
            raise RolloutError(f'deployment "{name}" exceeded its progress deadline')
    replicas = spec.get("replicas", 1)
    updated, total = st.get("updatedReplicas", 0), st.get("replicas", 0)
    available = st.get("availableReplicas", 0)
    waiting = f'Waiting for deployment "{name}" rollout to finish: '
    if updated < replicas:
        return f"{waiting}{updated} out of {replicas} new replicas have been updated..."
    if total > updated:
        return f"{waiting}{total - updated} old replicas are pending termination..."
    if available < updated:
        return f"{waiting}{available} of {updated} updated replicas are available..."
    return f'deployment "{name}" successfully rolled out'


def daemon_set_status(ds: Object) -> str:
    """DaemonSetStatusViewer.Status (polymorphichelpers/rollout_status.go)."""
    name, st = ds["metadata"]["name"], ds.get("status") or {}
    if (ds["spec"].get("updateStrategy") or {}).get("type") != "RollingUpdate":
        raise RolloutError("rollout status is only available for RollingUpdate strategy type")
    if ds["metadata"].get("generation", 0) > st.get("observedGeneration", 0):
        return "Waiting for daemon set spec update to be observed..."
    desired, updated = st.get("desiredNumberScheduled", 0), st.get("updatedNumberScheduled", 0)
    waiting = f'Waiting for daemon set "{name}" rollout to finish: '
    if updated < desired:
        return f"{waiting}{updated} out of {desired} new pods have been updated..."
    if st.get("numberAvailable", 0) < desired:
        return f"{waiting}{st.get('numberAvailable', 0)} of {desired} updated pods are available..."
    return f'daemon set "{name}" successfully rolled out'


def _owned(client: Client, d: Object) -> list[Object]:
    """The Deployment's ReplicaSets: selected by its labels and controlled by it."""
    labels = ",".join(f"{k}={v}" for k, v in
                      ((d["spec"].get("selector") or {}).get("matchLabels") or {}).items())
    items = client.list("replicasets", d["metadata"].get("namespace", "default"),
                        label_selector=labels)["items"]
    uid = d["metadata"]["uid"]
    return [rs for rs in items if any(r.get("uid") == uid and r.get("controller")
                                      for r in rs["metadata"].get("ownerReferences") or ())]


def _revision(rs: Object) -> int | None:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, ""))
    except ValueError:
        return None


def history(client: Client, d: Object, revision: int) -> str:
    name = d["metadata"]["name"]
    by_revision = {r: rs for rs in _owned(client, d) if (r := _revision(rs)) is not None}
    if not by_revision:
        return f"deployment.apps/{name} \nNo rollout history found."
    if revision > 0:
        rs = by_revision.get(revision)
        if rs is None:
            raise RolloutError("unable to find the specified revision")
        return f"deployment.apps/{name} with revision #{revision}\n{_template(rs)}"
    rows = [("REVISION", "CHANGE-CAUSE")] + [
        (str(r), (by_revision[r]["metadata"].get("annotations") or {}).get(CHANGE_CAUSE) or "<none>")
        for r in sorted(by_revision)]
    width = max(len(r[0]) for r in rows) + 2  # tabwriter: minwidth 0, padding 2
    return f"deployment.apps/{name} \n" + "\n".join(r[0].ljust(width) + r[1] for r in rows) + "\n"


def _template(rs: Object) -> str:
    return print_template(rs["spec"].get("template") or {})


def undo(client: Client, d: Object, to_revision: int) -> str:
    """DeploymentRollbacker.Rollback: copy the chosen ReplicaSet's template (without its
    pod-template-hash label) and annotations into the Deployment with one JSON patch."""
    name = d["metadata"]["name"]
    if to_revision < 0:
        raise RolloutError(f"unable to find specified revision {to_revision} in history")
    rss = sorted(((r, rs) for rs in _owned(client, d) if (r := _revision(rs)) is not None),
                 key=lambda pair: pair[0])
    if to_revision > 0:
        target = next((rs for r, rs in rss if r == to_revision), None)
        if target is None:
            raise RolloutError(f"unable to find specified revision {to_revision} in history")
    else:
        if len(rss) < 2:
            raise RolloutError(f'no rollout history found for deployment "{name}"')
        target = rss[-2][1]  # the previous revision
    if d["spec"].get("paused"):
        raise RolloutError("you cannot rollback a paused deployment; resume it first with "
                           f"'kubectl rollout resume deployment/{name}' and try again")
    template = dict(target["spec"]["template"])
    meta = dict(template.get("metadata") or {})
    meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    template["metadata"] = meta
    current = dict(d["spec"].get("template") or {})
    current_meta = dict(current.get("metadata") or {})
    current_meta["labels"] = {k: v for k, v in (current_meta.get("labels") or {}).items()
                              if k != HASH_LABEL}
    if {**current, "metadata": current_meta} == template:
        # kubectl prints the flag's value here, 0 when --to-revision was not given.
        return f"skipped rollback (current template already matches revision {to_revision})"
    annotations = {k: v for k, v in (d["metadata"].get("annotations") or {}).items() if k in SKIP}
    annotations.update({k: v for k, v in (target["metadata"].get("annotations") or {}).items()
                        if k not in SKIP})
    patch: Any = [{"op": "replace", "path": "/spec/template", "value": template},
                  {"op": "replace", "path": "/metadata/annotations", "value": annotations}]
    try:
        client.patch("deployments", name, patch, d["metadata"].get("namespace", "default"),
                     patch_type="json")
    except ApiError as err:
        raise RolloutError(f"failed restoring revision {to_revision}: {err.message}") from None
    return "rolled back"
