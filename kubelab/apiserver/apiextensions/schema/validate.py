"""A custom object against its structural schema, in upstream's words.

kube-openapi's SchemaValidator (k8s.io/kube-openapi pkg/validation/validate: type.go,
validator.go, slice_validator.go, object_validator.go) finds the problems and names them
(pkg/validation/errors/schema.go: `spec.replicas in body should be greater than or equal to 0`);
apiextensions turns each into a field error (pkg/apiserver/validation/validation.go
kubeOpenAPIResultToFieldErrors): a missing field is `Required value`, an enum miss is
`Unsupported value`, maxLength is `Too long`, maxItems and maxProperties are `Too many`, and
everything else is `Invalid value: <value>: <kube-openapi's message>`.

The list types (x-kubernetes-list-type set and map, pkg/apiserver/schema/listtype) and embedded
resources (pkg/apiserver/schema/objectmeta/validation.go) are checked here too.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_invalid,
    field_not_supported,
    field_required,
    field_too_long,
)
from kubelab.apiserver.apiextensions.schema.formats import valid_format
from kubelab.apiserver.apiextensions.schema.junctors import JUNCTORS, validate_junctors

__all__ = ["go_float", "json_type", "validate_value"]

IN = "body"


def go_float(x: float) -> str:
    """Go's %v of a float64 (the schema's numbers are float64): 0, 1.5, 100000, 1e+06.

    %v is strconv's shortest 'g': %e once the decimal exponent is below -4 or at least 6."""
    if x == 0:
        return "0"
    number = Decimal(repr(float(x))).normalize()
    sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)
    exp10 = len(digits) + exponent - 1
    if -4 <= exp10 < 6:
        return format(number, "f")
    mantissa = "".join(map(str, digits))
    head = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if sign else ''}{head}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, as kube-openapi names it (type.go schemaInfoForType)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _invalid(path: str, value: Any, message: str) -> FieldError:
    return field_invalid(path, value, message)


def _type_ok(schema: dict[str, Any], value: Any) -> str | None:
    """None if value has the schema's type, else the type kube-openapi expected."""
    types = ["integer", "string"] if schema.get("x-kubernetes-int-or-string") else \
        [schema["type"]] if schema.get("type") else []
    if not types:
        return None
    if value is None:
        return None if schema.get("nullable") else ",".join(types)
    actual = json_type(value)
    if actual in types or (actual == "integer" and "number" in types):
        return None
    if actual == "number" and "integer" in types and float(value).is_integer():
        return None
    return ",".join(types)


def validate_value(schema: dict[str, Any], value: Any, path: str = "") -> list[FieldError]:
    """Every problem with value under schema; path is where value sits ("" the object)."""
    errs: list[FieldError] = []
    expected = _type_ok(schema, value)
    name = path or "."
    if expected is not None:
        # InvalidType: the value reported is the JSON type the data had.
        actual = json_type(value)
        errs.append(_invalid(path, actual, f'{name} in {IN} must be of type {expected}: "{actual}"'))
        # The other validators still run where they apply to the value's own kind.
    if value is None:
        return errs
    if any(j in schema for j in JUNCTORS):
        errs += validate_junctors(schema, value, path, validate_value)
    if isinstance(value, str):
        errs += _string(schema, value, path, name)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        errs += _number(schema, value, path, name)
    elif isinstance(value, list):
        errs += _array(schema, value, path, name)
    if "enum" in schema and value not in schema["enum"]:
        errs.append(field_not_supported(path, value, [
            e if isinstance(e, str) else json.dumps(e, separators=(",", ":"))
            for e in schema["enum"]]))
    if isinstance(value, dict):
        errs += _object(schema, value, path, name)
    return errs


