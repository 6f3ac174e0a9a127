"""pods/<name>/eviction: a delete that asks first (what `kubectl drain` sends for each pod).

An Eviction is a polite delete: the API server checks the PodDisruptionBudgets that cover the
pod and, if they allow it, deletes the pod with the Eviction's deleteOptions, honouring its
grace period (pkg/registry/core/pod/storage/eviction.go). kubelab has no
PodDisruptionBudgets yet, so every eviction of an existing pod is allowed; the answer is a
Success Status with 201, as upstream's.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.apis.schema import SCHEMAS
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.endpoints.decode import decode_body
from kubelab.apiserver.endpoints.subresources import check_name
from kubelab.apiserver.registry.deletion import delete_object

if TYPE_CHECKING:
    from kubelab.apiserver.registry.store import Registry

__all__ = ["EVICTION", "evict"]

EVICTION = ResourceInfo("evictions", "Eviction", group="policy")


def evict(registry: Registry, ctx: RequestContext, body: Any) -> Object:
    r = ctx.request
    ctx.enter("decode")
    eviction = decode_body(body, EVICTION, SCHEMAS["Eviction"])
    check_name(eviction, r.name)
    kv = registry.read(ctx, r.namespace, r.name)
    options = eviction.get("deleteOptions") or {}
    delete = dataclasses.replace(r, verb="delete", subresource="", body=None, options=dict(options),
                                 dry_run=r.dry_run or options.get("dryRun") == ["All"])
    delete_object(registry, RequestContext(delete, ctx.served, ctx.user, ctx.record, ctx.server), kv)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
