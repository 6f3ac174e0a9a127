"""deployment_util.go, part two: the arithmetic of a rollout.

maxSurge and maxUnavailable resolved from int-or-percent (surge rounds up, unavailable rounds
down; apimachinery pkg/util/intstr/intstr.go GetScaledValueFromIntOrPercent), how many pods
the new ReplicaSet may have (NewRSNewReplicas), proportional scaling (GetProportion), and the
three verdicts on a rollout: complete, progressing, timed out
(kubernetes/kubernetes pkg/controller/deployment/util/deployment_util.go).
"""

from __future__ import annotations

import math
from typing import Any

from kubelab.api import Object
from kubelab.controllers.controller_utils import seconds
from kubelab.controllers.deployment.util import MAX_REPLICAS_ANNOTATION, get_condition

__all__ = [
    "MAX_INT32",
    "deployment_complete",
    "deployment_progressing",
    "deployment_timed_out",
    "get_proportion",
    "get_replica_set_fraction",
    "get_scaled_value_from_int_or_percent",
    "has_progress_deadline",
    "has_revision_history_limit",
    "is_rolling_update",
    "is_saturated",
    "max_surge",
    "max_unavailable",
    "new_rs_new_replicas",
    "replicas_of",
    "resolve_fenceposts",
    "sum_status",
]

MAX_INT32 = 2**31 - 1


