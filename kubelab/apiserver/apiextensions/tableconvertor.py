"""A custom resource's Table: its CRD's additionalPrinterColumns.

Follows apiextensions-apiserver pkg/registry/customresource/tableconvertor/tableconvertor.go
(New: a Name column, then one per printer column; ConvertToTable: each column's JSONPath on
the object, the first value it finds) and customresource_handler.go's
serveDefaultColumnsIfEmpty (a version without columns gets Age, from creationTimestamp).
Departures: cells are the strings kubectl prints, not JSON values: nothing found is
`<none>`, a `date` column is already an age (upstream sends the timestamp and kubectl's
printer turns it into one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubelab.api import Object
from kubelab.api.duration import human_duration
from kubelab.api.jsonpath import _eval
from kubelab.api.meta import parse_time
from kubelab.apiserver.printers.tablegenerator import column, objects_of, table_of

__all__ = ["Convertor", "new", "printer_columns"]

_DEFAULT_COLUMNS = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                     "description": ""}]


def printer_columns(crd: Object | None) -> list[dict[str, Any]]:
    """The storage version's additionalPrinterColumns of a CRD (none: [])."""
    for version in ((crd or {}).get("spec") or {}).get("versions") or []:
        if isinstance(version, dict) and version.get("storage"):
            return [c for c in version.get("additionalPrinterColumns") or [] if isinstance(c, dict)]
    return []


def _cell(col: dict[str, Any], obj: Object, now: float) -> str:
    found = _eval(str(col.get("jsonPath") or "").strip("{}"), obj)
    if not found or found[0] is None:
        return "<none>"
    value = found[0]
    if col.get("type") == "date" and isinstance(value, str):
        try:
            return human_duration(now - parse_time(value))
        except ValueError:
            return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


@dataclass(frozen=True, slots=True)
class Convertor:
    """tableconvertor.go's convertor: the rest.TableConvertor of one custom resource."""

    headers: list[dict[str, Any]]
    additional_columns: list[dict[str, Any]]

    def convert_to_table(self, obj: Object, now: float, *, no_headers: bool = False) -> Object:
        rows = [{"cells": [str((o.get("metadata") or {}).get("name", "")),
                           *(_cell(c, o, now) for c in self.additional_columns)], "object": o}
                for o in objects_of(obj)]
        return table_of(obj, [] if no_headers else self.headers, rows)


def new(crd_columns: list[dict[str, Any]]) -> Convertor:
    """New: the convertor for a version's printer columns ([]: the default Age column)."""
    columns = crd_columns or _DEFAULT_COLUMNS
    headers = [column("Name", format_="name")] + [
        column(str(c.get("name", "")), str(c.get("type", "string")), priority=int(c.get("priority", 0)),
               format_=str(c.get("format", "")), description=str(c.get("description", "")))
        for c in columns]
    return Convertor(headers, columns)
