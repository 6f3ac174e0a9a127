"""Status conditions as apimachinery's meta package sets them
(k8s.io/apimachinery/pkg/api/meta/conditions.go: SetStatusCondition, RemoveStatusCondition,
FindStatusCondition, IsStatusConditionTrue).

lastTransitionTime changes only when status changes, so it says how long the condition has
held; reason, message and observedGeneration are updated on every set. observedGeneration is
the metadata.generation the controller acted on: a reader compares the two to know whether
the condition is about the spec it sees.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.meta import rfc3339

__all__ = ["find_status_condition", "is_status_condition_true", "remove_status_condition",
           "set_status_condition"]


def find_status_condition(conditions: list[Object] | None, kind: str) -> Object | None:
    for condition in conditions or ():
        if condition.get("type") == kind:
            return condition
    return None


def set_status_condition(conditions: list[Object], new: Object, now: float) -> bool:
    """Set `new` (type, status, reason, message, observedGeneration) into conditions, in
    place. True if anything changed."""
    existing = find_status_condition(conditions, new["type"])
    if existing is None:
        added = dict(new)
        if not added.get("lastTransitionTime"):
            added["lastTransitionTime"] = rfc3339(now)
        conditions.append(added)
        return True
    changed = False
    if existing.get("status") != new.get("status"):
        existing["status"] = new.get("status")
        existing["lastTransitionTime"] = new.get("lastTransitionTime") or rfc3339(now)
        changed = True
    field: Any
    for field in ("reason", "message", "observedGeneration"):
        if existing.get(field) != new.get(field):
            existing[field] = new.get(field)
            changed = True
    return changed


def remove_status_condition(conditions: list[Object], kind: str) -> bool:
    before = len(conditions)
    conditions[:] = [c for c in conditions if c.get("type") != kind]
    return len(conditions) != before


def is_status_condition_true(conditions: list[Object] | None, kind: str) -> bool:
    condition = find_status_condition(conditions, kind)
    return condition is not None and condition.get("status") == "True"
