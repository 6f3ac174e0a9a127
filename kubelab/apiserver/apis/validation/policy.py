"""policy/v1 PodDisruptionBudget rules: pkg/apis/policy/validation/validation.go
(ValidatePodDisruptionBudget, ValidatePodDisruptionBudgetSpec,
ValidatePodDisruptionBudgetStatusUpdate). The words are upstream's; minAvailable and
maxUnavailable are checked as apps' ValidatePositiveIntOrPercent and IsNotMoreThan100Percent.
"""

from __future__ import annotations

import re
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, ParseError, field_invalid, field_not_supported
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.validation import regex_error
from kubelab.apiserver.apis.validation.meta import validate_labels

__all__ = ["UNHEALTHY_POD_EVICTION_POLICIES", "validate_pod_disruption_budget",
           "validate_pod_disruption_budget_status_update"]

NEGATIVE = "must be greater than or equal to 0"
UNHEALTHY_POD_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]  # sets.List: sorted
_PERCENT = re.compile(r"[0-9]+%")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int_or_percent(value: Any, path: str) -> list[FieldError]:
    """ValidatePositiveIntOrPercent, then IsNotMoreThan100Percent."""
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            return [field_invalid(path, value, regex_error(
                "a valid percent string must be a numeric string followed by an ending '%'",
                "[0-9]+%", "1%", "93%"))]
        if int(value[:-1]) > 100:
            return [field_invalid(path, value, "must not be greater than 100%")]
        return []
    if isinstance(value, int) and value < 0:
        return [field_invalid(path, value, NEGATIVE)]
    return []


def validate_pod_disruption_budget(pdb: Object) -> list[FieldError]:
    """ValidatePodDisruptionBudgetSpec."""
    spec = _dict(pdb.get("spec"))
    errs: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(field_invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    for field in ("minAvailable", "maxUnavailable"):
        if spec.get(field) is not None:
            errs += _int_or_percent(spec[field], f"spec.{field}")
    selector = spec.get("selector")
    if selector is not None:
        errs += validate_labels(_dict(selector).get("matchLabels"), "spec.selector.matchLabels")
        try:
            selector_from_label_selector(selector)
        except ParseError as err:
            errs.append(field_invalid("spec.selector", selector, str(err)))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(field_not_supported("spec.unhealthyPodEvictionPolicy", policy,
                                        UNHEALTHY_POD_EVICTION_POLICIES))
    return errs


def validate_pod_disruption_budget_status_update(pdb: Object, old: Object) -> list[FieldError]:
    """ValidatePodDisruptionBudgetStatusUpdate: no count is negative."""
    status = _dict(pdb.get("status"))
    errs: list[FieldError] = []
    for field in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        value = status.get(field)
        if isinstance(value, int) and value < 0:
            errs.append(field_invalid(f"status.{field}", value, NEGATIVE))
    return errs
