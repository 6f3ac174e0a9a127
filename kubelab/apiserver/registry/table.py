"""rest.TableConvertor, and the default one: k8s.io/apiserver pkg/registry/rest/table.go.

A registry answers a get or list asked `as=Table` through its TableConvertor: built-in kinds
through the printers' TableGenerator (kubelab/apiserver/printers/tablegenerator.py), custom
resources through their printer columns (kubelab/apiserver/apiextensions/tableconvertor.py),
and a kind with neither through defaultTableConvertor: Name, and Created At as an RFC 3339
timestamp (genericregistry.Store's CompleteWithOptions falls back to it).
"""

from __future__ import annotations

from typing import Protocol

from kubelab.api import Object
from kubelab.apiserver.printers.tablegenerator import column, objects_of, table_of

__all__ = ["DefaultTableConvertor", "TableConvertor"]


class TableConvertor(Protocol):
    def convert_to_table(self, obj: Object, now: float, *, no_headers: bool = False) -> Object:
        """obj (an object or a List) as a meta.k8s.io/v1 Table, each row with its object."""
        ...


_COLUMNS = [column("Name", format_="name", description="Name must be unique within a namespace."),
            column("Created At", "date", description="CreationTimestamp is a timestamp representing "
                   "the server time when this object was created.")]


class DefaultTableConvertor:
    """defaultTableConvertor: Name and Created At."""

    def convert_to_table(self, obj: Object, now: float, *, no_headers: bool = False) -> Object:
        rows = []
        for o in objects_of(obj):
            meta = o.get("metadata") or {}
            rows.append({"cells": [str(meta.get("name", "")), str(meta.get("creationTimestamp", ""))],
                         "object": o})
        return table_of(obj, [] if no_headers else _COLUMNS, rows)
