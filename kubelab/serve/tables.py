"""Server-side printing: a list as a meta.k8s.io/v1 Table, the columns `kubectl get` shows.

Real kubectl asks for `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` and prints the
Table the server sends: the columns come from the server (pkg/printers/internalversion/
printers.go there), which is why `kubectl get` of a CRD shows its additionalPrinterColumns.
kubelab's server sends the columns kubelab's own kubectl prints (kubelab.apiserver.printers.internalversion);
wide-only columns have priority 1, as upstream marks them, and `-o wide` shows them.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.apiserver.apiextensions.tableconvertor import crd_columns, crd_table_columns
from kubelab.apiserver.printers.internalversion import COLUMNS, LIST_ORDER, WIDE_EXTRA, _generic_row

__all__ = ["TABLE_V1", "table_for", "wants_table"]

TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
def wants_table(accept: str) -> bool:
    """Does the first acceptable media type ask for a meta.k8s.io/v1 Table?"""
    for part in accept.split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") == "v1":
            return True
    return False


def _column(name: str, priority: int) -> dict[str, Any]:
    return {"name": name.title().replace("-To-", "-to-"), "type": "string",
            "format": "name" if name == "NAME" else "", "description": "", "priority": priority}


def _row_object(obj: Object, include: str) -> Object | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    meta = obj.get("metadata") or {}
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}


def table_for(resource: str, objects: list[Object], now: float, *, include_object: str = "Metadata",
              resource_version: str = "", continue_token: str = "",
              printer_columns: list[Object] | None = None) -> Object:
    """printer_columns: a custom resource's additionalPrinterColumns
    (kubelab/apiserver/apiextensions/tableconvertor.py)."""
    headers, row = COLUMNS.get(resource, (["NAME", "AGE"], _generic_row))
    wide = WIDE_EXTRA.get(resource, [])
    columns = [_column(h, 0) for h in headers] + [_column(h, 1) for h in wide]
    objects = LIST_ORDER.get(resource, list)(objects)  # kubectl's order, for kinds that sort
    cells = [row(obj, now, True)[:len(columns)] for obj in objects]
    if printer_columns:
        columns = [_column("NAME", 0)] + [
            {"name": c.get("name", ""), "type": c.get("type", "string"), "format": c.get("format", ""),
             "description": c.get("description", ""), "priority": c.get("priority", 0)}
            for c in crd_table_columns(printer_columns, True)]
        cells = crd_columns(printer_columns, objects, now, True)[1]
    rows = []
    for obj, obj_cells in zip(objects, cells, strict=True):
        row_out: Object = {"cells": obj_cells}
        embedded = _row_object(obj, include_object)
        if embedded is not None:
            row_out["object"] = embedded
        rows.append(row_out)
    metadata: Object = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
            "columnDefinitions": columns, "rows": rows}
