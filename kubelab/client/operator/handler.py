"""From an event to the Requests it wakes (controller-runtime pkg/handler/enqueue.go,
enqueue_owner.go, enqueue_mapped.go).

- enqueue_request_for_object: the object itself (`For(...)`).
- enqueue_request_for_owner: the object's controller, if it is of the owner's kind
  (`Owns(...)`): delete a Job the operator owns, and its SettlementJob is reconciled, which
  makes the Job again. On an update both the old and the new owner are woken.
- a map function: any Requests you like (`Watches(..., EnqueueRequestsFromMapFunc)`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.operator.reconcile import Request
from kubelab.client.shared_informer import ResourceEventHandler

__all__ = ["MapFunc", "enqueue_request_for_object", "enqueue_request_for_owner", "handler_for"]

MapFunc = Callable[[Object], list[Request]]


def _object(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


def enqueue_request_for_object(obj: Object) -> list[Request]:
    meta = obj["metadata"]
    return [Request(meta.get("namespace", ""), meta["name"])]


def enqueue_request_for_owner(owner_api_version: str, owner_kind: str) -> MapFunc:
    """OnlyControllerOwner: the ownerReference with controller: true, matched by group and
    kind (the version may differ, as upstream compares GroupKind)."""
    group = owner_api_version.rpartition("/")[0]

    def map_owner(obj: Object) -> list[Request]:
        for ref in obj["metadata"].get("ownerReferences") or ():
            if ref.get("controller") and ref.get("kind") == owner_kind and \
                    str(ref.get("apiVersion", "")).rpartition("/")[0] == group:
                return [Request(obj["metadata"].get("namespace", ""), ref["name"])]
        return []
    return map_owner


def handler_for(map_func: MapFunc, add: Callable[[Request], None]) -> ResourceEventHandler:
    """An informer event handler that adds the Requests map_func gives, for old and new."""
    def on_add(obj: Any) -> None:
        for request in map_func(_object(obj)):
            add(request)

    def on_update(old: Any, new: Any) -> None:
        for request in dict.fromkeys([*map_func(old), *map_func(new)]):
            add(request)
    return ResourceEventHandler(on_add=on_add, on_update=on_update, on_delete=on_add)
