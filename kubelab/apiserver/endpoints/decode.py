"""Decoding a request body: the JSON wire, the kind it claims to be, and strict field checking.

Upstream's create and update handlers (k8s.io/apiserver/pkg/endpoints/handlers/create.go,
update.go, rest.go transformDecodeError) read at most MaxRequestBodyBytes, decode the body with
the strict serializer and turn every failure into 400 BadRequest:

    Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"
    Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct
    field PodSpec.spec.containers of type []v1.Container

Our body is already a Python dict, so decoding walks it against the kind's schema (schema.py)
and copies it on the way: the server works on its own copy, never on the caller's dict. A value
that JSON cannot carry (NaN, a set, a non-string key) is refused as Go's decoder would never
see it. As in Go, the first type error wins over unknown fields.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
import re
from datetime import UTC, datetime
from typing import Any, NoReturn

from kubelab.api.errors import ApiError, ParseError, bad_request, request_entity_too_large
from kubelab.api.quantity import canonical_quantity
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.apis.schema import (
    ANY,
    OBJECT_META,
    QUANTITY,
    STRING,
    ListOf,
    Scalar,
    Struct,
    Type,
)

__all__ = ["MAX_DEPTH", "MAX_REQUEST_BODY_BYTES", "copy_json", "decode_body", "strict_decoding_error"]

# k8s.io/apiserver/pkg/server/config.go: MaxRequestBodyBytes = 3 MiB.
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
# Go's decoder stops at 10000 levels of nesting; Python's stack is smaller, so we stop earlier.
MAX_DEPTH = 200

_JSON_TYPES = {str: "string", bool: "bool", int: "number", float: "number", list: "array",
               dict: "object", type(None): "null"}
_INT_RANGES = {"int32": 2**31, "int64": 2**63}
_KIND_SNIFF = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
               'Kind string "json:\\"kind,omitempty\\"" }')


# metav1.Time and MicroTime (k8s.io/apimachinery/pkg/apis/meta/v1/time.go, micro_time.go):
# UnmarshalJSON parses RFC 3339 (any offset, any fraction); MarshalJSON writes the instant in
# UTC, Time to the second and MicroTime to the microsecond, so "+02:00" never comes back.
_TIME_LAYOUTS = {"metav1.Time": ("2006-01-02T15:04:05Z07:00", "%Y-%m-%dT%H:%M:%SZ"),
                 "metav1.MicroTime": ("2006-01-02T15:04:05.000000Z07:00",
                                      "%Y-%m-%dT%H:%M:%S.%fZ")}
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


@functools.lru_cache(maxsize=4096)
def _decode_time(value: str, go: str) -> str:
    """value as the API server stores it, or the error time.Parse gives for it. (The same few
    timestamps come back in write after write: the answers are remembered.)"""
    layout, out = _TIME_LAYOUTS[go]
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise _DecodeError(f'parsing time "{value}" as "{layout}": cannot parse "{value}" as '
                           '"2006"')
    fraction = (match.group(1) or "")[:7]  # Python reads at most six digits of it
    offset = "+00:00" if match.group(2) == "Z" else match.group(2)
    try:
        when = datetime.fromisoformat(value[:19] + fraction + offset)
    except ValueError:
        bounds = {"month": (5, 1, 12), "hour": (11, 0, 23), "minute": (14, 0, 59),
                  "second": (17, 0, 59)}  # where in the text, the lowest, the highest
        field = next((name for name, (at, low, high) in bounds.items()
                      if not low <= int(value[at:at + 2]) <= high), "day")
        raise _DecodeError(f'parsing time "{value}": {field} out of range') from None
    return when.astimezone(UTC).strftime(out)


def decode_body(body: Any, info: ResourceInfo, schema: Struct | None) -> dict[str, Any]:
    """A private, strictly checked copy of body for the endpoint `info`, or ApiError 400/413.

    schema is the kind's (schema.SCHEMAS); None for a custom resource, whose only fixed part
    is its metadata."""
    if not isinstance(body, dict):
        raise _sniff_error(body, "")
    api_version = body.get("apiVersion") or info.api_version
    kind = body.get("kind") or info.kind  # missing ones default to the endpoint's
    if not isinstance(api_version, str):
        raise _sniff_error(api_version, "apiVersion")
    if not isinstance(kind, str):
        raise _sniff_error(kind, "kind")
    group, _, version = api_version.rpartition("/")
    if (group, version) != (info.group, info.version):
        raise bad_request(f"the API version in the data ({api_version}) does not match the "
                          f"expected API version ({info.api_version})")
    if kind != info.kind:
        raise _cannot(info, kind, version, f"converting ({version}.{kind}) to "
                      f"({version}.{info.kind}): unknown conversion")
    decoder = _Decoder()
    try:
        obj = decoder.struct(body, schema or _custom(kind), "", "", 0)
    except _DecodeError as err:
        raise _cannot(info, kind, version, str(err)) from None
    if decoder.size > MAX_REQUEST_BODY_BYTES:
        raise request_entity_too_large(f"limit is {MAX_REQUEST_BODY_BYTES}")
    if decoder.unknown:
        fields = ", ".join(f'unknown field "{p}"' for p in decoder.unknown)
        raise _cannot(info, kind, version, f"strict decoding error: {fields}")
    obj["apiVersion"], obj["kind"] = api_version, kind
    if kind == "Secret" and not group:
        _convert_secret(obj)
    return obj


def _convert_secret(secret: dict[str, Any]) -> None:
    """Convert_v1_Secret_To_core_Secret (pkg/apis/core/v1/conversion.go): the internal Secret
    has no stringData; each of its keys is written into data (UTF-8, shown base64 on the wire),
    over a data key of the same name. So stringData is never stored nor returned."""
    string_data = secret.pop("stringData", None)
    if string_data:
        data = secret.get("data") or {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(value.encode()).decode()
        secret["data"] = data


def strict_decoding_error(body: Any, info: ResourceInfo, errors: list[str]) -> ApiError:
    """400 `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding error: ...`."""
    kind = body.get("kind") if isinstance(body, dict) else None
    version = body.get("apiVersion") if isinstance(body, dict) else None
    kind = kind if isinstance(kind, str) and kind else info.kind
    version = (version if isinstance(version, str) and version else info.api_version).rpartition("/")[2]
    return _cannot(info, kind, version, "strict decoding error: " + ", ".join(errors))


def copy_json(value: Any, context: str) -> Any:
    """A private copy of a body that has no schema (a patch), or 400 BadRequest
    "<context>: <Go's error>" when JSON cannot carry it, and 413 past the body limit."""
    decoder = _Decoder()
    try:
        copy = decoder.any(value, 0)
    except _DecodeError as err:
        raise bad_request(f"{context}: {err}") from None
    if decoder.size > MAX_REQUEST_BODY_BYTES:
        raise request_entity_too_large(f"limit is {MAX_REQUEST_BODY_BYTES}")
    return copy


_CUSTOM: dict[str, Struct] = {}


def _custom(kind: str) -> Struct:
    """A custom resource: apiVersion, kind and metadata are fixed, the rest is free."""
    if kind not in _CUSTOM:
        _CUSTOM[kind] = _Open(kind, {"apiVersion": STRING, "kind": STRING,
                                     "metadata": OBJECT_META})
    return _CUSTOM[kind]


class _Open(Struct):
    """A struct that keeps fields it does not know (x-kubernetes-preserve-unknown-fields)."""


def _sniff_error(value: Any, field: str) -> ApiError:
    where = f"Go struct field .{field} of type string" if field else f"Go value of type {_KIND_SNIFF}"
    return bad_request("couldn't get version/kind; json parse error: json: cannot unmarshal "
                       f"{_JSON_TYPES.get(type(value), 'value')} into {where}")


def _cannot(info: ResourceInfo, kind: str, version: str, err: str) -> ApiError:
    return bad_request(f'{kind} in version "{version}" cannot be handled as a {info.kind}: {err}')


class _DecodeError(Exception):
    pass


class _Decoder:
    """Copies a value while checking it against a schema: type errors raise at once, unknown
    fields are collected, and `size` estimates the JSON length (for the body limit)."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.size = 0

    def struct(self, value: dict[str, Any], schema: Struct, path: str, ipath: str,
               depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        fields = schema.fields
        size = 2
        for key, item in value.items():
            if type(key) is not str:
                raise _DecodeError(f"json: unsupported type: map key {key!r}")
            size += len(key) + 4
            typ = fields.get(key)
            if typ is None:
                if isinstance(schema, _Open):
                    out[key] = self.any(item, depth + 1)
                else:
                    self.unknown.append(f"{ipath}.{key}" if ipath else key)
            elif typ is STRING and type(item) is str:  # the common case, inline
                size += len(item)
                out[key] = item
            elif item is None:  # null leaves a Go field at its zero value
                out[key] = None
            elif typ is ANY:
                out[key] = self.any(item, depth + 1)
            elif typ.__class__ is Struct and type(item) is dict:  # the next most common
                out[key] = self.struct(item, typ, f"{path}.{key}" if path else key,
                                       f"{ipath}.{key}" if ipath else key, depth + 1)
            else:
                out[key] = self.field(item, typ, f"{path}.{key}" if path else key,
                                      f"{ipath}.{key}" if ipath else key, schema.name, depth + 1)
        self.size += size
        return out

    def field(self, value: Any, typ: Type, path: str, ipath: str, owner: str, depth: int) -> Any:
        """A copy of value (at JSON path `path`, in Go struct `owner`), checked against typ."""
        if value is None:
            # Quantity.UnmarshalJSON reads null as the zero quantity: a node's
            # `allocatable: {memory: null}` is stored as "0", not as a null nobody can parse.
            return "0" if typ is QUANTITY else None
        if isinstance(typ, Struct):
            if type(value) is not dict:
                self.fail(value, typ.go, path, owner)
            return self.struct(value, typ, path, ipath, depth)
        if isinstance(typ, Scalar):
            return self.scalar(value, typ.go, path, owner, depth)
        if isinstance(typ, ListOf):
            if type(value) is not list:
                self.fail(value, typ.go, path, owner)
            item_type = typ.item
            if item_type.__class__ is Struct:  # a list of objects (containers, ...): no detour
                return [self.struct(item, item_type, path, f"{ipath}[{i}]", depth + 1)
                        if type(item) is dict else
                        self.field(item, item_type, path, f"{ipath}[{i}]", owner, depth + 1)
                        for i, item in enumerate(value)]
            if item_type is STRING and all(type(item) is str for item in value):
                self.size += sum(map(len, value))
                return list(value)
            return [self.field(item, item_type, path, f"{ipath}[{i}]", owner, depth + 1)
                    for i, item in enumerate(value)]
        if type(value) is not dict:
            self.fail(value, typ.go, path, owner)
        if typ.value is STRING:  # map[string]string (labels, data, ...): the common case
            nulls = False
            for key, item in value.items():
                if type(key) is not str:
                    raise _DecodeError(f"json: unsupported type: map key {key!r}")
                if type(item) is str:
                    self.size += len(key) + len(item) + 6
                elif item is None:
                    nulls = True
                else:
                    self.fail(item, "string", path, owner)
            # Go decodes a null map value as the zero value, "".
            return {k: "" if v is None else v for k, v in value.items()} if nulls else dict(value)
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _DecodeError(f"json: unsupported type: map key {key!r}")
            out[key] = self.field(item, typ.value, path, f"{ipath}[{key}]", owner, depth + 1)
        self.size += 4 * len(out)
        return out

    def scalar(self, value: Any, go: str, path: str, owner: str, depth: int) -> Any:
        t = type(value)
        if go == "string":
            if t is not str:
                self.fail(value, go, path, owner)
            self.size += len(value)
        elif go == "any":
            return self.any(value, depth)
        elif go in _INT_RANGES:
            bound = _INT_RANGES[go]
            if t is not int or not -bound <= value < bound:
                self.fail(value, go, path, owner, literal=t in (int, float))
        elif go == "bool":
            if t is not bool:
                self.fail(value, go, path, owner)
        elif go == "float64":
            if t not in (int, float):
                self.fail(value, go, path, owner)
        elif go == "resource.Quantity":
            # Quantity.UnmarshalJSON parses whatever JSON it is given: true or [1] fail as
            # "quantities must match ...", not as a type error.
            text = value if t in (str, int, float) else json.dumps(value, separators=(",", ":"))
            try:
                # A typed decode keeps the number, and Quantity.MarshalJSON writes it back in
                # canonical form: "0.5" is stored as "500m" and 1024Mi as "1Gi", as
                # `kubectl get -o yaml` shows on a real cluster.
                return canonical_quantity(text)
            except ParseError as err:
                # The JSON unmarshaller says only why; MustParse's "cannot parse 'x': " prefix
                # is not part of the wire error.
                raise _DecodeError(str(err).split("': ", 1)[-1]) from None
        elif go in _TIME_LAYOUTS:
            if value is None:
                return None  # a zero Time: `null` on the wire
            if t is not str:
                self.fail(value, go, path, owner)
            return _decode_time(value, go)
        elif go == "intstr.IntOrString":
            if t not in (str, int) or (t is int and not -(2**31) <= value < 2**31):
                self.fail(value, go, path, owner, literal=t is int)
        elif go == "[]uint8":
            if t is not str:
                self.fail(value, go, path, owner)
            try:
                base64.b64decode(value, validate=True)
            except binascii.Error:
                at = next((i for i, c in enumerate(value) if not (c.isalnum() or c in "+/=")),
                          len(value))
                raise _DecodeError(f"illegal base64 data at input byte {at}") from None
            self.size += len(value)
        return value

    def any(self, value: Any, depth: int) -> Any:
        """A copy of any JSON value (an interface{} field in Go)."""
        t = type(value)
        if t is str:
            self.size += len(value) + 2
            return value
        if t is int or t is bool or value is None:
            self.size += 8
            return value
        if t is float:
            if not math.isfinite(value):
                raise _DecodeError(f"json: unsupported value: {_go_float(value)}")
            self.size += 8
            return value
        if depth > MAX_DEPTH:
            raise _DecodeError("exceeded max depth")
        if t is list:
            return [self.any(item, depth + 1) for item in value]
        if t is dict:
            out = {}
            for key, item in value.items():
                if type(key) is not str:
                    raise _DecodeError(f"json: unsupported type: map key {key!r}")
                self.size += len(key) + 4
                out[key] = self.any(item, depth + 1)
            return out
        raise _DecodeError(f"json: unsupported type: {t.__name__}")

    @staticmethod
    def fail(value: Any, go: str, path: str, owner: str, literal: bool = False) -> NoReturn:
        if type(value) is float and not math.isfinite(value):
            raise _DecodeError(f"json: unsupported value: {_go_float(value)}")
        kind = "number " + json.dumps(value) if literal else _JSON_TYPES.get(type(value), "value")
        raise _DecodeError(f"json: cannot unmarshal {kind} into Go struct field {owner}.{path} "
                           f"of type {go}")


def _go_float(value: float) -> str:
    """A float that JSON cannot carry, as Go prints it (strconv.FormatFloat): NaN, +Inf, -Inf."""
    return "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"
