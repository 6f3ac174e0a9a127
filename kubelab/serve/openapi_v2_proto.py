"""The protobuf form of /openapi/v2 (gnostic's openapiv2/OpenAPIv2.proto, as k8s.io/kube-openapi
handler.go serves it to client-go's OpenAPISchema and `kubectl explain --output
plaintext-openapiv2`).

A small writer of the wire format (varints and length-delimited fields), with the field numbers
of the messages the document uses: Document (swagger 1, info 2, paths 8, definitions 9), Info,
Paths/NamedPathItem/PathItem, Operation, Responses/Response, Definitions/NamedSchema and Schema
(_ref 1, format 2, description 4, required 19, additional_properties 21, type 22, items 23,
all_of 24, properties 25, vendor_extension 31, whose values are YAML in Any.yaml as gnostic
writes them). Departure: operations carry no parameters (ParametersItem is left out); kubectl
reads the definitions.
"""

from __future__ import annotations

from typing import Any

import yaml

from kubelab.api import Object

__all__ = ["encode_document"]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode())


def _named(field: int, name: str, value: bytes) -> bytes:
    return _bytes(field, _str(1, name) + _bytes(2, value))


def _vendor_extensions(field: int, obj: Object) -> bytes:
    """NamedAny{name, Any{yaml}} for each x- key."""
    return b"".join(_named(field, k, _str(2, yaml.safe_dump(v, default_flow_style=False)))
                    for k, v in obj.items() if k.startswith("x-"))


def encode_schema(schema: Object) -> bytes:
    out = b""
    if isinstance(schema.get("$ref"), str):
        out += _str(1, schema["$ref"])
    if isinstance(schema.get("format"), str):
        out += _str(2, schema["format"])
    if isinstance(schema.get("description"), str):
        out += _str(4, schema["description"])
    for name in schema.get("required") or []:
        out += _str(19, str(name))
    if isinstance(schema.get("additionalProperties"), dict):
        out += _bytes(21, _bytes(1, encode_schema(schema["additionalProperties"])))
    if isinstance(schema.get("type"), str):
        out += _bytes(22, _str(1, schema["type"]))
    if isinstance(schema.get("items"), dict):
        out += _bytes(23, _bytes(1, encode_schema(schema["items"])))
    for part in schema.get("allOf") or []:
        if isinstance(part, dict):
            out += _bytes(24, encode_schema(part))
    if isinstance(schema.get("properties"), dict):
        out += _bytes(25, b"".join(_named(1, k, encode_schema(v))
                                   for k, v in schema["properties"].items() if isinstance(v, dict)))
    return out + _vendor_extensions(31, schema)


def _operation(op: Object) -> bytes:
    out = _str(5, op.get("operationId", ""))
    out += b"".join(_str(6, p) for p in op.get("produces") or [])
    out += b"".join(_str(7, c) for c in op.get("consumes") or [])
    responses = b""
    for code, response in (op.get("responses") or {}).items():
        body = _str(1, response.get("description", ""))
        if isinstance(response.get("schema"), dict):
            body += _bytes(2, _bytes(1, encode_schema(response["schema"])))
        responses += _named(1, code, _bytes(1, body))
    out += _bytes(9, responses)
    out += b"".join(_str(10, s) for s in op.get("schemes") or [])
    return out + _vendor_extensions(13, op)


_VERBS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def encode_document(doc: Object) -> bytes:
    """The swagger 2.0 document (openapi.swagger_document) as an openapi_v2.Document."""
    info: dict[str, Any] = doc.get("info") or {}
    out = _str(1, doc["swagger"])
    out += _bytes(2, _str(1, info.get("title", "")) + _str(2, info.get("version", "")))
    paths = b"".join(
        _named(2, path, b"".join(_bytes(_VERBS[verb], _operation(op))
                                 for verb, op in item.items() if verb in _VERBS))
        for path, item in doc["paths"].items())
    out += _bytes(8, paths)
    out += _bytes(9, b"".join(_named(1, name, encode_schema(schema))
                              for name, schema in doc["definitions"].items()))
    return out
