"""x-kubernetes-validations: CEL rules at any node of a CRD schema.

Follows pkg/apiserver/schema/cel/validation.go. A rule sees the node's value as `self`; a
transition rule (one that names `oldSelf`) also sees the old value, and runs only on update
and only where old and new correlate: object properties by name, and items of
`x-kubernetes-list-type: map` lists by their keys. A failing rule is reported at the node
(plus the rule's `fieldPath`), with the node's schema type as the value:

    spec: Invalid value: "object": failed rule: self.replicas <= self.maxReplicas

`message` replaces `failed rule: <rule>`, `messageExpression` (a CEL string) replaces both
when it evaluates to a non-empty string, and `reason` picks the field error type
(FieldValueInvalid, FieldValueForbidden, FieldValueRequired, FieldValueDuplicate).

Every rule's run is costed (kubelab/apiserver/cel.py): one call may cost PerCallLimit (10^6),
all the rules of one object together RuntimeCELCostBudget (10^7); past either, no further
rule runs and the object is refused with upstream's words. (celpy takes far longer per cost
unit than cel-go, so a run near the limits takes minutes where upstream's takes a second; the
estimate when the CRD is written, schema/compilation.py, keeps such rules out.)
"""

from __future__ import annotations

import re
from typing import Any

from kubelab.api.errors import FieldError, field_duplicate, field_forbidden, field_invalid, field_required
from kubelab.apiserver.cel import CelCompileError, CelCostError, CelEvalError, Program, compile_expression
from kubelab.apiserver.cel_check import PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET

__all__ = ["OUT_OF_BUDGET", "CostBudget", "has_old_self", "rule_error_string", "validate_rules"]

OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"

_OLD_SELF = re.compile(r"\boldSelf\b")
_MISSING = object()


def has_old_self(rule: str) -> bool:
    return bool(_OLD_SELF.search(rule))


def rule_error_string(rule: str) -> str:
    """ruleErrorString: the rule, trimmed, as the default message shows it."""
    return rule.strip()


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class CostBudget:
    """What the rules of one object may still cost (RuntimeCELCostBudget), and each call's
    limit (PerCallLimit; smaller in tests, as upstream's NewValidator takes it)."""

    def __init__(self, remaining: int = RUNTIME_CEL_COST_BUDGET,
                 per_call_limit: int = PER_CALL_LIMIT) -> None:
        self.remaining, self.per_call_limit = remaining, per_call_limit
        self.stopped = False


def validate_rules(schema: dict[str, Any], value: Any, old: Any = _MISSING,
                   path: str = "", budget: CostBudget | None = None) -> list[FieldError]:
    """Every failing rule in schema for value (old: its previous value, on update). Once the
    budget is spent, or one call passes its limit, no further rule runs."""
    if budget is None:
        budget = CostBudget()
    if value is None or budget.stopped:
        return []
    errs = _node_rules(schema, value, old, path, budget)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key in sorted(value):
            if not path and key == "metadata":
                continue
            sub = properties.get(key, additional)
            if isinstance(sub, dict):
                old_item = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                errs += validate_rules(sub, value[key], old_item, _join(path, key), budget)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        by_key = {}
        if schema.get("x-kubernetes-list-type") == "map" and isinstance(old, list):
            by_key = {_map_key(item, keys): item for item in old if isinstance(item, dict)}
        for i, item in enumerate(value):
            old_item = by_key.get(_map_key(item, keys), _MISSING) if by_key and \
                isinstance(item, dict) else _MISSING
            errs += validate_rules(schema["items"], item, old_item, f"{path}[{i}]", budget)
    return errs


def _map_key(item: dict[str, Any], keys: list[str]) -> tuple[Any, ...]:
    return tuple(repr(item.get(k)) for k in keys)


def _node_rules(schema: dict[str, Any], value: Any, old: Any, path: str,
                budget: CostBudget) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = schema.get("type", "")
    rules = schema.get("x-kubernetes-validations") or []
    if rules and budget.remaining <= 0:
        budget.stopped = True
        return [field_invalid(path, kind, OUT_OF_BUDGET)]
    for rule in rules:
        text = str(rule.get("rule") or "")
        transition = has_old_self(text)
        if transition and old is _MISSING:
            continue  # a transition rule runs only when there is an old value to compare
        activation = {"self": value, **({"oldSelf": old} if transition else {})}
        where = path + str(rule.get("fieldPath") or "")
        program = None
        try:
            program = compile_expression(text)
            ok = program.evaluate(activation, budget.per_call_limit)
        except CelCompileError as err:  # refused when the CRD was written; kept for safety
            errs.append(field_invalid(where, kind, f"compilation failed: {err}"))
            continue
        except CelCostError as err:
            budget.stopped = True
            errs.append(field_invalid(where, kind, f"'{err}': no further validation rules will be "
                                      f"run due to call cost exceeds limit for rule: "
                                      f"{rule_error_string(text)}"))
            return errs
        except CelEvalError as err:
            if _spend(budget, program):
                errs.append(field_invalid(where, kind, OUT_OF_BUDGET))
                return errs
            if str(err) == "no such overload":
                errs.append(field_invalid(where, kind, f"'{err}': call arguments did not match a "
                                          "supported operator, function or macro signature for "
                                          f"rule: {rule_error_string(text)}"))
            else:
                errs.append(field_invalid(where, kind,
                                          f"{err} evaluating rule: {rule_error_string(text)}"))
            continue
        if _spend(budget, program):
            errs.append(field_invalid(where, kind, OUT_OF_BUDGET))
            return errs
        if ok is True:
            continue
        if ok is not False:
            errs.append(field_invalid(where, kind, "rule did not evaluate to a bool"))
            continue
        errs.append(_rule_error(rule, where, kind, _message(rule, text, activation)))
    return errs


def _spend(budget: CostBudget, program: Program | None) -> bool:
    """Take the rule's actual cost from the budget; True when it did not fit (and stop)."""
    cost = program.last_cost if program is not None else 0
    if cost > budget.remaining:
        budget.stopped = True
        return True
    budget.remaining -= cost
    return False


def _message(rule: dict[str, Any], text: str, activation: dict[str, Any]) -> str:
    expression = rule.get("messageExpression")
    if expression:
        try:
            message = compile_expression(str(expression)).evaluate(activation)
        except (CelCompileError, CelEvalError):
            message = None
        if isinstance(message, str) and message.strip() and "\n" not in message:
            return message
    if rule.get("message"):
        return str(rule["message"])
    return f"failed rule: {rule_error_string(text)}"


def _rule_error(rule: dict[str, Any], path: str, kind: str, message: str) -> FieldError:
    """fieldErrorForReason."""
    reason = rule.get("reason")
    if reason == "FieldValueForbidden":
        return field_forbidden(path, message)
    if reason == "FieldValueRequired":
        return field_required(path, message)
    if reason == "FieldValueDuplicate":
        return field_duplicate(path, kind)
    return field_invalid(path, kind, message)
