"""What a get or list answers when it is asked for a Table: k8s.io/apiserver
pkg/endpoints/handlers/response.go (transformObject, asTable).

The client asks with `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` (Request.as_table;
kubelab.serve reads the header) and metav1.TableOptions' includeObject. The registry's
TableConvertor builds the Table (registry/table.py); asTable then puts in each row the object
as asked: None, its PartialObjectMetadata (the default), or the whole object. A watch asked
for Tables gets each event's object as a Table of one row (handlers/watch.go's embedded
encoder runs the same transform).
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.request import WatchEvent
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.registry.table import DefaultTableConvertor

__all__ = ["as_table", "table_events"]

_INCLUDE = ("", "None", "Metadata", "Object")


def as_table(ctx: RequestContext, result: Object) -> Object:
    """asTable: result (an object or a List) as a meta.k8s.io/v1 Table."""
    include = ctx.request.include_object
    if include not in _INCLUDE:
        raise ApiError(400, "BadRequest", f'unrecognized includeObject value: "{include}"')
    convertor = ctx.served.table_convertor or DefaultTableConvertor()
    table = convertor.convert_to_table(result, ctx.server.clock.now)
    rows = []
    for row in table["rows"]:
        obj: Object = row["object"]
        if include == "Object":
            rows.append(row)
        elif include == "None":
            rows.append({"cells": row["cells"]})
        else:  # meta.AsPartialObjectMetadata
            rows.append({"cells": row["cells"], "object": {
                "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata") or {}}})
    return {**table, "rows": rows}


def table_events(ctx: RequestContext, on_event: Callable[[WatchEvent], None]
                 ) -> Callable[[WatchEvent], None]:
    """A watch's on_event that sends each object event's object as a Table."""
    def send(event: WatchEvent) -> None:
        if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
            event = {"type": event["type"], "object": as_table(ctx, event["object"])}
        on_event(event)
    return send
