"""The x-kubernetes-validations rules of a CRD, compiled when the CRD is written.

Follows pkg/apiserver/schema/cel/compilation.go (compileRule) and the CEL part of
pkg/apis/apiextensions/validation/validation.go (ValidateCustomResourceDefinitionOpenAPISchema,
getExpressionCost, getCostErrorMessage): each rule and messageExpression is compiled against
the CEL type of its node (kubelab/apiserver/cel_check.py: `self`, and `oldSelf` for a
transition rule); a rule must evaluate to a bool; its estimated cost, times the node's
cardinality (how many times the rule can run in one object: the product of the maxItems and
maxProperties of the lists and maps around it, or their estimates from the request size), may
be at most StaticEstimatedCostLimit, and all of a schema's rules together at most
StaticEstimatedCRDCostLimit. Like upstream, nothing of this runs while the schema itself has
errors.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import FieldError, field_forbidden, field_invalid
from kubelab.apiserver.apiextensions.schema.rules import has_old_self
from kubelab.apiserver.cel_check import CelCheckError, CelType, check, schema_type

__all__ = ["STATIC_ESTIMATED_COST_LIMIT", "STATIC_ESTIMATED_CRD_COST_LIMIT", "cost_error_message",
           "validate_rule_compilation"]

STATIC_ESTIMATED_COST_LIMIT = 10_000_000
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000
_MAX = 2**64 - 1


def cost_error_message(cost_name: str, cost: int, limit: int) -> str:
    """getCostErrorMessage."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (f"{cost_name} exceeds budget by factor of {text} (try simplifying the rule, or adding "
            "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")


def _multiply(cost: int, cardinality: int) -> int:
    """multiplyWithOverflowGuard."""
    return min(cost * cardinality, _MAX)


def validate_rule_compilation(schema: dict[str, Any], path: str) -> list[FieldError]:
    """Every compile, type and cost error of the rules in schema (the openAPIV3Schema at path)."""
    errs: list[FieldError] = []
    costs: list[tuple[str, int]] = []
    _walk(schema, path, True, 1, errs, costs)
    total = min(sum(c for _, c in costs), _MAX)
    if total > STATIC_ESTIMATED_CRD_COST_LIMIT:
        for where, _ in sorted(costs, key=lambda c: -c[1])[:4]:
            errs.append(field_forbidden(where, "contributed to estimated rule cost total exceeding "
                                        "cost limit for entire OpenAPIv3 schema"))
        errs.append(field_forbidden(path, cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", total,
            STATIC_ESTIMATED_CRD_COST_LIMIT)))
    return errs


def _walk(s: Any, path: str, root: bool, cardinality: int, errs: list[FieldError],
          costs: list[tuple[str, int]]) -> None:
    if not isinstance(s, dict):
        return
    kind = schema_type(s, root)
    for i, rule in enumerate(s.get("x-kubernetes-validations") or []):
        if isinstance(rule, dict):
            _compile_rule(rule, kind, f"{path}.x-kubernetes-validations[{i}]", cardinality,
                          errs, costs)
    for key, sub in sorted((s.get("properties") or {}).items()):
        _walk(sub, f"{path}.properties[{key}]", False, cardinality, errs, costs)
    if kind.kind == "map" and isinstance(s.get("additionalProperties"), dict):
        _walk(s["additionalProperties"], f"{path}.additionalProperties", False,
              _multiply(cardinality, kind.size), errs, costs)
    if kind.kind == "list":
        _walk(s.get("items"), f"{path}.items", False, _multiply(cardinality, kind.size), errs, costs)


def _compile_rule(rule: dict[str, Any], kind: CelType, where: str, cardinality: int,
                  errs: list[FieldError], costs: list[tuple[str, int]]) -> None:
    text = str(rule.get("rule") or "")
    if not text.strip():
        return
    variables = {"self": kind, **({"oldSelf": kind} if has_old_self(text) else {})}
    try:
        checked = check(text, variables)
    except CelCheckError as err:
        errs.append(field_invalid(f"{where}.rule", rule, f"compilation failed: {err}"))
        return
    if checked.output.kind not in ("bool", "dyn"):  # dyn: kubelab's checker could not tell
        errs.append(field_invalid(f"{where}.rule", rule, "cel expression must evaluate to a bool"))
        return
    cost = _multiply(checked.max_cost, cardinality)
    if cost > STATIC_ESTIMATED_COST_LIMIT:
        errs.append(field_forbidden(f"{where}.rule", cost_error_message(
            "estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT)))
    costs.append((f"{where}.rule", cost))
    expression = rule.get("messageExpression")
    if not isinstance(expression, str) or not expression.strip():
        return
    try:
        message = check(expression, variables)
    except CelCheckError as err:
        errs.append(field_invalid(f"{where}.messageExpression", rule,
                                  f"messageExpression compilation failed: {err}"))
        return
    if message.output.kind not in ("string", "dyn"):
        errs.append(field_invalid(f"{where}.messageExpression", rule,
                                  "messageExpression must evaluate to a string"))
    cost = _multiply(message.max_cost, cardinality)
    if cost > STATIC_ESTIMATED_COST_LIMIT:
        errs.append(field_forbidden(f"{where}.messageExpression", cost_error_message(
            "estimated messageExpression cost", cost, STATIC_ESTIMATED_COST_LIMIT)))
    costs.append((f"{where}.messageExpression", cost))
