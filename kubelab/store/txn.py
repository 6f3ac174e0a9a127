"""What a txn is checked against before it runs, and how its compares are judged.

etcd checks a txn completely before applying any of it (api/v3rpc/key.go checkTxnRequest and
checkIntervals; etcdserver/v3_server.go for the size limit), so a bad txn changes nothing.
Compares follow server/etcdserver/txn/txn.go applyCompare/compareKV.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from kubelab.store.errors import InvalidArgumentError, RequestTooLargeError
from kubelab.store.kv import KeyValue
from kubelab.store.rpc import (
    Compare,
    DeleteRequest,
    Op,
    PutRequest,
    RangeRequest,
    in_range,
    key_range,
)

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "DEFAULT_MAX_TXN_OPS", "check_size", "check_txn",
           "compare_holds"]

# etcd server/embed/config.go: DefaultMaxRequestBytes = 1.5 MiB, DefaultMaxTxnOps = 128.
DEFAULT_MAX_REQUEST_BYTES = 1_572_864
DEFAULT_MAX_TXN_OPS = 128

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
}


def compare_holds(kv: KeyValue | None, compare: Compare) -> bool:
    """Does compare hold for kv, the key's live version (None when it does not exist)?

    A missing key has revisions and version 0, and no value: every value compare on it fails.
    """
    actual: int | bytes
    if compare.target == "value":
        if kv is None:
            return False
        actual = kv.value
    elif kv is None:
        actual = 0
    elif compare.target == "mod":
        actual = kv.mod_revision
    elif compare.target == "create":
        actual = kv.create_revision
    else:
        actual = kv.version
    return bool(_COMPARE[compare.op](actual, compare.value))


def check_size(size: int, limit: int) -> None:
    if size > limit:
        raise RequestTooLargeError(size, limit)


def _op_size(op: Op | Compare) -> int:
    """Roughly the encoded size of a request: its key, range end and value bytes.

    etcd measures the whole marshalled raft request; keys and values dominate it.
    """
    if isinstance(op, Compare):
        extra = len(op.value) if isinstance(op.value, bytes) else 8
        return len(op.key.encode()) + extra
    size = len(op.key.encode())
    if isinstance(op, PutRequest):
        return size + len(op.value)
    return size + len((op.range_end or "").encode())


def _check_ops(ops: Sequence[Op]) -> None:
    """Type-check ops and refuse a put that another op of the same branch also writes.

    etcd refuses such a txn ("duplicate key given in txn request") because the outcome would
    depend on op order; it also means a key changes at most once per revision.
    """
    puts: set[str] = set()
    deletes: list[tuple[str, str | None]] = []
    for op in ops:
        if isinstance(op, RangeRequest | DeleteRequest):
            span = key_range(op.key, op.range_end, op.prefix)
            if isinstance(op, DeleteRequest):
                deletes.append(span)
            elif op.revision < 0 or op.limit < 0:
                raise InvalidArgumentError("revision and limit must be >= 0")
        elif isinstance(op, PutRequest):
            key_range(op.key, None, False)
            if op.key in puts:
                raise InvalidArgumentError("etcdserver: duplicate key given in txn request")
            puts.add(op.key)
        else:
            raise TypeError("txn ops must be RangeRequest, PutRequest or DeleteRequest, "
                            f"got {type(op).__name__}")
    for key in puts:
        if any(in_range(key, start, end) for start, end in deletes):
            raise InvalidArgumentError("etcdserver: duplicate key given in txn request")


def check_txn(compares: Sequence[Compare], success: Sequence[Op], failure: Sequence[Op],
              *, max_ops: int, max_bytes: int) -> None:
    """Refuse a malformed txn before any of it runs."""
    if len(compares) == 1 and len(success) == 1 and not failure:
        # The API server's every write: one compare, one put. Same checks, less machinery.
        compare, op = compares[0], success[0]
        if type(op) is PutRequest and type(compare) is Compare and type(op.key) is str and op.key:
            check_size(_op_size(compare) + len(op.key.encode()) + len(op.value), max_bytes)
            return
    if max(len(compares), len(success), len(failure)) > max_ops:
        raise InvalidArgumentError("etcdserver: too many operations in txn request")
    for compare in compares:
        if not isinstance(compare, Compare):
            raise TypeError(f"txn compares must be Compare, got {type(compare).__name__}")
    _check_ops(success)
    _check_ops(failure)
    check_size(sum(_op_size(x) for x in (*compares, *success, *failure)), max_bytes)
