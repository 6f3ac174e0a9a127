"""ValidateLease and ValidateLeaseSpec (pkg/apis/coordination/validation/validation.go).

A positive leaseDurationSeconds, a non-negative leaseTransitions, a known or qualified
strategy (ValidateCoordinatedLeaseStrategy), and a preferredHolder only with a strategy.
holderIdentity has no rule upstream; the MicroTimes (acquireTime, renewTime) are checked by
the decoder (a 400 before validation, as MicroTime.UnmarshalJSON fails).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_forbidden, field_invalid, field_not_supported
from kubelab.api.validation import is_qualified_name

__all__ = ["validate_coordinated_lease_strategy", "validate_lease", "validate_lease_spec"]

LEASE_STRATEGIES = ["OldestEmulationVersion"]


def validate_lease(lease: Object) -> list[FieldError]:
    """ValidateLease (and ValidateLeaseUpdate: the same spec rules) without ObjectMeta."""
    spec = lease.get("spec")
    return validate_lease_spec(spec if isinstance(spec, dict) else {}, "spec")


def validate_lease_spec(spec: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(field_invalid(f"{path}.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(field_invalid(f"{path}.leaseTransitions", transitions,
                                  "must be greater than or equal to 0"))
    strategy = spec.get("strategy")
    if strategy is not None:
        errs += validate_coordinated_lease_strategy(strategy, f"{path}.strategy")
    if spec.get("preferredHolder") and not strategy:
        errs.append(field_forbidden(f"{path}.preferredHolder",
                                    "may only be specified if `strategy` is defined"))
    return errs


def validate_coordinated_lease_strategy(strategy: str, path: str) -> list[FieldError]:
    """A Kubernetes-defined name, or a qualified name with a '/'. (Upstream appends
    .strategy to the path it is given, so a Lease's errors sit at spec.strategy.strategy.)"""
    if "/" not in strategy:
        if strategy not in LEASE_STRATEGIES:
            return [field_not_supported(f"{path}.strategy", strategy, LEASE_STRATEGIES)]
        return []
    return [field_invalid(f"{path}.strategy", strategy, m) for m in is_qualified_name(strategy)]
