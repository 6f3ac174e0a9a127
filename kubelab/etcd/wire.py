"""kubelab's requests and responses in the JSON of etcd's gRPC gateway, and back.

The gateway (etcd server/etcdserver/api/v3rpc, served at /v3/ since etcd 3.4) speaks
api/etcdserverpb/rpc.proto as JSON: keys and values are base64, int64 fields are strings,
enums are their names, and fields at their zero value are left out (a tombstone's kv carries
only key and mod_revision). kubelab's NamedTuples (kubelab/store/rpc.py, kv.py) have the same
fields, so this module is only spelling.
"""

from __future__ import annotations

import base64
from typing import Any

from kubelab.store.kv import DELETE, PUT, Event, KeyValue
from kubelab.store.rpc import (
    Compare,
    DeleteRequest,
    DeleteResponse,
    Op,
    PutRequest,
    PutResponse,
    RangeRequest,
    RangeResponse,
    Response,
    key_range,
)

__all__ = ["b64", "compare", "event", "key_value", "op", "range_body", "response", "unb64"]

_TARGET = {"mod": ("MOD", "mod_revision"), "create": ("CREATE", "create_revision"),
           "version": ("VERSION", "version"), "value": ("VALUE", "value")}
_RESULT = {"=": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS", ">": "GREATER"}


def b64(data: str | bytes) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode("ascii")


def unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def key_value(kv: dict[str, Any]) -> KeyValue:
    return KeyValue(unb64(kv.get("key")).decode(), unb64(kv.get("value")),
                    int(kv.get("create_revision", 0)), int(kv.get("mod_revision", 0)),
                    int(kv.get("version", 0)), int(kv.get("lease", 0)))


def event(ev: dict[str, Any]) -> Event:
    prev = ev.get("prev_kv")
    return Event(DELETE if ev.get("type") == "DELETE" else PUT, key_value(ev["kv"]),
                 key_value(prev) if prev else None)


def _interval(key: str, range_end: str | None, prefix: bool) -> dict[str, Any]:
    start, end = key_range(key, range_end, prefix)  # the embedded store's checks and errors
    body: dict[str, Any] = {"key": b64(start)}
    if end is not None:
        body["range_end"] = b64(end)
    return body


def range_body(key: str, range_end: str | None = None, prefix: bool = False, revision: int = 0,
               limit: int = 0, count_only: bool = False, keys_only: bool = False
               ) -> dict[str, Any]:
    body = _interval(key, range_end, prefix)
    for name, value in (("revision", revision), ("limit", limit)):
        if value:
            body[name] = str(value)
    if count_only:
        body["count_only"] = True
    if keys_only:
        body["keys_only"] = True
    return body


def put_body(key: str, value: bytes, prev_kv: bool = False, lease: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = {"key": b64(key), "value": b64(value)}
    if prev_kv:
        body["prev_kv"] = True
    if lease:
        body["lease"] = str(lease)
    return body


def delete_body(key: str, range_end: str | None = None, prefix: bool = False,
                prev_kv: bool = False) -> dict[str, Any]:
    body = _interval(key, range_end, prefix)
    if prev_kv:
        body["prev_kv"] = True
    return body


def compare(c: Compare) -> dict[str, Any]:
    target, field = _TARGET[c.target]
    value = b64(c.value) if isinstance(c.value, bytes) else str(c.value)
    return {"target": target, "result": _RESULT[c.op], "key": b64(c.key), field: value}


def op(o: Op) -> dict[str, Any]:
    if isinstance(o, RangeRequest):
        return {"request_range": range_body(*o)}
    if isinstance(o, PutRequest):
        return {"request_put": put_body(*o)}
    return {"request_delete_range": delete_body(*o)}


def header_revision(body: dict[str, Any]) -> int:
    return int((body.get("header") or {}).get("revision", 0))


def range_response(body: dict[str, Any], revision: int) -> RangeResponse:
    kvs = tuple(key_value(kv) for kv in body.get("kvs") or ())
    return RangeResponse(kvs, int(body.get("count", 0)), bool(body.get("more", False)), revision)


def response(o: Op, body: dict[str, Any], revision: int) -> Response:
    """One op's response inside a txn: the gateway names it response_range and so on."""
    if isinstance(o, RangeRequest):
        return range_response(body.get("response_range") or {}, revision)
    if isinstance(o, PutRequest):
        put = body.get("response_put") or {}
        prev = put.get("prev_kv")
        return PutResponse(revision, key_value(prev) if prev else None)
    if not isinstance(o, DeleteRequest):
        raise TypeError(f"not an op: {o!r}")
    deleted = body.get("response_delete_range") or {}
    return DeleteResponse(int(deleted.get("deleted", 0)),
                          tuple(key_value(kv) for kv in deleted.get("prev_kvs") or ()), revision)
