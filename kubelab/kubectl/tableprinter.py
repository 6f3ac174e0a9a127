"""How kubectl prints a Table the API server sent: k8s.io/kubectl pkg/printers/tableprinter.go.

kubectl builds no columns itself: `kubectl get` asks the server for a meta.k8s.io/v1 Table
(kubelab/apiserver/endpoints/response.py builds it) and prints it. decorate_table adds what
only the client knows: the NAMESPACE column for -A (from each row's object metadata) and,
when several kinds print, the kind before the name (`deployment.apps/web`) in the column
whose format is "name". print_table then writes the headers (each column's name upper-cased),
the cells of the columns with priority 0 (all of them with `-o wide`), a string cut at its
first newline with "...". Departure: columns are padded with three spaces (the tabwriter's
padding) by measuring the cells here, not through Go's text/tabwriter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubelab.api import Object

__all__ = ["PrintOptions", "decorate_table", "print_table"]


@dataclass(frozen=True, slots=True)
class PrintOptions:
    """printers.PrintOptions, the fields kubelab's kubectl sets."""

    no_headers: bool = False
    wide: bool = False
    with_namespace: bool = False
    with_kind: bool = False
    kind: str = ""  # what goes before each name with with_kind: "deployment.apps"


def decorate_table(table: Object, options: PrintOptions) -> Object:
    """decorateTable: the table with the namespace column and kind prefixes added."""
    columns: list[dict[str, Any]] = list(table.get("columnDefinitions") or [])
    name_column = -1
    if options.with_kind and options.kind:
        name_column = next((i for i, c in enumerate(columns)
                            if c.get("format") == "name" and c.get("type") == "string"), -1)
    if options.with_namespace:
        columns = [{"name": "Namespace", "type": "string", "format": "", "priority": 0}, *columns]
    rows = []
    for row in table.get("rows") or []:
        cells = list(row.get("cells") or [])
        if name_column != -1:
            cells[name_column] = f"{options.kind}/{cells[name_column]}"
        if options.with_namespace:
            meta = (row.get("object") or {}).get("metadata") or {}
            cells = [meta.get("namespace") if row.get("object") else None, *cells]
        rows.append({**row, "cells": cells})
    return {**table, "columnDefinitions": columns, "rows": rows}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        newline = value.find("\n")
        return value if newline < 0 else value[:newline] + "..."
    if isinstance(value, bool):
        return "true" if value else "false"  # Go's fmt prints a bool so
    return str(value)


def print_table(table: Object, options: PrintOptions) -> str:
    """printTable: the table as kubectl prints it; "" when it has no rows."""
    columns = table.get("columnDefinitions") or []
    shown = [i for i, c in enumerate(columns) if options.wide or not c.get("priority")]
    lines = [] if options.no_headers else [[str(columns[i].get("name", "")).upper() for i in shown]]
    if not table.get("rows"):
        return ""
    for row in table["rows"]:
        cells = row.get("cells") or []
        lines.append([_cell(cells[i]) if i < len(cells) else "" for i in shown])
    widths = [max(len(line[j]) for line in lines) for j in range(len(shown))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                     for line in lines)
