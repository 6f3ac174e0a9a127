"""A custom resource's columns: its CRD's additionalPrinterColumns.

Follows apiextensions-apiserver pkg/registry/customresource/tableconvertor/tableconvertor.go:
NAME, then each column's JSONPath on the object (the first value it finds; nothing found is
an empty cell, which kubectl prints as `<none>`). A CRD without columns prints NAME and AGE.
Columns with priority > 0 show only with `-o wide`. A `date` column prints as an age, as
kubectl shows it. kubelab's kubectl prints these itself; the served API sends them as the
server-side Table real kubectl asks for (kubelab/serve/tables.py).
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api import Object
from kubelab.api.jsonpath import _eval
from kubelab.api.meta import parse_time
from kubelab.apiserver.printers.internalversion import human_duration

__all__ = ["crd_columns", "crd_table_columns", "printer_columns"]


def printer_columns(crd: Object | None) -> list[dict[str, Any]]:
    """The storage version's additionalPrinterColumns of a CRD (none: [])."""
    for version in ((crd or {}).get("spec") or {}).get("versions") or []:
        if isinstance(version, dict) and version.get("storage"):
            return [c for c in version.get("additionalPrinterColumns") or [] if isinstance(c, dict)]
    return []


def _cell(column: dict[str, Any], obj: Object, now: float) -> str:
    found = _eval(str(column.get("jsonPath") or "").strip("{}"), obj)
    if not found or found[0] is None:
        return "<none>"
    value = found[0]
    if column.get("type") == "date" and isinstance(value, str):
        try:
            return human_duration(now - parse_time(value))
        except ValueError:
            return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def crd_table_columns(columns: list[dict[str, Any]], wide: bool) -> list[dict[str, Any]]:
    return [c for c in columns if wide or not c.get("priority")]


def crd_columns(columns: list[dict[str, Any]], objects: list[Object], now: float,
                wide: bool) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) for objects of a kind with these printer columns."""
    shown = crd_table_columns(columns, wide)
    headers = ["NAME", *(str(c.get("name", "")).upper() for c in shown)]
    rows = [[str((o.get("metadata") or {}).get("name", "")), *(_cell(c, o, now) for c in shown)]
            for o in objects]
    return headers, rows
