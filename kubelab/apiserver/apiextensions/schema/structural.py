"""Is a CRD's openAPIV3Schema one the server can work with? Upstream's rules and words:

- structural (pkg/apiserver/schema/validation.go ValidateStructural): validateStructuralInvariants
  (every specified field and array item has a type, the root is an object without
  additionalProperties, arrays have items, metadata at the root restricts only name and
  generateName (validateStructuralMetadataInvariants), embedded resources are objects,
  x-kubernetes-int-or-string stands alone (validateExtensions), the junctors hold value
  validations only (validateValueValidation, junctors.py)) and validateStructuralCompleteness
  (completeness.go: every property a junctor names is specified outside it);
- the rest of ValidateCustomResourceDefinitionOpenAPISchema
  (pkg/apis/apiextensions/validation/validation.go): uniqueItems is refused,
  additionalProperties and properties exclude each other,
  x-kubernetes-preserve-unknown-fields is true or unset, the list and map types; and, once
  the schema has no errors, each x-kubernetes-validations rule must compile, type-check and
  stay within its cost (compilation.py).

kubelab's departure: validateStructuralCompleteness looks at the junctors of every level of
the structural schema (upstream's looks at the root's only).
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import FieldError, field_forbidden, field_invalid, field_not_supported, field_required
from kubelab.apiserver.apiextensions.schema.compilation import validate_rule_compilation
from kubelab.apiserver.apiextensions.schema.junctors import (
    is_int_or_string_all_of_pattern,
    is_int_or_string_any_of_pattern,
    validate_value_validation,
    validate_value_validation_completeness,
)
from kubelab.apiserver.apiextensions.schema.rules import has_old_self
from kubelab.apiserver.apiextensions.schema.validate import validate_value

__all__ = ["validate_custom_resource_definition_validation", "validate_structural"]

REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid",
           "FieldValueRequired"]
ROOT_LEVEL, ITEM_LEVEL, FIELD_LEVEL = "root", "item", "field"
_EMPTY_TYPE = {ROOT_LEVEL: "must not be empty at the root",
               ITEM_LEVEL: "must not be empty for specified array items",
               FIELD_LEVEL: "must not be empty for specified object fields"}


def validate_custom_resource_definition_validation(schema: Any, path: str) -> list[FieldError]:
    """Every problem with the openAPIV3Schema at path: ValidateStructural's (sorted, as
    upstream sorts them), then ValidateCustomResourceDefinitionOpenAPISchema's."""
    if not isinstance(schema, dict):
        return [field_required(path, "schemas are required")]
    errs = validate_structural(path, schema) + \
        validate_custom_resource_definition_openapi_schema(schema, path, True, None)
    # The rules are compiled (type-checked, their cost estimated) only for a schema without
    # errors: an invalid schema has no CEL types to check them against.
    return errs or validate_rule_compilation(schema, path)


def validate_structural(path: str, s: dict[str, Any]) -> list[FieldError]:
    """ValidateStructural: the invariants and the completeness, sorted by their text."""
    errs = validate_structural_invariants(s, ROOT_LEVEL, path) + \
        validate_structural_completeness(s, path)
    return sorted(errs, key=str)


def _structural_children(s: dict[str, Any], path: str) -> list[tuple[str, dict[str, Any], str]]:
    """(level, schema, path) of the structural schemas right under s: items, properties and
    additionalProperties (never a junctor's)."""
    children = []
    if isinstance(s.get("items"), dict):
        children.append((ITEM_LEVEL, s["items"], f"{path}.items"))
    for key, sub in (s.get("properties") or {}).items():
        if isinstance(sub, dict):
            children.append((FIELD_LEVEL, sub, f"{path}.properties[{key}]"))
    if isinstance(s.get("additionalProperties"), dict):
        children.append((FIELD_LEVEL, s["additionalProperties"], f"{path}.additionalProperties"))
    return children