def get_scaled_value_from_int_or_percent(value: int | str, total: int, round_up: bool) -> int:
    """An int is itself; "25%" of total, rounded up or down. Errors in intstr's words."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"invalid value for IntOrString: invalid type: {type(value).__name__}")
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError(f'invalid type: string is not a percentage ("{value}")')
    try:
        percent = int(value[:-1])
    except ValueError:
        raise ValueError(f'invalid value for IntOrString: invalid value "{value}"') from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def replicas_of(obj: Object | None) -> int:
    return int(((obj or {}).get("spec") or {}).get("replicas", 1)) if obj is not None else 0


def is_rolling_update(d: Object) -> bool:
    return bool((d["spec"].get("strategy") or {}).get("type") == "RollingUpdate")


def resolve_fenceposts(surge: Any, unavailable: Any, desired: int) -> tuple[int, int]:
    """ResolveFenceposts: both at once, because both zero would deadlock the rollout:
    maxUnavailable then becomes 1 (rounding down can make a nonzero percent zero)."""
    s = get_scaled_value_from_int_or_percent(0 if surge is None else surge, desired, True)
    u = get_scaled_value_from_int_or_percent(0 if unavailable is None else unavailable, desired, False)
    if s == 0 and u == 0:
        u = 1
    return s, u


def _rolling(d: Object) -> Object:
    return (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}


def max_unavailable(d: Object) -> int:
    replicas = replicas_of(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    rolling = _rolling(d)
    _, unavailable = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas)
    return min(unavailable, replicas)


def max_surge(d: Object) -> int:
    if not is_rolling_update(d):
        return 0
    rolling = _rolling(d)
    surge, _ = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas_of(d))
    return surge


def sum_status(rss: list[Object | None], field: str) -> int:
    """GetActual/Ready/AvailableReplicaCountForReplicaSets: a status field summed."""
    return sum(int((rs.get("status") or {}).get(field, 0)) for rs in rss if rs is not None)


def new_rs_new_replicas(d: Object, all_rss: list[Object], new_rs: Object) -> int:
    """NewRSNewReplicas: RollingUpdate may add pods up to replicas + maxSurge in total (and the
    new ReplicaSet never beyond replicas); Recreate goes straight to replicas."""
    kind = (d["spec"].get("strategy") or {}).get("type")
    replicas = replicas_of(d)
    if kind == "RollingUpdate":
        surge = get_scaled_value_from_int_or_percent(_rolling(d).get("maxSurge", 0), replicas, True)
        current = sum(replicas_of(rs) for rs in all_rss if rs is not None)
        max_total = replicas + surge
        if current >= max_total:
            return replicas_of(new_rs)  # cannot scale up
        scale_up = min(max_total - current, replicas - replicas_of(new_rs))
        return replicas_of(new_rs) + scale_up
    if kind == "Recreate":
        return replicas
    raise ValueError(f"deployment type {kind} isn't supported")


def is_saturated(d: Object, rs: Object | None) -> bool:
    """IsSaturated: the new ReplicaSet has all the replicas and all of them are available."""
    if rs is None:
        return False
    desired = (rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/desired-replicas")
    try:
        desired_int = int(desired) if desired is not None else None
    except ValueError:
        return False
    replicas = replicas_of(d)
    return replicas_of(rs) == replicas and desired_int == replicas and \
        int((rs.get("status") or {}).get("availableReplicas", 0)) == replicas


def get_proportion(rs: Object | None, d: Object, to_add: int, added: int) -> int:
    """GetProportion: this ReplicaSet's share of a scaling event during a rollout, by its
    size relative to the max-replicas annotation; never more than what is left to add."""
    if rs is None or replicas_of(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = get_replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def get_replica_set_fraction(rs: Object, d: Object) -> int:
    """getReplicaSetFraction: how many replicas this ReplicaSet gains (or loses) when the
    Deployment goes from the size in the max-replicas annotation to replicas + maxSurge."""
    if replicas_of(d) == 0:
        return -replicas_of(rs)  # scaling to zero: everything goes
    d_replicas = replicas_of(d) + max_surge(d)
    annotated = (rs["metadata"].get("annotations") or {}).get(MAX_REPLICAS_ANNOTATION)
    try:
        base = int(annotated) if annotated is not None else 0
    except ValueError:
        base = 0
    if base <= 0:
        # A missing, unreadable or non-positive annotation (a third party edited it): fall
        # back to the Deployment's current size, as upstream since kubernetes#128535.
        base = int((d.get("status") or {}).get("replicas", 0))
    if base <= 0:
        return 0  # nothing to be in proportion to: no scaling (and no division by zero)
    # integer.RoundToInt32: round half away from zero.
    return math.floor(replicas_of(rs) * d_replicas / base + 0.5) - replicas_of(rs)


def deployment_complete(d: Object, status: Object) -> bool:
    """All replicas updated and available, no old pods left, and this generation observed."""
    replicas = replicas_of(d)
    return bool(status.get("updatedReplicas", 0) == replicas and status.get("replicas", 0) == replicas
                and status.get("availableReplicas", 0) == replicas
                and status.get("observedGeneration", 0) >= d["metadata"].get("generation", 0))


def deployment_progressing(d: Object, new_status: Object) -> bool:
    """Progress: more updated, ready or available pods, or fewer old ones, than last time."""
    old = d.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = new_status.get("replicas", 0) - new_status.get("updatedReplicas", 0)
    return bool(new_status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0) or new_old < old_old
                or new_status.get("readyReplicas", 0) > old.get("readyReplicas", 0)
                or new_status.get("availableReplicas", 0) > old.get("availableReplicas", 0))


def has_progress_deadline(d: Object) -> bool:
    deadline = d["spec"].get("progressDeadlineSeconds")
    return deadline is not None and deadline != MAX_INT32


def has_revision_history_limit(d: Object) -> bool:
    limit = d["spec"].get("revisionHistoryLimit")
    return limit is not None and limit != MAX_INT32


def deployment_timed_out(d: Object, new_status: Object, now: float) -> bool:
    """No progress reported for progressDeadlineSeconds (and not already complete)."""
    if not has_progress_deadline(d):
        return False
    condition = get_condition(new_status, "Progressing")
    if condition is None or condition.get("reason") == "NewReplicaSetAvailable":
        return False
    if condition.get("reason") == "ProgressDeadlineExceeded":
        return True
    last = condition.get("lastUpdateTime")
    return bool(last) and seconds(last) + int(d["spec"]["progressDeadlineSeconds"]) < now
