"""Transactions: compares, atomicity, checks, and optimistic concurrency under racing writers."""

from __future__ import annotations

import random

import pytest

from kubelab.sim import Clock
from kubelab.store import (
    CompactedError,
    Compare,
    DeleteRequest,
    DeleteResponse,
    FutureRevisionError,
    InvalidArgumentError,
    PutRequest,
    PutResponse,
    RangeRequest,
    RangeResponse,
    RequestTooLargeError,
    Store,
)


@pytest.fixture
def store() -> Store:
    s = Store(Clock())
    s.put("/a", b"m")     # revision 2: create 2, mod 2, version 1
    s.put("/a", b"m")     # revision 3: create 2, mod 3, version 2
    return s


def holds(store: Store, compare: Compare) -> bool:
    return store.txn([compare]).succeeded


@pytest.mark.parametrize(("op", "expect"), [
    ("=", (False, True, False)), ("!=", (True, False, True)),
    ("<", (False, False, True)), (">", (True, False, False)),
])
def test_compare_ops_on_each_target(store: Store, op: str, expect: tuple[bool, ...]) -> None:
    # the key's numbers are create 2, mod 3, version 2, value b"m"; compare each against
    # (smaller, equal, larger)
    cases = {
        "mod": (2, 3, 4), "create": (1, 2, 3), "version": (1, 2, 3),
        "value": (b"a", b"m", b"z"),
    }
    for target, operands in cases.items():
        got = tuple(holds(store, Compare(target, "/a", op, v))  # type: ignore[arg-type]
                    for v in operands)
        assert got == expect, (target, op)


def test_missing_key_compares_as_zero(store: Store) -> None:
    assert holds(store, Compare.create_revision("/nope", "=", 0))
    assert holds(store, Compare.mod_revision("/nope", "<", 1))
    assert holds(store, Compare.version("/nope", "=", 0))
    assert not holds(store, Compare.value_of("/nope", "=", b""))   # value compares fail
    assert not holds(store, Compare.value_of("/nope", "!=", b"x"))
    store.delete_range("/a")
    assert holds(store, Compare.create_revision("/a", "=", 0))     # deleted counts as missing


def test_all_compares_must_hold(store: Store) -> None:
    assert store.txn([Compare.version("/a", "=", 2), Compare.mod_revision("/a", "=", 3)]).succeeded
    assert not store.txn([Compare.version("/a", "=", 2), Compare.mod_revision("/a", "=", 2)],
                         [PutRequest("/x", b"1")]).succeeded
    assert store.range("/x").kvs == ()
    assert store.txn([]).succeeded  # no compares: success runs


def test_branches_run_at_one_revision(store: Store) -> None:
    resp = store.txn(
        [Compare.mod_revision("/a", "=", 3)],
        [PutRequest("/b", b"1"), PutRequest("/c", b"1", prev_kv=True), DeleteRequest("/a"),
         RangeRequest("/", prefix=True)],
        [PutRequest("/never", b"1")],
    )
    assert resp.succeeded and resp.revision == 4 and store.revision == 4
    put_b, put_c, delete, read = resp.responses
    assert isinstance(put_b, PutResponse) and put_b.revision == 4
    assert isinstance(put_c, PutResponse) and put_c.prev_kv is None  # asked, but it was new
    assert isinstance(delete, DeleteResponse) and delete.deleted == 1
    assert isinstance(read, RangeResponse)
    assert [kv.key for kv in read.kvs] == ["/b", "/c"]  # reads see the txn's own writes
    assert {kv.mod_revision for kv in read.kvs} == {4}
    assert store.range("/never").kvs == ()


def test_failure_branch(store: Store) -> None:
    resp = store.txn([Compare.mod_revision("/a", "=", 2)],
                     [PutRequest("/a", b"lost")], [RangeRequest("/a")])
    assert not resp.succeeded
    (read,) = resp.responses
    assert isinstance(read, RangeResponse) and read.kvs[0].mod_revision == 3


def test_read_only_txn_keeps_revision(store: Store) -> None:
    resp = store.txn([], [RangeRequest("/a"), RangeRequest("/a", revision=2)])
    assert resp.revision == 3 and store.revision == 3
    # a failed guard with an empty failure branch writes nothing either
    assert store.txn([Compare.version("/a", "=", 9)], [PutRequest("/a", b"x")]).revision == 3
    # a delete that matches nothing is no change
    assert store.txn([], [DeleteRequest("/zzz")]).revision == 3


def test_bad_txn_changes_nothing(store: Store) -> None:
    before = store.range("/", prefix=True)
    bad_txns = [
        ([PutRequest("/b", b"1"), PutRequest("/b", b"2")], InvalidArgumentError,
         "duplicate key given in txn request"),
        ([DeleteRequest("/", prefix=True), PutRequest("/b", b"1")], InvalidArgumentError,
         "duplicate key"),
        ([PutRequest("/b", b"1"), RangeRequest("/a", revision=99)], FutureRevisionError,
         "future revision"),
        ([PutRequest("/b", b"1")] * 129, InvalidArgumentError, "too many operations"),
        ([PutRequest("/b", b"1"), PutRequest("/c", b"x" * 1572864)], RequestTooLargeError,
         "request is too large"),
    ]
    for ops, error, message in bad_txns:
        with pytest.raises(error, match=message):
            store.txn([], ops)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="txn ops must be"):
        store.txn([], ["put /b"])  # type: ignore[list-item]
    store.compact(3)
    with pytest.raises(CompactedError):
        store.txn([], [PutRequest("/b", b"1"), RangeRequest("/a", revision=2)])
    assert store.range("/", prefix=True) == before


def test_same_key_in_both_branches_is_fine(store: Store) -> None:
    resp = store.txn([Compare.version("/a", "=", 2)],
                     [PutRequest("/a", b"new")], [PutRequest("/a", b"other")])
    assert resp.succeeded and store.range("/a").kvs[0].value == b"new"


def test_compare_checks_its_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="compare op"):
        Compare("mod", "/a", "==", 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="compare target"):
        Compare("lease", "/a", "=", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs an int"):
        Compare.mod_revision("/a", "=", b"1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="value must be bytes"):
        Compare.value_of("/a", "=", "text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="value must be bytes"):
        PutRequest("/a", "text")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_racing_cas_writers_lose_no_update(seed: int) -> None:
    """N writers each do read -> compute -> txn(mod_revision guard) -> retry on conflict.

    A seeded scheduler interleaves their steps at random, so reads go stale between a writer's
    read and its txn; the guard must turn every such race into a retry, never a lost update.
    """
    store = Store(Clock())
    store.put("/counter", b"0")
    rng = random.Random(seed)
    writers, increments = 6, 25
    todo = dict.fromkeys(range(writers), increments)
    seen: dict[int, tuple[int, int]] = {}  # writer -> (value read, mod_revision read)
    conflicts = 0
    while any(todo.values()):
        w = rng.choice([w for w, left in todo.items() if left])
        if w not in seen:  # step 1: read
            kv = store.range("/counter").kvs[0]
            seen[w] = (int(kv.value), kv.mod_revision)
            continue
        value, rev = seen.pop(w)  # step 2: compute and write, guarded by what was read
        resp = store.txn([Compare.mod_revision("/counter", "=", rev)],
                         [PutRequest("/counter", str(value + 1).encode())])
        if resp.succeeded:
            todo[w] -= 1
        else:
            conflicts += 1  # someone wrote in between: read again
    assert int(store.range("/counter").kvs[0].value) == writers * increments
    assert store.range("/counter").kvs[0].version == writers * increments + 1
    assert conflicts > 0  # the interleaving really raced
