"""Reading (and writing) the protobuf bodies that kubectl's typed clients send.

kubectl talks JSON to most endpoints, but its typed clients (`kubectl create` of every kind,
`run`, `expose`, `autoscale`, `create token`, `drain`'s evictions, `auth can-i`'s access
reviews, `debug node/` and `debug --copy-to`'s pods) send `Content-Type:
application/vnd.kubernetes.protobuf`. The body is the Kubernetes protobuf envelope
(k8s.io/apimachinery pkg/runtime/serializer/protobuf/protobuf.go): the magic bytes "k8s\\0",
then a runtime.Unknown message (pkg/runtime/generated.proto) whose typeMeta names the kind and
whose raw field holds the object, encoded by the field numbers of k8s.io/api's generated.proto.

kubelab keeps the JSON form everywhere, so `decode_protobuf` turns such a body back into the
JSON object a JSON client would have sent, and `encode_protobuf` writes a JSON object the way
kubectl would (the tests' round trips). Both walk one description per message, transcribed
from upstream (one module per API group beside this one: meta.py, core.py, apps.py, ...):

    message name -> {field number: (JSON name, type, how)}

Types: str, int, bool, bytes (base64 in JSON), quantity (resource.Quantity), time
(metav1.Time), intstr (intstr.IntOrString), raw (FieldsV1: JSON in bytes), or a message name.
How: "" one value, "ptr" a Go pointer (zero and false are kept: `replicas: 0`, `emptyDir:
{}`), "rep" repeated, "map" map<string, type>, "inline" a message whose fields the JSON form
puts in the parent's (a Volume's VolumeSource, a Probe's ProbeHandler).

Go's protobuf encoder writes every non-pointer field, empty or not, where its JSON encoder
leaves empty ones out (omitempty): decoding drops empty strings, lists, maps and messages, and
zero numbers and false, unless the Go field is a pointer. A field no table knows is refused
with 415, naming it, rather than dropped, unless it holds Go's zero value. A JSON client
(`kubectl apply -f`, the Python client, kopf) never comes here.
"""

from __future__ import annotations

import base64
import datetime
import json
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.apiserver.endpoints.protobuf import (
    apps,
    authentication,
    authorization,
    autoscaling,
    batch,
    certificates,
    core,
    meta,
    networking,
    policy,
    rbac,
    scheduling,
)

