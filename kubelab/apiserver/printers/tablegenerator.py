"""The TableGenerator: each built-in kind's column definitions and print function, and the
rest.TableConvertor the registry answers `as=Table` with.

Follows kubernetes pkg/printers/tablegenerator.go (HumanReadableGenerator: TableHandler
registers a kind's columns and its print function; GenerateTable runs it over an object or a
list) and pkg/printers/storage/storage.go (TableConvertor: GenerateTable with Wide always on,
so the Table carries the priority-1 columns too and kubectl decides whether to show them).
Handlers are keyed by the resource name, where upstream keys them by the Go type of the print
function's argument. translate_timestamp_since is printers.go's, kept here so that both
handler modules (internalversion.py, services.py) share it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubelab.api import Object
from kubelab.api.duration import human_duration
from kubelab.api.meta import parse_time

__all__ = ["PrintFunc", "TableConvertor", "TableGenerator", "column", "objects_of", "table_of",
           "translate_timestamp_since"]

# One object's cells, the wide (priority 1) ones included, each as kubectl prints it.
PrintFunc = Callable[[Object, float], list[str]]


def column(name: str, type_: str = "string", *, priority: int = 0, format_: str = "",
           description: str = "") -> dict[str, Any]:
    """A metav1.TableColumnDefinition."""
    return {"name": name, "type": type_, "format": format_, "description": description,
            "priority": priority}


def translate_timestamp_since(obj: Object, now: float) -> str:
    """printers.go translateTimestampSince of metadata.creationTimestamp: the AGE cell."""
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    return human_duration(now - parse_time(created)) if created else "<unknown>"


def objects_of(obj: Object) -> list[Object]:
    """The objects a Table of obj has a row for: a List's items, or obj itself."""
    return list(obj.get("items") or []) if "items" in obj else [obj]


def table_of(obj: Object, columns: list[dict[str, Any]], rows: list[Object]) -> Object:
    """The metav1.Table of obj: GenerateTable's ListAccessor copies a list's resourceVersion
    and continue token (an object's resourceVersion) onto it."""
    meta = obj.get("metadata") or {}
    table_meta: Object = {"resourceVersion": str(meta.get("resourceVersion", ""))}
    if "items" in obj and meta.get("continue"):
        table_meta["continue"] = meta["continue"]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": table_meta,
            "columnDefinitions": columns, "rows": rows}


@dataclass(frozen=True, slots=True)
class _Handler:
    columns: list[dict[str, Any]]
    print_func: PrintFunc
    # The list print function's order (printFlowSchemaList sorts); None: as listed.
    list_order: Callable[[list[Object]], list[Object]] | None


class TableGenerator:
    """tablegenerator.go's HumanReadableGenerator."""

    def __init__(self) -> None:
        self._handlers: dict[str, _Handler] = {}

    def with_handlers(self, *add_handlers: Callable[[TableGenerator], None]) -> TableGenerator:
        """With(fns...): let each AddHandlers register its kinds."""
        for add in add_handlers:
            add(self)
        return self

    def table_handler(self, resource: str, columns: list[dict[str, Any]], print_func: PrintFunc,
                      list_order: Callable[[list[Object]], list[Object]] | None = None) -> None:
        """TableHandler: the columns and print function of one kind."""
        if resource in self._handlers:
            raise ValueError(f"registered duplicate printer for {resource}")
        self._handlers[resource] = _Handler(columns, print_func, list_order)

    def handles(self, resource: str) -> bool:
        return resource in self._handlers

    def generate_table(self, resource: str, obj: Object, now: float, *,
                       no_headers: bool = False) -> Object:
        """GenerateTable: a Table of obj (a List: of its items), each row with its object;
        the list's resourceVersion and continue token go on the Table."""
        handler = self._handlers.get(resource)
        if handler is None:
            raise ValueError(f"no table handler registered for this type {resource}")
        objects = objects_of(obj)
        if "items" in obj and handler.list_order is not None:
            objects = handler.list_order(objects)
        return table_of(obj, [] if no_headers else handler.columns,
                        [{"cells": handler.print_func(o, now), "object": o} for o in objects])


@dataclass(frozen=True, slots=True)
class TableConvertor:
    """printers/storage.TableConvertor: a registry's rest.TableConvertor for a built-in kind."""

    table_generator: TableGenerator
    resource: str

    def convert_to_table(self, obj: Object, now: float, *, no_headers: bool = False) -> Object:
        return self.table_generator.generate_table(self.resource, obj, now, no_headers=no_headers)