def _string(schema: dict[str, Any], value: str, path: str, name: str) -> list[FieldError]:
    errs = []
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errs.append(field_too_long(path, schema["maxLength"]))
    if "minLength" in schema and len(value) < schema["minLength"]:
        errs.append(_invalid(path, value,
                             f"{name} in {IN} should be at least {schema['minLength']} chars long"))
    if "pattern" in schema and not re.search(schema["pattern"], value):
        errs.append(_invalid(path, value, f"{name} in {IN} should match '{schema['pattern']}'"))
    fmt = schema.get("format")
    if fmt and not valid_format(fmt, value):
        errs.append(_invalid(path, value, f'{name} in {IN} must be of type {fmt}: "{value}"'))
    return errs


def _number(schema: dict[str, Any], value: float, path: str, name: str) -> list[FieldError]:
    errs = []
    factor = schema.get("multipleOf")
    if factor and (value / factor) != int(value / factor):
        errs.append(_invalid(path, value, f"{name} in {IN} should be a multiple of {go_float(factor)}"))
    if "maximum" in schema:
        top, exclusive = schema["maximum"], bool(schema.get("exclusiveMaximum"))
        if value > top or (exclusive and value == top):
            words = "less than" if exclusive else "less than or equal to"
            errs.append(_invalid(path, value, f"{name} in {IN} should be {words} {go_float(top)}"))
    if "minimum" in schema:
        low, exclusive = schema["minimum"], bool(schema.get("exclusiveMinimum"))
        if value < low or (exclusive and value == low):
            words = "greater than" if exclusive else "greater than or equal to"
            errs.append(_invalid(path, value, f"{name} in {IN} should be {words} {go_float(low)}"))
    return errs


def _array(schema: dict[str, Any], value: list[Any], path: str, name: str) -> list[FieldError]:
    errs: list[FieldError] = []
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            errs += validate_value(items, item, f"{path}[{i}]")
    if "minItems" in schema and len(value) < schema["minItems"]:
        errs.append(_invalid(path, len(value),
                             f"{name} in {IN} should have at least {schema['minItems']} items"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errs.append(FieldError("Too many", path, len(value),
                               f"must have at most {schema['maxItems']} items"))
    if schema.get("uniqueItems") and len({_key(v) for v in value}) < len(value):
        errs.append(_invalid(path, "", f"{name} in {IN} shouldn't contain duplicates"))
    errs += _list_type(schema, value, path)
    return errs


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _list_type(schema: dict[str, Any], value: list[Any], path: str) -> list[FieldError]:
    """listtype.ValidateListSetsAndMaps: a set has no duplicates, a map no duplicate keys."""
    kind = schema.get("x-kubernetes-list-type")
    errs, seen = [], set()
    for i, item in enumerate(value):
        if kind == "set":
            entry = item
        elif kind == "map" and isinstance(item, dict):
            keys = schema.get("x-kubernetes-list-map-keys") or []
            entry = {k: item[k] for k in keys if k in item}
        else:
            continue
        if _key(entry) in seen:
            errs.append(field_duplicate(f"{path}[{i}]", entry))
        seen.add(_key(entry))
    return errs


def _object(schema: dict[str, Any], value: dict[str, Any], path: str, name: str) -> list[FieldError]:
    """object_validator.go: too few or too many properties end the check; then forbidden
    properties, the properties (sorted here: Go's map order is random), then required."""
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        return [_invalid(path, len(value), f"{name} in {IN} should have at least "
                         f"{schema['minProperties']} properties")]
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        return [FieldError("Too many", path, len(value),
                           f"must have at most {schema['maxProperties']} items")]
    errs: list[FieldError] = []
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    if additional is False:
        for key in sorted(set(value) - set(properties)):
            errs.append(_invalid(path, key, f"{name}.{key} in {IN} is a forbidden property"))
    for key in sorted(value):
        sub = properties.get(key)
        if sub is None and isinstance(additional, dict):
            sub = additional
        if isinstance(sub, dict) and not (not path and key == "metadata"):
            errs += validate_value(sub, value[key], _child(path, key))
    for key in schema.get("required") or []:
        if key not in value:
            errs.append(field_required(_child(path, key)))
    if schema.get("x-kubernetes-embedded-resource"):
        for key in ("apiVersion", "kind"):
            if not value.get(key):
                errs.append(field_required(_child(path, key), "must not be empty"))
    return errs
