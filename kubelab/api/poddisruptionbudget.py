"""The DisruptionAllowed condition of a PodDisruptionBudget, which the disruption controller
and the eviction subresource both keep (k8s.io/component-helpers apps/poddisruptionbudget
helpers.go: UpdateDisruptionAllowedCondition, ConditionsAreUpToDate), with apimachinery's
meta.SetStatusCondition and FindStatusCondition (pkg/api/meta/conditions.go) for
metav1.Conditions.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.meta import rfc3339

__all__ = ["DISRUPTION_ALLOWED_CONDITION", "conditions_are_up_to_date", "find_status_condition",
           "set_status_condition", "update_disruption_allowed_condition"]

DISRUPTION_ALLOWED_CONDITION = "DisruptionAllowed"
SUFFICIENT_PODS_REASON = "SufficientPods"
INSUFFICIENT_PODS_REASON = "InsufficientPods"
SYNC_FAILED_REASON = "SyncFailed"


def find_status_condition(conditions: list[dict[str, Any]], type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions if c.get("type") == type_), None)


def set_status_condition(conditions: list[dict[str, Any]], new: dict[str, Any], now: float) -> bool:
    """SetStatusCondition: add or change the condition of new's type; lastTransitionTime moves
    only when the status changes. True if anything changed."""
    existing = find_status_condition(conditions, new["type"])
    if existing is None:
        conditions.append({"type": new["type"], "status": new["status"],
                           **({"observedGeneration": new["observedGeneration"]}
                              if new.get("observedGeneration") else {}),
                           "lastTransitionTime": new.get("lastTransitionTime") or rfc3339(now),
                           "reason": new.get("reason", ""), "message": new.get("message", "")})
        return True
    changed = False
    if existing.get("status") != new["status"]:
        existing["status"] = new["status"]
        existing["lastTransitionTime"] = new.get("lastTransitionTime") or rfc3339(now)
        changed = True
    for field, default in (("reason", ""), ("message", ""), ("observedGeneration", 0)):
        if existing.get(field, default) != new.get(field, default):
            if new.get(field, default) == default and field == "observedGeneration":
                existing.pop(field, None)
            else:
                existing[field] = new.get(field, default)
            changed = True
    return changed


def update_disruption_allowed_condition(pdb: dict[str, Any], now: float) -> None:
    """UpdateDisruptionAllowedCondition: True (SufficientPods) while disruptions are allowed,
    False (InsufficientPods) otherwise."""
    status = pdb.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    allowed = status.get("disruptionsAllowed", 0) > 0
    set_status_condition(conditions, {
        "type": DISRUPTION_ALLOWED_CONDITION, "status": "True" if allowed else "False",
        "reason": SUFFICIENT_PODS_REASON if allowed else INSUFFICIENT_PODS_REASON,
        "observedGeneration": status.get("observedGeneration", 0)}, now)


def conditions_are_up_to_date(pdb: dict[str, Any]) -> bool:
    """ConditionsAreUpToDate: the condition says what disruptionsAllowed says, for this generation."""
    status = pdb.get("status") or {}
    cond = find_status_condition(status.get("conditions") or [], DISRUPTION_ALLOWED_CONDITION)
    if cond is None or status.get("observedGeneration", 0) != pdb["metadata"].get("generation", 0):
        return False
    if status.get("disruptionsAllowed", 0) > 0:
        return cond.get("status") == "True" and cond.get("reason") == SUFFICIENT_PODS_REASON
    return cond.get("status") == "False" and cond.get("reason") == INSUFFICIENT_PODS_REASON
