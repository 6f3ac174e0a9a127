"""allOf, anyOf, oneOf and not: value validations a structural schema may combine.

Structural rules (pkg/apiserver/schema/validation.go validateValueValidation,
validateNestedValueValidation; completeness.go validateValueValidationCompleteness,
validateNestedValueValidationCompleteness): inside a junctor only value validations may
appear: no type (the IntOrString patterns `anyOf: [{type: integer}, {type: string}]`, alone or
as allOf's first item's anyOf, are not checked), no additionalProperties, default, title,
description, nullable, x-kubernetes-* extensions or metadata, and every property named inside
must be specified outside too.

kubelab's departures: externalDocs is refused inside a junctor as well; a property a junctor
names is complete when the schema outside has additionalProperties; and completeness is
checked at every level of the structural schema (structural.py), not only at the root.

Evaluation (k8s.io/kube-openapi pkg/validation/validate/schema_props.go): allOf needs every
schema, anyOf one, oneOf exactly one, not none. Their own errors are not field errors (a
go-openapi composite error), so apiextensions reports them at `<nil>` with an empty value:

    <nil>: Invalid value: "": spec.port must validate at least one schema (anyOf)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubelab.api.errors import FieldError, field_forbidden, field_invalid, field_required

__all__ = ["JUNCTORS", "is_int_or_string_all_of_pattern", "is_int_or_string_any_of_pattern",
           "validate_junctors", "validate_value_validation", "validate_value_validation_completeness"]

JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
Validate = Callable[[dict[str, Any], Any, str], list[FieldError]]

_FORBIDDEN = [  # (key, message) for keys a nested value validation may not have
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("externalDocs", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
]


# Keys whose mere presence counts (a default of 0 is a default); the rest count when true/non-empty.
_SET_MEANS_USED = frozenset({"additionalProperties", "default", "externalDocs",
                             "x-kubernetes-list-type", "x-kubernetes-map-type"})


def is_int_or_string_any_of_pattern(s: dict[str, Any]) -> bool:
    """isIntOrStringAnyOfPattern: anyOf is [{type: integer}, {type: string}]."""
    return s.get("anyOf") == INT_OR_STRING


def is_int_or_string_all_of_pattern(s: dict[str, Any]) -> bool:
    """isIntOrStringAllOfPattern: allOf's first item's anyOf is that pattern."""
    all_of = s.get("allOf") or []
    return bool(all_of) and isinstance(all_of[0], dict) and \
        all_of[0].get("anyOf") == INT_OR_STRING


def _junctor_schemas(v: dict[str, Any], path: str) -> list[tuple[str, int, dict[str, Any], str]]:
    """(junctor, index, schema, its path) of every schema under v's allOf, anyOf, oneOf, not."""
    found = []
    for junctor in JUNCTORS:
        subs = v.get(junctor)
        items = [subs] if junctor == "not" else subs if isinstance(subs, list) else []
        for i, sub in enumerate(items):
            if isinstance(sub, dict):
                where = f"{path}.not" if junctor == "not" else f"{path}.{junctor}[{i}]"
                found.append((junctor, i, sub, where))
    return found


def validate_value_validation(v: dict[str, Any], skip_any_of: bool, skip_first_all_of_any_of: bool,
                              path: str) -> list[FieldError]:
    """validateValueValidation: each schema under a junctor of v holds value validations only
    (anyOf skipped when it is the IntOrString pattern, as allOf[0]'s anyOf may be), and a
    pattern must compile."""
    errs: list[FieldError] = []
    for junctor, i, sub, where in _junctor_schemas(v, path):
        if junctor == "anyOf" and skip_any_of:
            continue
        errs += validate_nested_value_validation(
            sub, junctor == "allOf" and i == 0 and skip_first_all_of_any_of, where)
    if isinstance(v.get("pattern"), str):
        try:
            re.compile(v["pattern"])
        except re.error as err:
            errs.append(field_invalid(f"{path}.pattern", v["pattern"],
                                      f"must be a valid regular expression, but isn't: {err}"))
    return errs


def validate_nested_value_validation(v: dict[str, Any], skip_any_of: bool,
                                     path: str) -> list[FieldError]:
    """validateNestedValueValidation: what a schema under a junctor must not specify."""
    errs = validate_value_validation(v, skip_any_of, False, path)
    if "type" in v:
        errs.append(field_forbidden(f"{path}.type", "must be empty to be structural"))
    for key, message in _FORBIDDEN:
        present = key in v if key in _SET_MEANS_USED else bool(v.get(key))
        if present:
            errs.append(field_forbidden(f"{path}.{key}", message))
    if v.get("nullable"):
        errs.append(field_forbidden(f"{path}.nullable", "must be false to be structural"))
    # Forbid reasoning about metadata: it could restrict metadata in ways we do not want.
    if "metadata" in (v.get("properties") or {}):
        errs.append(field_forbidden(f"{path}.properties[metadata]",
                                    "must not be specified in a nested context"))
    return errs


def validate_value_validation_completeness(v: dict[str, Any], s: dict[str, Any], s_path: str,
                                           v_path: str) -> list[FieldError]:
    """validateValueValidationCompleteness: the junctors of v against the structural s."""
    errs: list[FieldError] = []
    for _, _, sub, where in _junctor_schemas(v, v_path):
        errs += validate_nested_value_validation_completeness(sub, s, s_path, where)
    return errs


def validate_nested_value_validation_completeness(v: dict[str, Any], s: dict[str, Any],
                                                  s_path: str, v_path: str) -> list[FieldError]:
    """validateNestedValueValidationCompleteness: every property a junctor's schema names is
    specified in the structural schema s too."""
    errs = validate_value_validation_completeness(v, s, s_path, v_path)
    for key in sorted(v.get("properties") or {}):
        if key not in (s.get("properties") or {}) and s.get("additionalProperties") is None:
            errs.append(field_required(f"{s_path}.properties[{key}]",
                                       f"because it is defined in {v_path}.properties[{key}]"))
    return errs


def validate_junctors(schema: dict[str, Any], value: Any, path: str,
                      validate: Validate) -> list[FieldError]:
    """schemaPropsValidator: the junctors' verdicts on value (validate checks one schema)."""
    name = path or "."
    errs: list[FieldError] = []

    def composite(message: str) -> FieldError:
        return field_invalid("<nil>", "", message)

    all_of = [s for s in schema.get("allOf") or [] if isinstance(s, dict)]
    if all_of:
        results = [validate(s, value, path) for s in all_of]
        for result in results:
            errs += result
        valid = sum(1 for r in results if not r)
        if valid != len(all_of):
            errs.append(composite(f"{name} must validate all the schemas (allOf)"
                                  f"{'. None validated' if valid == 0 else ''}"))
    any_of = [s for s in schema.get("anyOf") or [] if isinstance(s, dict)]
    if any_of:
        results = [validate(s, value, path) for s in any_of]
        if all(results):
            errs.append(composite(f"{name} must validate at least one schema (anyOf)"))
            errs += results[0]
    one_of = [s for s in schema.get("oneOf") or [] if isinstance(s, dict)]
    if one_of:
        results = [validate(s, value, path) for s in one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            errs.append(composite(f"{name} must validate one and only one schema (oneOf). {found}"))
            if valid == 0:
                errs += results[0]
    not_schema = schema.get("not")
    if isinstance(not_schema, dict) and not validate(not_schema, value, path):
        errs.append(composite(f"{name} must not validate the schema (not)"))
    return errs
