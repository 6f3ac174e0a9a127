"""DELETE: preconditions, graceful deletion, finalizers and propagation policy.

A delete does not always remove the object. Following registry/rest/delete.go (BeforeDelete)
and registry/generic/registry/store.go (Delete, deletionFinalizersForGarbageCollection,
markAsDeleting):
- a pod bound to a node gets deletionTimestamp = now + grace period and stays, so its kubelet
  can stop the containers and then delete it with gracePeriodSeconds=0;
- an object with finalizers gets deletionTimestamp and stays until updates empty the list;
- propagationPolicy Orphan adds the "orphan" finalizer, Foreground "foregroundDeletion":
  the garbage collector handles the dependents, then removes the finalizer;
- otherwise the key is deleted from the store at once.
The first time deletionTimestamp is set, metadata.generation is bumped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import (
    bad_request,
    conflict,
    field_not_supported,
    invalid,
)
from kubelab.apiserver.admission.chain import DELETE
from kubelab.apiserver.apiextensions.crd import mark_for_cleanup
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.registry.strategy import grace_period
from kubelab.apiserver.storage.codec import decode
from kubelab.store import KeyValue

if TYPE_CHECKING:
    from kubelab.apiserver.registry.store import Registry

__all__ = ["delete_object"]

POLICIES = ["Foreground", "Background", "Orphan"]
GC_FINALIZERS = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}


def _options(options: dict[str, Any]) -> tuple[str | None, int | None, dict[str, Any]]:
    policy = options.get("propagationPolicy")
    if policy is not None and policy not in POLICIES:
        raise invalid("DeleteOptions", "", [field_not_supported(
            "propagationPolicy", policy, [*POLICIES, "nil"])], "meta.k8s.io")
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (type(grace) is not int):
        raise bad_request("json: cannot unmarshal value into Go struct field "
                          "DeleteOptions.gracePeriodSeconds of type int64")
    preconditions = options.get("preconditions") or {}
    if not isinstance(preconditions, dict):
        raise bad_request("json: cannot unmarshal value into Go struct field "
                          "DeleteOptions.preconditions of type v1.Preconditions")
    return policy, grace, preconditions


def delete_object(registry: Registry, ctx: RequestContext, kv: KeyValue) -> Object:
    served, server = ctx.served, registry.server
    info = served.info
    old = decode(kv.value, kv.mod_revision)
    policy, grace, preconditions = _options(ctx.request.options or {})
    attrs = ctx.attributes(DELETE, None, old)
    ctx.enter("mutating-admission")
    server.admission.mutate(attrs)
    ctx.enter("validating-admission")
    server.admission.validate(attrs)
    ctx.enter("storage")
    meta = old["metadata"]
    name = meta["name"]
    # BeforeDelete names the kind, not the resource, in these two conflicts.
    uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    if uid is not None and uid != meta.get("uid"):
        raise conflict(info.kind, name, f"the UID in the precondition ({uid}) does not match the "
                       f"UID in record ({meta.get('uid')}). The object might have been deleted "
                       "and then recreated", info.group)
    if rv is not None and rv != meta.get("resourceVersion"):
        raise conflict(info.kind, name, f"the ResourceVersion in the precondition ({rv}) does not "
                       f"match the ResourceVersion in record ({meta.get('resourceVersion')}). "
                       "The object might have been modified", info.group)
    if grace is not None and grace < 0:
        grace = 1  # "Negative values will be treated as the value `1s` on the delete path."
    if meta.get("deletionTimestamp"):
        return _again(registry, ctx, kv, old, grace)

    finalizers = [f for f in meta.get("finalizers") or () if f not in GC_FINALIZERS.values()] \
        if policy else list(meta.get("finalizers") or ())
    if policy in GC_FINALIZERS:
        finalizers.append(GC_FINALIZERS[policy])
    if info.resource == "customresourcedefinitions" and served.builtin:
        mark_for_cleanup(old, finalizers, server.timestamp())  # crd_finalizer.py
    period = grace_period(info.resource, old, grace)
    pending = bool(finalizers) or (info.resource == "namespaces" and
                                   bool((old.get("spec") or {}).get("finalizers")))
    if (period is None or period == 0) and not pending:
        registry.delete_key(ctx, kv.key, kv.mod_revision)
        return old
    if meta.get("generation"):
        meta["generation"] += 1
    if finalizers:
        meta["finalizers"] = finalizers
    else:
        meta.pop("finalizers", None)
    if period:
        meta["deletionTimestamp"] = server.timestamp(period)
        meta["deletionGracePeriodSeconds"] = period
    else:  # markAsDeleting
        meta["deletionTimestamp"] = server.timestamp()
        if info.resource != "namespaces":
            meta["deletionGracePeriodSeconds"] = 0
    if info.resource == "namespaces":
        old.setdefault("status", {})["phase"] = "Terminating"
    return registry.put(ctx, kv, old)


def _again(registry: Registry, ctx: RequestContext, kv: KeyValue, old: Object,
           grace: int | None) -> Object:
    """A delete of an object already being deleted: it may only shorten the grace period."""
    meta = old["metadata"]
    period = meta.get("deletionGracePeriodSeconds")
    pending = bool(meta.get("finalizers")) or bool((old.get("spec") or {}).get("finalizers")
                                                   if ctx.served.info.resource == "namespaces"
                                                   else False)
    if period and grace is not None and grace < period:
        if grace == 0 and not pending:
            registry.delete_key(ctx, kv.key, kv.mod_revision)
            return old
        meta["deletionGracePeriodSeconds"] = grace
        meta["deletionTimestamp"] = registry.server.timestamp(grace)
        return registry.put(ctx, kv, old)
    if not period and not pending:
        registry.delete_key(ctx, kv.key, kv.mod_revision)
    return old