__all__ = ["KINDS", "MESSAGES", "PROTOBUF", "decode_protobuf", "encode_protobuf"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"
_F = dict[int, tuple[str, str, str]]

# apimachinery pkg/runtime/generated.proto: the envelope (runtime.TypeMeta numbers its fields
# apiVersion 1, kind 2; metav1.TypeMeta, which the objects inline in JSON, is never sent).
_ENVELOPE: dict[str, _F] = {
    "Unknown": {1: ("typeMeta", "runtime.TypeMeta", ""), 2: ("raw", "bytes", ""),
                3: ("contentEncoding", "str", ""), 4: ("contentType", "str", "")},
    "runtime.TypeMeta": {1: ("apiVersion", "str", ""), 2: ("kind", "str", "")},
}
MESSAGES: dict[str, _F] = {**_ENVELOPE}
for _group in (meta, core, apps, batch, networking, policy, rbac, autoscaling, scheduling,
               authorization, authentication, certificates):
    MESSAGES.update(_group.MESSAGES)

# The kinds a body may carry: those kubectl's typed commands send (its create, run, expose,
# autoscale, create token, drain, auth and debug commands).
KINDS = frozenset({
    "Pod", "Service", "ConfigMap", "Secret", "Namespace", "ServiceAccount", "ResourceQuota",
    "Deployment", "Job", "CronJob", "Ingress", "PodDisruptionBudget", "Eviction",
    "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "PriorityClass",
    "HorizontalPodAutoscaler", "Scale", "TokenRequest", "SelfSubjectReview",
    "SelfSubjectAccessReview", "SelfSubjectRulesReview",
    "CertificateSigningRequest",  # kubectl certificate approve|deny (UpdateApproval)
})

# The special messages of apimachinery, each with its own JSON form.
_QUANTITY: _F = {1: ("string", "str", "")}
_TIME: _F = {1: ("seconds", "int", ""), 2: ("nanos", "int", "")}
_INTSTR: _F = {1: ("type", "int", ""), 2: ("intVal", "int", ""), 3: ("strVal", "str", "")}
_RAW: _F = {1: ("raw", "bytes", "")}
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _unsupported(what: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    f"kubelab cannot read {what} in a protobuf body; send the object as JSON "
                    f"(for example with kubectl apply -f)")


# --- decoding ---

def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ApiError(400, "BadRequest", "proto: truncated or malformed varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """The (field number, value) pairs of one message: varints as ints, the rest as bytes."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            out.append((number, value - (1 << 64) if value >= 1 << 63 else value))
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise ApiError(400, "BadRequest", "proto: unexpected end of message")
            out.append((number, buf[pos:pos + length]))
            pos += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            out.append((number, buf[pos:pos + size]))
            pos += size
        else:
            raise ApiError(400, "BadRequest", f"proto: illegal wireType {wire}")
    return out


def _scalar(kind: str, raw: int | bytes) -> Any:
    if kind in ("int", "bool"):
        if not isinstance(raw, int):
            raise ApiError(400, "BadRequest", "proto: wrong wireType for an integer field")
        return bool(raw) if kind == "bool" else raw
    if not isinstance(raw, bytes):
        raise ApiError(400, "BadRequest", "proto: wrong wireType for a length-delimited field")
    if kind == "str":
        return raw.decode("utf-8", "replace")
    if kind == "bytes":
        return base64.b64encode(raw).decode()
    if kind == "quantity":
        return _message(raw, "Quantity", _QUANTITY).get("string", "0")
    if kind == "time":
        t = _message(raw, "Time", _TIME, keep_zero=True)
        if not t.get("seconds"):
            return None
        return datetime.datetime.fromtimestamp(t["seconds"], datetime.UTC).strftime(_TIME_FORMAT)
    if kind == "intstr":
        v = _message(raw, "IntOrString", _INTSTR, keep_zero=True)
        return v.get("strVal", "") if v.get("type") == 1 else v.get("intVal", 0)
    if kind == "raw":
        data = dict(_fields(raw)).get(1, b"")
        try:
            return json.loads(data) if isinstance(data, bytes) and data else None
        except ValueError:
            raise ApiError(400, "BadRequest", "proto: FieldsV1 does not hold JSON") from None
    return _message(raw, kind, MESSAGES[kind])


def _is_zero(raw: int | bytes) -> bool:
    """0, empty, or a message all of whose fields are zero (an empty `status: {}`)."""
    if isinstance(raw, int) or not raw:
        return not raw
    try:
        return all(_is_zero(value) for _, value in _fields(raw))
    except ApiError:  # not a message: a non-empty string or bytes
        return False


def _empty(value: Any) -> bool:
    return value is None or value in ("", 0, False) or value == [] or value == {}


def _message(buf: bytes, name: str, fields: _F, keep_zero: bool = False) -> Object:
    obj: Object = {}
    for number, raw in _fields(buf):
        if number not in fields:
            if _is_zero(raw):  # a Go zero value: what JSON would have left out
                continue
            raise _unsupported(f"field {number} of {name}")
        key, kind, how = fields[number]
        if how == "map":
            if not isinstance(raw, bytes):
                raise ApiError(400, "BadRequest", "proto: wrong wireType for a map entry")
            entry = dict(_fields(raw))
            k = _scalar("str", entry.get(1, b""))
            obj.setdefault(key, {})[k] = _scalar(kind, entry.get(2, b"" if kind != "int" else 0))
        elif how == "rep":
            obj.setdefault(key, []).append(_scalar(kind, raw))
        elif how == "inline":
            obj.update(_scalar(kind, raw))
        else:
            value = _scalar(kind, raw)
            if value is not None and (keep_zero or how == "ptr" or not _empty(value)):
                obj[key] = value
    return obj


def decode_protobuf(body: bytes) -> Object:
    """A protobuf request body as the JSON object it stands for."""
    if not body.startswith(_MAGIC):
        raise ApiError(400, "BadRequest", "provided data does not appear to be a protobuf message, "
                                          "expected prefix [107 56 115 0]")
    unknown = _message(body[len(_MAGIC):], "Unknown", MESSAGES["Unknown"])
    type_meta = unknown.get("typeMeta") or {}
    kind = type_meta.get("kind", "")
    if kind not in KINDS:
        raise _unsupported(f"the kind {kind or '(none)'}")
    raw = base64.b64decode(unknown.get("raw", ""))
    obj = {"apiVersion": type_meta.get("apiVersion", ""), "kind": kind}
    obj.update(_message(raw, kind, MESSAGES[kind]))
    return obj


# --- encoding ---

def _key(number: int, wire: int) -> bytes:
    return _uvarint(number << 3 | wire)


def _uvarint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s as their two's complement, as Go writes them
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _delimited(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _uvarint(len(data)) + data


def _encode_value(number: int, kind: str, value: Any) -> bytes:
    if kind in ("int", "bool"):
        return _key(number, 0) + _uvarint(int(value))
    if kind == "str":
        return _delimited(number, str(value).encode())
    if kind == "bytes":
        return _delimited(number, base64.b64decode(value))
    if kind == "quantity":
        return _delimited(number, _delimited(1, str(value).encode()))
    if kind == "time":
        when = datetime.datetime.strptime(value, _TIME_FORMAT).replace(tzinfo=datetime.UTC)
        return _delimited(number, _key(1, 0) + _uvarint(int(when.timestamp())))
    if kind == "intstr":
        if isinstance(value, str):
            return _delimited(number, _key(1, 0) + _uvarint(1) + _delimited(3, value.encode()))
        return _delimited(number, _key(1, 0) + _uvarint(0) + _key(2, 0) + _uvarint(value))
    if kind == "raw":
        return _delimited(number, _delimited(1, json.dumps(value, separators=(",", ":")).encode()))
    return _delimited(number, _encode_message(value, MESSAGES[kind]))


def _inlined_keys(fields: _F) -> set[str]:
    keys: set[str] = set()
    for key, kind, how in fields.values():
        keys |= _inlined_keys(MESSAGES[kind]) if how == "inline" else {key}
    return keys


def _encode_message(obj: Object, fields: _F) -> bytes:
    out = bytearray()
    for number in sorted(fields):
        key, kind, how = fields[number]
        if how == "inline":
            part = {k: v for k, v in obj.items() if k in _inlined_keys(MESSAGES[kind])}
            out += _delimited(number, _encode_message(part, MESSAGES[kind]))
        elif key not in obj or obj[key] is None:
            continue
        elif how == "map":  # entries in key order, as Go's generated code sorts them
            for k in sorted(obj[key]):
                out += _delimited(number, _delimited(1, k.encode()) + _encode_value(2, kind, obj[key][k]))
        elif how == "rep":
            for item in obj[key]:
                out += _encode_value(number, kind, item)
        else:
            out += _encode_value(number, kind, obj[key])
    return bytes(out)


def encode_protobuf(obj: Object) -> bytes:
    """A JSON object as kubectl's typed client sends it: the envelope around its message."""
    kind = obj.get("kind", "")
    if kind not in KINDS:
        raise _unsupported(f"the kind {kind or '(none)'}")
    unknown = {"typeMeta": {"apiVersion": obj.get("apiVersion", ""), "kind": kind},
               "raw": base64.b64encode(_encode_message(obj, MESSAGES[kind])).decode()}
    return _MAGIC + _encode_message(unknown, MESSAGES["Unknown"])
