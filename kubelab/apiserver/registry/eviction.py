"""pods/<name>/eviction: a delete that asks first (what `kubectl drain` sends for each pod).

kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go (EvictionREST.Create):

1. a pod that has finished, is Pending or is already being deleted is deleted at once: it
   cannot disrupt anything more (canIgnorePDB);
2. otherwise the PodDisruptionBudgets whose selector matches the pod are found
   (getPodDisruptionBudgets): none, the pod is deleted; more than one is a 500;
3. an unready pod may go without spending the budget when the budget is healthy
   (currentHealthy >= desiredHealthy > 0), or always with unhealthyPodEvictionPolicy
   AlwaysAllow; its delete then carries the resourceVersion it was judged at;
4. otherwise checkAndDecrement: a budget the disruption controller has not caught up with
   (observedGeneration behind), or with no disruption left, answers 429 TooManyRequests
   "Cannot evict pod as it would violate the pod's disruption budget." with the reason as a
   DisruptionBudget cause; a budget that allows one is decremented, and the pod is written into
   status.disruptedPods (so the controller does not count it healthy while it goes), retried
   on conflicts with a fresh read;
5. the pod gets the DisruptionTarget condition (reason EvictionByEvictionAPI) and is deleted
   with the Eviction's deleteOptions (addConditionAndDeletePod). The answer is a Success Status.

The budget's update goes through this server's own registry (upstream: its loopback client),
so admission and validation run on it as on any write.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError, conflict, forbidden, internal_error
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import rfc3339
from kubelab.api.poddisruptionbudget import update_disruption_allowed_condition
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.apis.schema import SCHEMAS
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.endpoints.decode import decode_body
from kubelab.apiserver.endpoints.subresources import check_name
from kubelab.apiserver.registry.deletion import delete_object
from kubelab.apiserver.storage.codec import decode

if TYPE_CHECKING:
    from kubelab.apiserver.registry.store import Registry

__all__ = ["EVICTION", "VIOLATES_BUDGET", "evict"]

EVICTION = ResourceInfo("evictions", "Eviction", group="policy")
VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
MAX_DISRUPTED_POD_SIZE = 2000
EVICTIONS_RETRY = 20  # EvictionsRetry's steps


def create_too_many_requests_error(message: str, cause: str, retry_after: int) -> ApiError:
    """errors.NewTooManyRequests with the budget's reason as a cause."""
    details: dict[str, Any] = {"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]}
    if retry_after > 0:
        details["retryAfterSeconds"] = retry_after
    return ApiError(429, "TooManyRequests", message, details)


def can_ignore_pdb(pod: Object) -> bool:
    """canIgnorePDB: a finished or Pending pod, or one already being deleted."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def should_enforce_resource_version(pod: Object) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def _is_pod_ready(pod: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def evict(registry: Registry, ctx: RequestContext, body: Any) -> Object:
    r = ctx.request
    ctx.enter("decode")
    eviction = decode_body(body, EVICTION, SCHEMAS["Eviction"])
    check_name(eviction, r.name)
    options = dict(eviction.get("deleteOptions") or {})
    if r.dry_run and not options.get("dryRun"):
        options["dryRun"] = ["All"]
    dry_run = options.get("dryRun") == ["All"]
    kv = registry.read(ctx, r.namespace, r.name)
    pod = decode(kv.value, kv.mod_revision)
    rv_unset = not (options.get("preconditions") or {}).get("resourceVersion")
    if can_ignore_pdb(pod):
        delete_options = options
        if should_enforce_resource_version(pod) and rv_unset:
            delete_options = _with_resource_version(options, pod)
        add_condition_and_delete_pod(registry, ctx, delete_options, dry_run)
        return _success()

    pdbs = get_pod_disruption_budgets(ctx, pod)
    if len(pdbs) > 1:
        # Upstream returns this Status (code 500, no reason) as the result: the client sees
        # an HTTP 500 with it, as raising it here gives.
        raise ApiError(500, "", "This pod has more than one PodDisruptionBudget, which the "
                       "eviction subresource does not support.")
    update_deletion_options = False
    pdb_name = ""
    if pdbs:
        pdb = pdbs[0]
        pdb_name = pdb["metadata"]["name"]
        spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
        healthy_budget = status.get("currentHealthy", 0) >= status.get("desiredHealthy", 0) > 0
        if not _is_pod_ready(pod) and (spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                                       or healthy_budget):
            # An unready pod does not count as healthy: deleting it disrupts nothing more.
            update_deletion_options = True
        else:
            for attempt in range(EVICTIONS_RETRY):
                if attempt:
                    pdb = _get_pdb(ctx, r.namespace, pdb_name)
                try:
                    check_and_decrement(ctx, r.name, pdb, dry_run)
                    break
                except ApiError as err:
                    if err.code != 409:
                        raise
            else:
                raise ApiError(504, "Timeout", f'couldn\'t update PodDisruptionBudget "{pdb_name}" '
                               "due to conflicts", {"retryAfterSeconds": 10})

    delete_options = options
    if update_deletion_options:
        delete_options = _with_resource_version(options, pod)
    try:
        add_condition_and_delete_pod(registry, ctx, delete_options, dry_run)
    except ApiError as err:
        if err.code == 409 and update_deletion_options and rv_unset:
            # The pod changed since it was judged: the client should try again.
            raise create_too_many_requests_error(
                VIOLATES_BUDGET, f"The disruption budget {pdb_name} is still being processed by "
                "the server.", 10) from None
        raise
    return _success()


def _success() -> Object:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _with_resource_version(options: dict[str, Any], pod: Object) -> dict[str, Any]:
    preconditions = {**(options.get("preconditions") or {}),
                     "resourceVersion": pod["metadata"]["resourceVersion"]}
    return {**options, "preconditions": preconditions}


def _pdb_context(ctx: RequestContext, verb: str, name: str, subresource: str = "") -> RequestContext:
    served = ctx.server.served.lookup("policy", "poddisruptionbudgets")
    if served is None:
        raise internal_error("poddisruptionbudgets.policy is not served")
    request = dataclasses.replace(ctx.request, verb=verb, resource="poddisruptionbudgets",
                                  group="policy", version="v1", name=name,
                                  subresource=subresource, body=None, options={}, dry_run=False)
    return RequestContext(request, served, ctx.user, ctx.record, ctx.server)


def _get_pdb(ctx: RequestContext, namespace: str, name: str) -> Object:
    pdb_ctx = _pdb_context(ctx, "get", name)
    return ctx.server.registry.get(pdb_ctx)


def get_pod_disruption_budgets(ctx: RequestContext, pod: Object) -> list[Object]:
    """getPodDisruptionBudgets: the budgets in the pod's namespace whose selector matches it
    (an invalid selector matches nothing; in policy/v1 an empty one matches every pod)."""
    namespace = pod["metadata"].get("namespace", "")
    labels = pod["metadata"].get("labels") or {}
    pdbs = []
    for pdb in ctx.server.served.list_objects("poddisruptionbudgets", "policy", namespace):
        try:
            selector = selector_from_label_selector((pdb.get("spec") or {}).get("selector"))
        except ParseError:
            continue
        if selector.matches(labels):
            pdbs.append(pdb)
    return pdbs


def check_and_decrement(ctx: RequestContext, pod_name: str, pdb: Object, dry_run: bool) -> None:
    """checkAndDecrement: refuse (429) unless the budget allows a disruption; then spend it."""
    status = pdb.setdefault("status", {})
    name = pdb["metadata"]["name"]
    if status.get("observedGeneration", 0) < pdb["metadata"].get("generation", 0):
        raise create_too_many_requests_error(
            VIOLATES_BUDGET, f"The disruption budget {name} is still being processed by the "
            "server.", 10)
    allowed = status.get("disruptionsAllowed", 0)
    if allowed < 0:
        raise forbidden("poddisruptionbudget", name, "pdb disruptions allowed is negative", "policy")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise forbidden("poddisruptionbudget", name, "DisruptedPods map too big - too many "
                        "evictions not confirmed by PDB controller", "policy")
    if allowed == 0:
        raise create_too_many_requests_error(
            VIOLATES_BUDGET, f"The disruption budget {name} needs {status.get('desiredHealthy', 0)}"
            f" healthy pods and has {status.get('currentHealthy', 0)} currently", 0)
    now = ctx.server.clock.now
    status["disruptionsAllowed"] = allowed - 1
    if status["disruptionsAllowed"] == 0:
        update_disruption_allowed_condition(pdb, now)
    if dry_run:
        return
    # Tell the controller this pod is about to go, so it is not counted healthy meanwhile; if
    # it is not deleted within two minutes, the controller drops it from the map again.
    status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: rfc3339(now)}
    pdb_ctx = _pdb_context(ctx, "update", name, "status")
    ctx.server.registry.update(pdb_ctx, pdb)


def add_condition_and_delete_pod(registry: Registry, ctx: RequestContext, options: dict[str, Any],
                                 dry_run: bool) -> None:
    """addConditionAndDeletePod: DisruptionTarget=True on the live pod (the preconditions are
    checked against it first), then the delete."""
    r = ctx.request
    if not dry_run:
        kv = registry.read(ctx, r.namespace, r.name)
        pod = decode(kv.value, kv.mod_revision)
        preconditions = options.get("preconditions") or {}
        for field, value in (("UID", preconditions.get("uid")),
                             ("ResourceVersion", preconditions.get("resourceVersion"))):
            live = pod["metadata"].get("uid" if field == "UID" else "resourceVersion")
            if value and value != live:
                raise conflict("Pod", r.name, f"the {field} in the precondition ({value}) does not "
                               f"match the {field} in record ({live}). The object might have been "
                               + ("deleted and then recreated" if field == "UID" else "modified"))
        status = pod.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or () if c.get("type") != "DisruptionTarget"]
        old = next((c for c in status.get("conditions") or () if c.get("type") == "DisruptionTarget"),
                   None)
        stamp = old["lastTransitionTime"] if old and old.get("status") == "True" else \
            rfc3339(ctx.server.clock.now)
        conditions.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                           "lastTransitionTime": stamp, "reason": "EvictionByEvictionAPI",
                           "message": "Eviction API: evicting"})
        status["conditions"] = conditions
        update = dataclasses.replace(r, verb="update", subresource="status", body=None, options={})
        updated = registry.update(RequestContext(update, ctx.served, ctx.user, ctx.record,
                                                 ctx.server), pod, kv)
        if preconditions.get("resourceVersion"):
            # We changed the pod ourselves: the delete's precondition follows our write.
            options = {**options, "preconditions": {
                **preconditions, "resourceVersion": updated["metadata"]["resourceVersion"]}}
    delete = dataclasses.replace(r, verb="delete", subresource="", body=None, options=dict(options),
                                 dry_run=dry_run)
    delete_ctx = RequestContext(delete, ctx.served, ctx.user, ctx.record, ctx.server)
    delete_object(registry, delete_ctx, registry.read(delete_ctx, r.namespace, r.name))
