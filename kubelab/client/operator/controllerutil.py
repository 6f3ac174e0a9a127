"""Owning children and holding finalizers (controller-runtime
pkg/controller/controllerutil/controllerutil.go: SetControllerReference, AddFinalizer,
RemoveFinalizer, ContainsFinalizer, CreateOrUpdate).

- set_controller_reference(owner, obj): obj gets an ownerReference with controller: true and
  blockOwnerDeletion: true, so the garbage collector deletes it with its owner, and watches on
  obj's kind wake the owner (handler.enqueue_request_for_owner).
- add_finalizer / remove_finalizer: a finalizer keeps a deleted object (deletionTimestamp set)
  until the controller has cleaned up outside Kubernetes and removed its name.
- create_or_update: read the cache; create if absent, else change a copy with `mutate` and
  update only if that changed something. No write when nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object
from kubelab.api.meta import deep_copy
from kubelab.client.client import Client
from kubelab.client.operator.cache import Cache

__all__ = ["AlreadyOwnedError", "add_finalizer", "contains_finalizer", "create_or_update",
           "remove_finalizer", "set_controller_reference"]


class AlreadyOwnedError(Exception):
    """controllerutil.AlreadyOwnedError."""

    def __init__(self, obj: Object, ref: Object) -> None:
        meta = obj["metadata"]
        super().__init__(f"Object {meta.get('namespace', '')}/{meta.get('name', '')} is already owned "
                         f"by another {ref.get('kind')} controller {ref.get('name')}")


def set_controller_reference(owner: Object, obj: Object) -> None:
    """Make owner obj's controller (in place); AlreadyOwnedError if another one is."""
    meta, owner_meta = obj.setdefault("metadata", {}), owner["metadata"]
    namespace = owner_meta.get("namespace")
    if namespace and meta.get("namespace", namespace) != namespace:
        raise ValueError(f"cross-namespace owner references are disallowed, owner's namespace "
                         f"{owner_meta['namespace']}, obj's namespace {meta.get('namespace')}")
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner_meta["name"],
           "uid": owner_meta["uid"], "controller": True, "blockOwnerDeletion": True}
    refs = list(meta.get("ownerReferences") or [])
    for i, existing in enumerate(refs):
        if existing.get("controller") and existing.get("uid") != ref["uid"]:
            raise AlreadyOwnedError(obj, existing)
        if existing.get("uid") == ref["uid"]:
            refs[i] = ref
            break
    else:
        refs.append(ref)
    meta["ownerReferences"] = refs


def contains_finalizer(obj: Object, finalizer: str) -> bool:
    return finalizer in (obj["metadata"].get("finalizers") or ())


def add_finalizer(obj: Object, finalizer: str) -> bool:
    """Add it (in place); True if it was not there."""
    if contains_finalizer(obj, finalizer):
        return False
    obj["metadata"]["finalizers"] = [*(obj["metadata"].get("finalizers") or []), finalizer]
    return True


def remove_finalizer(obj: Object, finalizer: str) -> bool:
    """Remove it (in place); True if it was there."""
    if not contains_finalizer(obj, finalizer):
        return False
    obj["metadata"]["finalizers"] = [f for f in obj["metadata"]["finalizers"] if f != finalizer]
    return True


def create_or_update(client: Client, cache: Cache, resource: str, obj: Object,
                     mutate: Callable[[Object], None]) -> str:
    """OperationResult: "created", "updated" or "unchanged". obj names the object (and is the
    body if it must be created, after mutate)."""
    meta = obj["metadata"]
    current = cache.get(resource, meta["name"], meta.get("namespace", ""))
    if current is None:
        mutate(obj)
        client.create(obj, meta.get("namespace", ""))
        return "created"
    desired = deep_copy(current)
    mutate(desired)
    if desired == current:
        return "unchanged"
    client.update(desired)  # a stale cache gives 409 Conflict: the key is retried
    return "updated"
