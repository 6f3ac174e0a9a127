"""Requests and responses, shaped like etcd's api/etcdserverpb/rpc.proto.

Store.range/put/delete_range take keyword arguments; inside a txn the same requests are spelled
as RangeRequest/PutRequest/DeleteRequest values. A Compare is one guard of a txn, as built by
clientv3.Compare(clientv3.ModRevision(key), "=", 5); here: Compare.mod_revision(key, "=", 5).

`latency` on a write response is the virtual time the writer waited for the disk (see
kubelab/store/disk.py); the API server adds it to the request's duration.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from kubelab.store.errors import InvalidArgumentError
from kubelab.store.kv import KeyValue

__all__ = [
    "Compare",
    "CompareOp",
    "CompareTarget",
    "DeleteRequest",
    "DeleteResponse",
    "Op",
    "PutRequest",
    "PutResponse",
    "RangeRequest",
    "RangeResponse",
    "Response",
    "TxnResponse",
    "check_value",
    "in_range",
    "key_range",
    "prefix_end",
]

CompareTarget = Literal["mod", "create", "version", "value"]
CompareOp = Literal["=", "!=", "<", ">"]
_TARGETS = ("mod", "create", "version", "value")
_OPS = ("=", "!=", "<", ">")
_MAX_CHAR = 0x10FFFF


def check_value(value: object) -> bytes:
    """Values are bytes: immutable, so nobody can change stored state through an alias."""
    if type(value) is not bytes:
        raise TypeError(
            f"value must be bytes (encode objects before storing them), got {type(value).__name__}"
        )
    return value


def prefix_end(prefix: str) -> str:
    """The range_end that selects every key starting with prefix (clientv3.GetPrefixRangeEnd).

    Bump the last character that can be bumped and cut after it; "\\0" (every key >= prefix)
    when there is none, as etcd does for a prefix made only of 0xff bytes.
    """
    for i in range(len(prefix) - 1, -1, -1):
        if ord(prefix[i]) < _MAX_CHAR:
            return prefix[:i] + chr(ord(prefix[i]) + 1)
    return "\0"


def key_range(key: str, range_end: str | None, prefix: bool) -> tuple[str, str | None]:
    """Resolve the ways of naming keys into (start, end).

    end is None for the single key `start`, "\\0" for every key >= start (etcd's convention),
    otherwise the exclusive end of [start, end).
    """
    if type(key) is not str:
        raise TypeError(f"key must be a str, got {type(key).__name__}")
    if prefix:
        if range_end is not None:
            raise InvalidArgumentError("give prefix=True or a range_end, not both")
        return key, prefix_end(key)
    if not range_end:
        if not key:
            raise InvalidArgumentError("etcdserver: key is not provided")
        return key, None
    if type(range_end) is not str:
        raise TypeError(f"range_end must be a str, got {type(range_end).__name__}")
    return key, range_end


def in_range(key: str, start: str, end: str | None) -> bool:
    """Is key selected by (start, end) as returned by key_range?"""
    if end is None:
        return key == start
    return start <= key and (end == "\0" or key < end)


class _CompareFields(NamedTuple):
    target: CompareTarget
    key: str
    op: CompareOp
    value: int | bytes


class Compare(_CompareFields):
    """One guard of a txn: `target` of `key` `op` `value`, e.g. mod of /a = 5.

    A missing key compares as revision 0 and version 0, and any value comparison on it fails
    (etcd server/etcdserver/txn/txn.go applyCompare). So `create_revision(key, "=", 0)` means
    "key does not exist" and `mod_revision(key, "=", rv)` means "nobody wrote key since rv".
    """

    __slots__ = ()

    def __new__(cls, target: CompareTarget, key: str, op: CompareOp, value: int | bytes) -> Compare:
        if target not in _TARGETS:
            raise InvalidArgumentError(f"compare target must be one of {_TARGETS}, got {target!r}")
        if op not in _OPS:
            raise InvalidArgumentError(f"compare op must be one of {_OPS}, got {op!r}")
        if not isinstance(key, str) or not key:
            raise InvalidArgumentError("etcdserver: key is not provided")
        if target == "value":
            check_value(value)
        elif type(value) is not int:
            raise TypeError(f"compare on {target} needs an int, got {type(value).__name__}")
        return tuple.__new__(cls, (target, key, op, value))

    @staticmethod
    def mod_revision(key: str, op: CompareOp, revision: int) -> Compare:
        return Compare("mod", key, op, revision)

    @staticmethod
    def create_revision(key: str, op: CompareOp, revision: int) -> Compare:
        return Compare("create", key, op, revision)

    @staticmethod
    def version(key: str, op: CompareOp, version: int) -> Compare:
        return Compare("version", key, op, version)

    @staticmethod
    def value_of(key: str, op: CompareOp, value: bytes) -> Compare:
        return Compare("value", key, op, value)


class RangeRequest(NamedTuple):
    """Read one key, a [key, range_end) interval, or every key under a prefix."""

    key: str
    range_end: str | None = None  # "\0" means every key >= key, as in etcd
    prefix: bool = False
    revision: int = 0             # 0: the current revision
    limit: int = 0                # 0: no limit
    count_only: bool = False
    keys_only: bool = False


class _PutFields(NamedTuple):
    key: str
    value: bytes
    prev_kv: bool = False
    lease: int = 0


class PutRequest(_PutFields):
    __slots__ = ()

    def __new__(cls, key: str, value: bytes, prev_kv: bool = False, lease: int = 0) -> PutRequest:
        check_value(value)
        return tuple.__new__(cls, (key, value, prev_kv, lease))


class DeleteRequest(NamedTuple):
    key: str
    range_end: str | None = None
    prefix: bool = False
    prev_kv: bool = False


Op = RangeRequest | PutRequest | DeleteRequest


class RangeResponse(NamedTuple):
    kvs: tuple[KeyValue, ...]  # sorted by key; values are b"" when keys_only
    # etcd's field name; it hides tuple.count, which nobody needs on a response.
    count: int  # type: ignore[assignment]  # keys in the range, ignoring limit
    more: bool                 # limit cut the answer short
    revision: int              # the store's revision when it answered


class PutResponse(NamedTuple):
    revision: int
    prev_kv: KeyValue | None = None  # only when asked for (prev_kv=True) and the key existed
    latency: float = 0.0


class DeleteResponse(NamedTuple):
    deleted: int
    prev_kvs: tuple[KeyValue, ...] = ()  # only when asked for
    revision: int = 0
    latency: float = 0.0


Response = RangeResponse | PutResponse | DeleteResponse


class TxnResponse(NamedTuple):
    succeeded: bool                   # did every compare hold (so `success` ran)?
    responses: tuple[Response, ...]   # one per op of the branch that ran
    revision: int
    latency: float = 0.0              # inner responses carry 0: the txn waited once
