"""The create and update handlers: decode the body, check its name against the URL's, and
hand the object to the registry (k8s.io/apiserver pkg/endpoints/handlers/create.go
createHandler, update.go UpdateResource, rest.go checkName). PATCH has its own handler, the
patcher (patch.py). A DELETE's body is its DeleteOptions (delete.go DeleteResource reads it
only here, after every filter has let the request through): delete_options merges them into
the request's options.

Departure: upstream reads the options from the body when there is one and from the query
string otherwise; kubelab reads both, and the query string wins (curl users send
`?propagationPolicy=` with kubectl's body).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import bad_request
from kubelab.apiserver.endpoints import subresources
from kubelab.apiserver.endpoints.decode import decode_body

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext
    from kubelab.apiserver.registry.store import Registry

__all__ = ["create_resource", "delete_options", "update_resource"]


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


_DELETE_FIELDS = ("propagationPolicy", "gracePeriodSeconds", "preconditions", "dryRun")


def delete_options(ctx: RequestContext) -> None:
    """A DELETE's body, read by now, becomes DeleteOptions under the query's options."""
    r = ctx.request
    body: Any = r.body
    if r.verb not in ("delete", "deletecollection") or body is None:
        return
    ctx.enter("decode")
    options: dict[str, Any] = {}
    if isinstance(body, dict):
        for key in _DELETE_FIELDS:
            if body.get(key) is not None:
                options[key] = body[key]
        if body.get("orphanDependents") is True and "propagationPolicy" not in options:
            options["propagationPolicy"] = "Orphan"
    dry_run = r.dry_run
    requested = options.pop("dryRun", None)
    if requested:
        if requested != ["All"]:
            raise bad_request(f'unsupported dry run option "{requested}"')
        dry_run = True
    ctx.request = dataclasses.replace(r, body=None, options={**options, **r.options},
                                      dry_run=dry_run)