def validate_structural_invariants(s: dict[str, Any], lvl: str, path: str) -> list[FieldError]:
    """validateStructuralInvariants: the invariants of a structural schema, at every level."""
    errs: list[FieldError] = []
    kind = s.get("type", "")
    if kind == "array" and not isinstance(s.get("items"), dict):
        errs.append(field_required(f"{path}.items", "must be specified"))
    for child_level, child, child_path in _structural_children(s, path):
        errs += validate_structural_invariants(child, child_level, child_path)
    additional = s.get("additionalProperties")
    if additional is not None and lvl == ROOT_LEVEL:
        errs.append(field_forbidden(f"{path}.additionalProperties", "must not be used at the root"))
    errs += validate_extensions(s, path)
    errs += validate_value_validation(s, is_int_or_string_any_of_pattern(s),
                                      is_int_or_string_all_of_pattern(s), path)
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    check_metadata = lvl == ROOT_LEVEL or embedded
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(field_required(f"{path}.type", detail) if not kind else
                    field_invalid(f"{path}.type", kind, detail))
    elif not kind and not s.get("x-kubernetes-int-or-string") and not preserve:
        errs.append(field_required(f"{path}.type", _EMPTY_TYPE[lvl]))
    if embedded and additional is not None:
        errs.append(field_forbidden(f"{path}.additionalProperties",
                                    "must not be used if x-kubernetes-embedded-resource is set"))
    if lvl == ROOT_LEVEL and kind and kind != "object":
        errs.append(field_invalid(f"{path}.type", kind, "must be object at the root"))
    properties = s.get("properties") or {}
    for key in ("kind", "apiVersion"):
        sub = properties.get(key)
        if check_metadata and isinstance(sub, dict) and sub.get("type") != "string":
            errs.append(field_invalid(f"{path}.properties[{key}].type", sub.get("type", ""),
                                      "must be string"))
    metadata = properties.get("metadata")
    if isinstance(metadata, dict):
        errs += validate_structural_metadata_invariants(metadata, check_metadata, lvl,
                                                        f"{path}.properties[metadata]")
    if embedded and not preserve and not properties:
        errs.append(field_required(f"{path}.properties", "must not be empty if "
                                   "x-kubernetes-embedded-resource is true without "
                                   "x-kubernetes-preserve-unknown-fields"))
    return errs


def validate_structural_metadata_invariants(s: dict[str, Any], check_metadata: bool, lvl: str,
                                            path: str) -> list[FieldError]:
    """validateStructuralMetadataInvariants: an object, and at the root only name and
    generateName may be restricted."""
    errs = []
    if check_metadata and s.get("type") != "object":
        errs.append(field_invalid(f"{path}.type", s.get("type", ""), "must be object"))
    if lvl == ROOT_LEVEL:
        rest = {k: v for k, v in s.items() if k not in ("type", "properties", "default")}
        names = set(s.get("properties") or {})
        if rest or not names <= {"name", "generateName"}:
            errs.append(field_forbidden(path, "must not specify anything other than name and "
                                        "generateName, but metadata is implicitly specified"))
    return errs


def validate_extensions(s: dict[str, Any], path: str) -> list[FieldError]:
    """validateExtensions: x-kubernetes-int-or-string excludes the other two extensions."""
    errs = []
    if s.get("x-kubernetes-int-or-string"):
        if s.get("x-kubernetes-preserve-unknown-fields"):
            errs.append(field_invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True,
                                      "must be false if x-kubernetes-int-or-string is true"))
        if s.get("x-kubernetes-embedded-resource"):
            errs.append(field_invalid(f"{path}.x-kubernetes-embedded-resource", True,
                                      "must be false if x-kubernetes-int-or-string is true"))
    return errs


def validate_structural_completeness(s: dict[str, Any], path: str) -> list[FieldError]:
    """validateStructuralCompleteness: what the junctors of s name is specified in s (and so
    on down the structural schema: see the module's departure)."""
    errs = validate_value_validation_completeness(s, s, path, path)
    for _, child, child_path in _structural_children(s, path):
        errs += validate_structural_completeness(child, child_path)
    return errs


