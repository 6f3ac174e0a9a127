"""The Table of ResourceQuota: kubernetes pkg/printers/internalversion/printers.go
(printResourceQuota): NAME, AGE, REQUEST, LIMIT, where REQUEST lists every hard resource but
the `limits.*` ones as `used/hard` (`pods: 1/10, requests.cpu: 0/1`) and LIMIT those."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.quota.resources import parse_resource_list
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["add_handlers"]


def _resource_quota_row(quota: Object, now: float) -> list[str]:
    status = quota.get("status") or {}
    hard, used = parse_resource_list(status.get("hard")), parse_resource_list(status.get("used"))
    request: list[str] = []
    limit: list[str] = []
    for name in sorted(hard):  # SortableResourceNames
        pieces = name.split(".")
        column_ = limit if len(pieces) > 1 and pieces[0] == "limits" else request
        column_.append(f"{name}: {used.get(name, '0')}/{hard[name]}")
    return [quota["metadata"]["name"], _age(quota, now), ", ".join(request), ", ".join(limit)]


def add_handlers(h: TableGenerator) -> None:
    h.table_handler("resourcequotas", [
        column("Name", format_="name"), column("Age"),
        column("Request", description="Request represents a minimum amount of cpu/memory that "
                                      "a container may consume."),
        column("Limit", description="Limits control the maximum amount of cpu/memory that a "
                                    "container can use independent of contention on the node.")],
        _resource_quota_row)
