"""Reading a request body that arrived as bytes: JSON, YAML or Kubernetes protobuf.

An HTTP front end (kubelab/serve) hands the API server the body it received, untouched
(kubelab.api.RawBody). The server reads it in its decode stage, after authentication and
authorization, with the serializer its Content-Type names, and the object then takes the same
path as one a component sent: strict decoding against the kind's schema, admission,
validation, storage (k8s.io/apiserver pkg/endpoints/handlers: create.go and patch.go read
the body only after the filters have let the request through).

JSON is read once, with Python's C decoder, noting every key an object repeats: the strict
decoder of a create or update refuses them (apimachinery's strict decoding error `duplicate
field "metadata.name"`, apiserver/server.py); other bodies (patches, DeleteOptions) keep the
last value, as encoding/json does.

Departure: upstream lists duplicate and unknown fields in one strict decoding error, in the
order it meets them; kubelab reports the duplicates alone, before the schema is checked.
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api.errors import ApiError, ParseError
from kubelab.api.request import RawBody
from kubelab.api.yamlio import load_document
from kubelab.apiserver.endpoints.protobuf import PROTOBUF, decode_protobuf

__all__ = ["read_body", "read_body_strict"]


class _Constant(ValueError):
    """NaN, Infinity or -Infinity: JSON has no such value."""


def _no_constant(name: str) -> Any:
    raise _Constant(name)


def _go_json_error(data: bytes, pos: int) -> str:
    """encoding/json's words for the first thing it cannot read."""
    if pos >= len(data.rstrip()):
        return "unexpected end of JSON input"
    char = data.decode("utf-8", "replace")[pos] if pos < len(data) else ""
    return f"invalid character {char!r} looking for beginning of value"


def read_body(raw: RawBody) -> Any:
    return read_body_strict(raw)[0]


def read_body_strict(raw: RawBody) -> tuple[Any, list[str]]:
    """The body, and the JSON path of every field an object repeats ("metadata.name",
    "spec.containers[0].name"), in document order; YAML and protobuf have none."""
    media = raw.content_type.split(";")[0].strip().lower()
    if media == PROTOBUF:
        return decode_protobuf(raw.data), []
    if "yaml" in media:
        try:
            return load_document(raw.data.decode("utf-8", "replace")), []
        except ParseError as err:
            raise ApiError(400, "BadRequest", str(err)) from None
    repeated: dict[int, list[str]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            repeated[id(obj)] = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
        return obj

    try:
        obj = json.loads(raw.data, object_pairs_hook=pairs_hook, parse_constant=_no_constant)
    except RecursionError:
        raise ApiError(400, "BadRequest", "couldn't get version/kind; json parse error: "
                       "exceeded max depth") from None
    except _Constant as err:
        pos = raw.data.find(str(err).encode())
        raise ApiError(400, "BadRequest", "couldn't get version/kind; json parse error: "
                       + _go_json_error(raw.data, max(pos, 0))) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        pos = err.pos if isinstance(err, json.JSONDecodeError) else err.start
        raise ApiError(400, "BadRequest", "couldn't get version/kind; json parse error: "
                       + _go_json_error(raw.data, pos)) from None
    return obj, _paths(obj, repeated) if repeated else []


def _paths(root: Any, repeated: dict[int, list[str]]) -> list[str]:
    """Where the repeated keys are, as sigs.k8s.io/json's field paths name them."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            found.extend(f"{path}.{k}" if path else k for k in repeated.get(id(value), ()))
            stack.extend((v, f"{path}.{k}" if path else k) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(value))))
    return found
