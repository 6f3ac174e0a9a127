"""Reading a request body that arrived as bytes: JSON, YAML or Kubernetes protobuf.

An HTTP front end (kubelab/serve) hands the API server the body it received, untouched
(kubelab.api.RawBody). The server reads it in its decode stage, after authentication and
authorization, with the serializer its Content-Type names, and the object then takes the same
path as one a component sent: strict decoding against the kind's schema, admission,
validation, storage (k8s.io/apiserver pkg/endpoints/handlers: create.go and patch.go read
the body only after the filters have let the request through).
"""

from __future__ import annotations

from typing import Any

import orjson

from kubelab.api.errors import ApiError, ParseError
from kubelab.api.request import RawBody
from kubelab.api.yamlio import load_document
from kubelab.apiserver.endpoints.protobuf import PROTOBUF, decode_protobuf

__all__ = ["read_body"]


def _go_json_error(data: bytes, err: orjson.JSONDecodeError) -> str:
    """encoding/json's words for the first thing it cannot read."""
    if err.pos >= len(data.rstrip()):
        return "unexpected end of JSON input"
    char = data.decode("utf-8", "replace")[err.pos] if err.pos < len(data) else ""
    return f"invalid character {char!r} looking for beginning of value"


def read_body(raw: RawBody) -> Any:
    media = raw.content_type.split(";")[0].strip().lower()
    if media == PROTOBUF:
        return decode_protobuf(raw.data)
    if "yaml" in media:
        try:
            return load_document(raw.data.decode("utf-8", "replace"))
        except ParseError as err:
            raise ApiError(400, "BadRequest", str(err)) from None
    try:
        return orjson.loads(raw.data)
    except orjson.JSONDecodeError as err:
        if "recursion" in str(err):
            raise ApiError(400, "BadRequest", "couldn't get version/kind; json parse error: "
                           "exceeded max depth") from None
        raise ApiError(400, "BadRequest", "couldn't get version/kind; json parse error: "
                       + _go_json_error(raw.data, err)) from None
