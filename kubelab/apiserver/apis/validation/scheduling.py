"""The scheduling fields of a pod spec: node affinity and topology spread constraints.

pkg/apis/core/validation/validation.go (ValidateNodeSelectorRequirement, validateNodeSelector,
validatePreferredSchedulingTerms, validateTopologySpreadConstraints) and
apimachinery pkg/apis/meta/v1/validation (ValidateLabelSelector): a pod the scheduler could not
read is refused here, before it is stored, with upstream's field paths and words.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.validation import is_qualified_name, is_valid_label_value

__all__ = ["validate_affinity", "validate_topology_spread_constraints"]

NOT_POSITIVE = "must be greater than zero"
SCHEDULE_ACTIONS = ["DoNotSchedule", "ScheduleAnyway"]


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _node_selector_requirement(rq: Object, path: str) -> list[FieldError]:
    errs = [field_invalid(f"{path}.key", rq.get("key"), m)
            for m in is_qualified_name(str(rq.get("key") or ""))]
    op, values = rq.get("operator"), _list(rq.get("values"))
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(field_required(
                f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        return errs
    return errs + _operator_and_values(op, values, path)


def _operator_and_values(op: Any, values: list[Any], path: str) -> list[FieldError]:
    """The In/NotIn/Exists/DoesNotExist rules node selectors and label selectors share."""
    if op in ("In", "NotIn"):
        if not values:
            return [field_required(f"{path}.values",
                                   "must be specified when `operator` is 'In' or 'NotIn'")]
    elif op in ("Exists", "DoesNotExist"):
        if values:
            return [field_forbidden(f"{path}.values", "may not be specified when `operator` is "
                                    "'Exists' or 'DoesNotExist'")]
    else:
        return [field_invalid(f"{path}.operator", op, "not a valid selector operator")]
    return []


def _node_selector_term(term: Object, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rq in enumerate(_list(term.get("matchExpressions"))):
        errs += _node_selector_requirement(_dict(rq), f"{path}.matchExpressions[{i}]")
    for i, rq in enumerate(_list(term.get("matchFields"))):
        rq = _dict(rq)
        where = f"{path}.matchFields[{i}]"
        if rq.get("key") != "metadata.name":
            errs.append(field_invalid(f"{where}.key", rq.get("key"), "not a valid field selector key"))
        if rq.get("operator") not in ("In", "NotIn"):
            errs.append(field_invalid(f"{where}.operator", rq.get("operator"),
                                      "not a valid selector operator"))
        elif len(_list(rq.get("values"))) != 1:
            errs.append(field_required(f"{where}.values",
                                       "must be only one value when `operator` is 'In' or 'NotIn' "
                                       "for node field selector"))
    return errs


def validate_affinity(affinity: Any, path: str) -> list[FieldError]:
    node = _dict(_dict(affinity).get("nodeAffinity"))
    errs: list[FieldError] = []
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        where = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        terms = _list(_dict(required).get("nodeSelectorTerms"))
        if not terms:
            errs.append(field_required(f"{where}.nodeSelectorTerms",
                                       "must have at least one node selector term"))
        for i, term in enumerate(terms):
            errs += _node_selector_term(_dict(term), f"{where}.nodeSelectorTerms[{i}]")
    where = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(_list(node.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        term = _dict(term)
        weight = term.get("weight")
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            errs.append(field_invalid(f"{where}[{i}].weight", weight, "must be in the range 1-100"))
        errs += _node_selector_term(_dict(term.get("preference")), f"{where}[{i}].preference")
    return errs


def validate_label_selector(selector: Any, path: str) -> list[FieldError]:
    """ValidateLabelSelector: matchLabels keys and values, matchExpressions operators."""
    selector = _dict(selector)
    errs: list[FieldError] = []
    for key, value in _dict(selector.get("matchLabels")).items():
        errs += [field_invalid(f"{path}.matchLabels", key, m) for m in is_qualified_name(key)]
        errs += [field_invalid(f"{path}.matchLabels", value, m)
                 for m in is_valid_label_value(str(value))]
    for i, expr in enumerate(_list(selector.get("matchExpressions"))):
        expr, where = _dict(expr), f"{path}.matchExpressions[{i}]"
        errs += _operator_and_values(expr.get("operator"), _list(expr.get("values")), where)
        errs += [field_invalid(f"{where}.key", expr.get("key"), m)
                 for m in is_qualified_name(str(expr.get("key") or ""))]
    return errs


def validate_topology_spread_constraints(constraints: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(_list(constraints)):
        c, where = _dict(c), f"{path}[{i}]"
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or skew <= 0:
            errs.append(field_invalid(f"{where}.maxSkew", skew, NOT_POSITIVE))
        key = c.get("topologyKey")
        if not key:
            errs.append(field_required(f"{where}.topologyKey", "can not be empty"))
        else:
            errs += [field_invalid(f"{where}.topologyKey", key, m) for m in is_qualified_name(str(key))]
        action = c.get("whenUnsatisfiable")
        if action not in SCHEDULE_ACTIONS:
            errs.append(field_not_supported(f"{where}.whenUnsatisfiable", action, SCHEDULE_ACTIONS))
        if "minDomains" in c and c["minDomains"] is not None:
            domains = c["minDomains"]
            if not isinstance(domains, int) or domains <= 0:
                errs.append(field_invalid(f"{where}.minDomains", domains, NOT_POSITIVE))
            elif action != "DoNotSchedule":
                errs.append(field_invalid(f"{where}.minDomains", domains,
                                          "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                          f"not {action}"))
        pair = (str(key), str(action))
        if pair in seen:
            errs.append(field_duplicate(f"{where}", f"{{{key}, {action}}}"))
        seen.add(pair)
        errs += validate_label_selector(c.get("labelSelector"), f"{where}.labelSelector")
    return errs