def validate_custom_resource_definition_openapi_schema(s: dict[str, Any], path: str, root: bool,
                                                        uncorrelated: str | None) -> list[FieldError]:
    """ValidateCustomResourceDefinitionOpenAPISchema, for the CRD's openAPIV3Schema at path.

    uncorrelated: the list or atomic map above s (its path) whose items old and new values
    cannot be matched up in, so no rule there may use oldSelf (withForbidOldSelfValidations)."""
    errs: list[FieldError] = []
    if s.get("uniqueItems"):
        errs.append(field_forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true "
                                    "since the runtime complexity becomes quadratic"))
    properties = s.get("properties") or {}
    additional = s.get("additionalProperties")
    if additional is not None:
        if properties and (additional is False or isinstance(additional, dict)):
            errs.append(field_forbidden(f"{path}.additionalProperties",
                                        "additionalProperties and properties are mutual exclusive"))
        if isinstance(additional, dict):
            errs += validate_custom_resource_definition_openapi_schema(
                additional, f"{path}.additionalProperties", False,
                uncorrelated or (path if s.get("x-kubernetes-map-type") == "atomic" else None))
    for key in sorted(properties):
        if isinstance(properties[key], dict):
            sub_path = f"{path}.properties[{key}]"
            if root and key in ("metadata", "kind", "apiVersion") and \
                    "default" in properties[key]:
                errs.append(field_forbidden(f"{sub_path}.default", f"must not be set in top-level {key}"))
            errs += validate_custom_resource_definition_openapi_schema(
                properties[key], sub_path, False,
                uncorrelated or (path if s.get("x-kubernetes-map-type") == "atomic" else None))
    if isinstance(s.get("items"), dict):
        errs += validate_custom_resource_definition_openapi_schema(
            s["items"], f"{path}.items", False,
            uncorrelated or (None if s.get("x-kubernetes-list-type") == "map" else path))
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(field_invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False,
                                  "must be true or undefined"))
    errs += _list_type(s, path)
    errs += _validations(s, path, uncorrelated)
    if "default" in s and not root:
        errs += validate_value(_without_default(s), s["default"], f"{path}.default")
    return errs


def _without_default(s: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in s.items() if k not in ("default", "x-kubernetes-validations")}


def _list_type(s: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    list_type = s.get("x-kubernetes-list-type")
    kind = s.get("type", "")
    if list_type is not None and kind != "array":
        detail = "must be array if x-kubernetes-list-type is specified"
        errs.append(field_required(f"{path}.type", detail) if not kind else
                    field_invalid(f"{path}.type", kind, detail))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(field_not_supported(f"{path}.x-kubernetes-list-type", list_type,
                                        ["atomic", "set", "map"]))
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys and list_type is None:
        errs.append(field_required(f"{path}.x-kubernetes-list-type",
                                   "must be map if x-kubernetes-list-map-keys is non-empty"))
    elif keys and list_type != "map":
        errs.append(field_invalid(f"{path}.x-kubernetes-list-type", list_type,
                                  "must be map if x-kubernetes-list-map-keys is non-empty"))
    if list_type == "map":
        items = s.get("items")
        if not keys:
            errs.append(field_required(f"{path}.x-kubernetes-list-map-keys",
                                       "must not be empty if x-kubernetes-list-type is map"))
        if not isinstance(items, dict):
            errs.append(field_required(f"{path}.items",
                                       "must have a schema if x-kubernetes-list-type is map"))
        elif items.get("type") != "object":
            errs.append(field_invalid(f"{path}.items.type", items.get("type", ""),
                                      "must be object if parent array's x-kubernetes-list-type is map"))
        else:
            for key in keys:
                if key not in (items.get("properties") or {}):
                    errs.append(field_invalid(f"{path}.x-kubernetes-list-map-keys", keys,
                                              "entries must all be names of item properties"))
    return errs


def _validations(s: dict[str, Any], path: str, uncorrelated: str | None) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or []):
        where = f"{path}.x-kubernetes-validations[{i}]"
        if not isinstance(rule, dict):
            continue
        text = str(rule.get("rule") or "").strip()
        message = rule.get("message")
        if not text:
            errs.append(field_required(f"{where}.rule", "rule is not specified"))
            continue
        if message is not None and message and not str(message).strip():
            errs.append(field_invalid(f"{where}.message", message,
                                      "message must be non-empty if specified"))
        elif message and "\n" in str(message).strip():
            errs.append(field_invalid(f"{where}.message", message,
                                      "message must not contain line breaks"))
        elif "\n" in text and not message:
            errs.append(field_required(f"{where}.message",
                                       "message must be specified if rule contains line breaks"))
        expression = rule.get("messageExpression")
        if expression is not None and expression and not str(expression).strip():
            errs.append(field_required(f"{where}.messageExpression",
                                       "messageExpression must be non-empty if specified"))
        if uncorrelated is not None and has_old_self(text):
            errs.append(field_invalid(f"{where}.rule", text, "oldSelf cannot be used on the "
                                      f"uncorrelatable portion of the schema within {uncorrelated}"))
        if rule.get("reason") is not None and rule["reason"] not in REASONS:
            errs.append(field_not_supported(f"{where}.reason", rule["reason"], REASONS))
    return errs
