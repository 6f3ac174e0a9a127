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
"""

from __future__ import annotations

import re
from typing import Any

from kubelab.api.errors import FieldError, field_duplicate, field_forbidden, field_invalid, field_required
from kubelab.apiserver.cel import CelCompileError, CelEvalError, compile_expression

__all__ = ["has_old_self", "rule_error_string", "validate_rules"]

_OLD_SELF = re.compile(r"\boldSelf\b")
_MISSING = object()


def has_old_self(rule: str) -> bool:
    return bool(_OLD_SELF.search(rule))


def rule_error_string(rule: str) -> str:
    """ruleErrorString: the rule, trimmed, as the default message shows it."""
    return rule.strip()


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate_rules(schema: dict[str, Any], value: Any, old: Any = _MISSING,
                   path: str = "") -> list[FieldError]:
    """Every failing rule in schema for value (old: its previous value, on update)."""
    if value is None:
        return []
    errs = _node_rules(schema, value, old, path)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key in sorted(value):
            if not path and key == "metadata":
                continue
            sub = properties.get(key, additional)
            if isinstance(sub, dict):
                old_item = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                errs += validate_rules(sub, value[key], old_item, _join(path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        by_key = {}
        if schema.get("x-kubernetes-list-type") == "map" and isinstance(old, list):
            by_key = {_map_key(item, keys): item for item in old if isinstance(item, dict)}
        for i, item in enumerate(value):
            old_item = by_key.get(_map_key(item, keys), _MISSING) if by_key and \
                isinstance(item, dict) else _MISSING
            errs += validate_rules(schema["items"], item, old_item, f"{path}[{i}]")
    return errs


def _map_key(item: dict[str, Any], keys: list[str]) -> tuple[Any, ...]:
    return tuple(repr(item.get(k)) for k in keys)


def _node_rules(schema: dict[str, Any], value: Any, old: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = schema.get("type", "")
    for rule in schema.get("x-kubernetes-validations") or []:
        text = str(rule.get("rule") or "")
        transition = has_old_self(text)
        if transition and old is _MISSING:
            continue  # a transition rule runs only when there is an old value to compare
        activation = {"self": value, **({"oldSelf": old} if transition else {})}
        where = path + str(rule.get("fieldPath") or "")
        try:
            ok = compile_expression(text).evaluate(activation)
        except CelCompileError as err:  # refused when the CRD was written; kept for safety
            errs.append(field_invalid(where, kind, f"compilation failed: {err}"))
            continue
        except CelEvalError as err:
            if str(err) == "no such overload":
                errs.append(field_invalid(where, kind, f"'{err}': call arguments did not match a "
                                          "supported operator, function or macro signature for "
                                          f"rule: {rule_error_string(text)}"))
            else:
                errs.append(field_invalid(where, kind,
                                          f"{err} evaluating rule: {rule_error_string(text)}"))
            continue
        if ok is True:
            continue
        if ok is not False:
            errs.append(field_invalid(where, kind, "rule did not evaluate to a bool"))
            continue
        errs.append(_rule_error(rule, where, kind, _message(rule, text, activation)))
    return errs


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
