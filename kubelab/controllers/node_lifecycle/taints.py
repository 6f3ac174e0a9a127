"""The taints the node lifecycle controller manages, and how it writes them.

Keys from k8s.io/api core/v1 well_known_taints.go. Which condition gives which NoSchedule taint
is nodeConditionToTaintKeyStatusMap (node_lifecycle_controller.go); writes follow
controller_utils.go SwapNodeControllerTaint: add and remove in one update of the Node, each new
taint stamped with timeAdded, retried on conflict with a fresh read.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.meta import rfc3339
from kubelab.client.client import Client
from kubelab.client.retry import retry_on_conflict

__all__ = ["CONDITION_TAINTS", "NOT_READY", "UNREACHABLE", "UNSCHEDULABLE", "has_taint",
           "no_schedule_taints", "swap_taints"]

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
CONDITION_TAINTS = {("Ready", "False"): NOT_READY, ("Ready", "Unknown"): UNREACHABLE,
                    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
                    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
                    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
                    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure"}
MANAGED_KEYS = {*CONDITION_TAINTS.values(), UNSCHEDULABLE}


def has_taint(node: Object, key: str, effect: str) -> bool:
    return any(t.get("key") == key and t.get("effect") == effect
               for t in (node.get("spec") or {}).get("taints") or [])


def no_schedule_taints(node: Object) -> tuple[set[str], set[str]]:
    """(the NoSchedule taint keys the node's conditions call for, those it has)."""
    wanted = {CONDITION_TAINTS[(c.get("type"), c.get("status"))]
              for c in (node.get("status") or {}).get("conditions") or []
              if (c.get("type"), c.get("status")) in CONDITION_TAINTS}
    if (node.get("spec") or {}).get("unschedulable"):
        wanted.add(UNSCHEDULABLE)
    have = {t["key"] for t in (node.get("spec") or {}).get("taints") or []
            if t.get("effect") == "NoSchedule" and t.get("key") in MANAGED_KEYS}
    return wanted, have


def swap_taints(client: Client, now: float, name: str, add: list[str], remove: list[str],
                effect: str = "NoExecute") -> None:
    """Add taints `add` and remove taints `remove` (all with `effect`). Raises ApiError."""
    def write() -> None:
        node = client.get("nodes", name)
        spec = node.setdefault("spec", {})
        before = spec.get("taints") or []
        taints = [t for t in before if not (t.get("key") in remove and t.get("effect") == effect)]
        for key in add:
            if not any(t.get("key") == key and t.get("effect") == effect for t in taints):
                taints.append({"key": key, "effect": effect, "timeAdded": rfc3339(now)})
        if taints == before:
            return
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        client.update(node)
    retry_on_conflict(write)
