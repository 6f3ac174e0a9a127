"""The create and update handlers: decode the body, check its name against the URL's, and
hand the object to the registry (k8s.io/apiserver pkg/endpoints/handlers/create.go
createHandler, update.go UpdateResource, rest.go checkName). PATCH has its own handler, the
patcher (patch.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.apiserver.endpoints import subresources
from kubelab.apiserver.endpoints.decode import decode_body

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext
    from kubelab.apiserver.registry.store import Registry

__all__ = ["create_resource", "update_resource"]


def create_resource(registry: Registry, ctx: RequestContext) -> Object:
    """createHandler: a POST's body becomes a new object (a name in the URL must match)."""
    r, served = ctx.request, ctx.served
    ctx.enter("decode")
    obj = decode_body(r.body, served.info, served.schema)
    if r.name:
        subresources.check_name(obj, r.name)
    return registry.create(ctx, obj)


def update_resource(registry: Registry, ctx: RequestContext) -> Object:
    """UpdateResource: a PUT's body replaces the object named in the URL."""
    r, served = ctx.request, ctx.served
    ctx.enter("decode")
    obj = decode_body(r.body, served.info, served.schema)
    subresources.check_name(obj, r.name, required=True)
    return registry.update(ctx, obj)
