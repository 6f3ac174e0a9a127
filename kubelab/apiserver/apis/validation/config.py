"""core/v1 Secrets, and what `immutable` means for a ConfigMap or a Secret.

pkg/apis/core/validation/validation.go: ValidateSecret (config keys, at most 1 MiB of data, the
keys each well-known type needs), ValidateSecretUpdate (the type never changes) and
ValidateConfigMapUpdate (an immutable object keeps its data and stays immutable). stringData is
already in data here: the decoder converts it (kubelab/apiserver/endpoints/decode.py).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_forbidden, field_invalid, field_required, field_too_long
from kubelab.apiserver.apis.validation.core import config_key_errors, validate_config_map

__all__ = ["MAX_SECRET_SIZE", "validate_config_map_update", "validate_secret",
           "validate_secret_update"]

MAX_SECRET_SIZE = 1024 * 1024  # core.MaxSecretSize
_IMMUTABLE = "field is immutable when `immutable` is set"
# The keys a typed Secret must carry (pkg/apis/core/types.go). Upstream writes the paths of
# basic-auth and ssh-auth as field.NewPath("data[%s]").Key(...): the odd path is theirs.
_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": ("data", (".dockercfg",)),
    "kubernetes.io/dockerconfigjson": ("data", (".dockerconfigjson",)),
    "kubernetes.io/tls": ("data", ("tls.crt", "tls.key")),
}
_JSON_KEYS = {"kubernetes.io/dockercfg": ".dockercfg",
              "kubernetes.io/dockerconfigjson": ".dockerconfigjson"}


def validate_secret(secret: Object) -> list[FieldError]:
    data: dict[str, Any] = secret.get("data") or {}
    errs = [field_invalid(f"data[{key}]", key, msg) for key in data for msg in config_key_errors(key)]
    if sum(len(base64.b64decode(v or "")) for v in data.values()) > MAX_SECRET_SIZE:
        errs.append(field_too_long("data", MAX_SECRET_SIZE))
    kind = secret.get("type") or ""
    if kind == "kubernetes.io/service-account-token":
        annotations = (secret.get("metadata") or {}).get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            errs.append(field_required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif kind in _REQUIRED_KEYS:
        missing = [key for key in _REQUIRED_KEYS[kind][1] if key not in data]
        errs += [field_required(f"data[{key}]") for key in missing]
        if kind in _JSON_KEYS and not missing:
            errs += _json_errors(data[_JSON_KEYS[kind]], f"data[{_JSON_KEYS[kind]}]")
    elif kind == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
        errs += [field_required("data[%s][username]"), field_required("data[%s][password]")]
    elif kind == "kubernetes.io/ssh-auth" and not data.get("ssh-privatekey"):
        errs.append(field_required("data[%s][ssh-privatekey]"))
    return errs


def _json_errors(value: str, path: str) -> list[FieldError]:
    try:
        parsed = json.loads(base64.b64decode(value or "").decode())
    except ValueError as err:  # UnicodeDecodeError is one
        return [field_invalid(path, "<secret contents redacted>", _go_json_error(err))]
    if not isinstance(parsed, dict):
        return [field_invalid(path, "<secret contents redacted>",
                              f"json: cannot unmarshal {type(parsed).__name__} into Go value of "
                              "type map[string]interface {}")]
    return []


def _go_json_error(err: ValueError) -> str:
    """encoding/json's words for Python's JSONDecodeError (the common cases)."""
    if not isinstance(err, json.JSONDecodeError):
        return str(err)  # not UTF-8 text
    if err.pos >= len(err.doc):
        return "unexpected end of JSON input"
    char = err.doc[err.pos]
    where = {"Expecting value": "looking for beginning of value",
             "Extra data": "after top-level value",
             "Expecting property name enclosed in double quotes":
                 "looking for beginning of object key string"}.get(err.msg, f"({err.msg})")
    return f"invalid character {char!r} {where}"


def _immutable_errors(obj: Object, old: Object, fields: tuple[str, ...]) -> list[FieldError]:
    if not old.get("immutable"):
        return []
    errs = [] if obj.get("immutable") else [field_forbidden("immutable", _IMMUTABLE)]
    return errs + [field_forbidden(f, _IMMUTABLE) for f in fields
                   if (obj.get(f) or {}) != (old.get(f) or {})]


def validate_secret_update(secret: Object, old: Object) -> list[FieldError]:
    errs = []
    if (secret.get("type") or "") != (old.get("type") or ""):
        errs.append(field_invalid("type", secret.get("type") or "", "field is immutable"))
    return errs + _immutable_errors(secret, old, ("data",)) + validate_secret(secret)


def validate_config_map_update(cm: Object, old: Object) -> list[FieldError]:
    return _immutable_errors(cm, old, ("data", "binaryData")) + validate_config_map(cm)
