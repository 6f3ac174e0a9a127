"""allOf, anyOf, oneOf and not: value validations a structural schema may combine.

Structural rules (pkg/apiserver/schema/validation.go validateNestedValueValidation and
validateStructuralCompleteness): inside a junctor only value validations may appear: no type
(except the IntOrString patterns `anyOf: [{type: integer}, {type: string}]`, alone or as
allOf's first item, next to x-kubernetes-int-or-string), no additionalProperties, default,
title, description, nullable, x-kubernetes-* extensions or metadata, and every property named
inside must be specified outside too.

Evaluation (k8s.io/kube-openapi pkg/validation/validate/schema_props.go): allOf needs every
schema, anyOf one, oneOf exactly one, not none. Their own errors are not field errors (a
go-openapi composite error), so apiextensions reports them at `<nil>` with an empty value:

    <nil>: Invalid value: "": spec.port must validate at least one schema (anyOf)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api.errors import FieldError, field_forbidden, field_invalid, field_required

__all__ = ["JUNCTORS", "is_int_or_string_pattern", "nested_errors", "validate_junctors"]

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


def is_int_or_string_pattern(schema: dict[str, Any]) -> tuple[bool, bool]:
    """(anyOf is the IntOrString pattern, allOf[0].anyOf is)."""
    any_of = schema.get("anyOf") == INT_OR_STRING
    all_of = schema.get("allOf") or []
    first = bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == INT_OR_STRING
    return any_of, first


def nested_errors(schema: dict[str, Any], path: str, outside: dict[str, Any],
                  spath: str | None = None) -> list[FieldError]:
    """The structural problems of the junctors in schema (at path). outside is the structural
    schema around them (at spath), which must specify every property they name."""
    spath = path if spath is None else spath
    skip_any, skip_first_all = is_int_or_string_pattern(schema)
    errs: list[FieldError] = []
    for junctor in JUNCTORS:
        subs = schema.get(junctor)
        items = [subs] if junctor == "not" else subs if isinstance(subs, list) else []
        for i, sub in enumerate(items):
            if not isinstance(sub, dict):
                continue
            where = f"{path}.not" if junctor == "not" else f"{path}.{junctor}[{i}]"
            typed = (junctor == "anyOf" and skip_any) or (junctor == "allOf" and i == 0 and
                                                          skip_first_all)
            errs += _nested(sub, where, outside, spath, typed)
    return errs


def _nested(sub: dict[str, Any], where: str, outside: dict[str, Any], spath: str,
            typed: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if "type" in sub and not typed:
        errs.append(field_forbidden(f"{where}.type", "must be empty to be structural"))
    for key, message in _FORBIDDEN:
        present = key in sub if key in _SET_MEANS_USED else bool(sub.get(key))
        if present:
            errs.append(field_forbidden(f"{where}.{key}", message))
    if sub.get("nullable"):
        errs.append(field_forbidden(f"{where}.nullable", "must be false to be structural"))
    properties = sub.get("properties") or {}
    if "metadata" in properties:
        errs.append(field_forbidden(f"{where}.properties[metadata]",
                                    "must not be specified in a nested context"))
    for key in sorted(properties):
        if key not in (outside.get("properties") or {}) and outside.get("additionalProperties") \
                is None:
            errs.append(field_required(f"{spath}.properties[{key}]",
                                       f"because it is defined in {where}.properties[{key}]"))
    return errs + nested_errors(sub, where, outside, spath)


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
