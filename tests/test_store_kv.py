"""The store's revisions, versions, range reads, compaction and request checks."""

from __future__ import annotations

import pytest

import kubelab.store
from kubelab.sim import Clock, Trace
from kubelab.store import (
    CompactedError,
    FutureRevisionError,
    InvalidArgumentError,
    KeyValue,
    RequestTooLargeError,
    Store,
    prefix_end,
)


@pytest.fixture
def store() -> Store:
    return Store(Clock())


def test_public_surface_is_curated() -> None:
    assert sorted(kubelab.store.__all__) == sorted(set(kubelab.store.__all__))
    for name in kubelab.store.__all__:
        assert hasattr(kubelab.store, name), name
    for name in ("Store", "KeyValue", "Event", "WatchResponse", "RangeResponse", "PutResponse",
                 "DeleteResponse", "TxnResponse", "Compare", "PutRequest", "RangeRequest",
                 "DeleteRequest", "CompactedError", "FutureRevisionError",
                 "RequestTooLargeError", "SnapshotError"):
        assert name in kubelab.store.__all__


def test_revision_arithmetic(store: Store) -> None:
    assert store.revision == 1  # an empty etcd is at revision 1
    assert store.put("/a", b"1").revision == 2
    assert store.put("/b", b"1").revision == 3
    assert store.range("/a").revision == 3  # reads report the current revision
    assert store.revision == 3
    assert store.delete_range("/missing").revision == 3  # deleting nothing is no write
    assert store.revision == 3
    resp = store.delete_range("/", prefix=True)
    assert (resp.deleted, resp.revision) == (2, 4)  # one revision for the whole delete


def test_versions_and_generations(store: Store) -> None:
    store.put("/a", b"1")
    store.put("/a", b"2")
    kv = store.range("/a").kvs[0]
    assert (kv.create_revision, kv.mod_revision, kv.version) == (2, 3, 2)
    store.delete_range("/a")
    assert store.range("/a").kvs == ()
    store.put("/a", b"3")  # a new generation starts over
    kv = store.range("/a").kvs[0]
    assert (kv.value, kv.create_revision, kv.mod_revision, kv.version) == (b"3", 5, 5, 1)


def test_prev_kv(store: Store) -> None:
    assert store.put("/a", b"1", prev_kv=True).prev_kv is None
    prev = store.put("/a", b"2", prev_kv=True).prev_kv
    assert prev == KeyValue("/a", b"1", 2, 2, 1)
    assert store.put("/a", b"3").prev_kv is None  # only when asked
    resp = store.delete_range("/a", prev_kv=True)
    assert [kv.value for kv in resp.prev_kvs] == [b"3"]


def test_range_at_past_revisions(store: Store) -> None:
    for i in range(5):
        store.put("/k", str(i).encode())      # revisions 2..6
    store.put("/other", b"x")                 # 7
    store.delete_range("/k")                  # 8
    assert [store.range("/k", revision=r).kvs[0].value for r in range(2, 7)] == [
        b"0", b"1", b"2", b"3", b"4"]
    assert store.range("/k", revision=7).kvs[0].version == 5
    assert store.range("/k", revision=8).kvs == ()
    assert store.range("/k", revision=1).kvs == ()  # before it existed
    assert [kv.key for kv in store.range("/", prefix=True, revision=6).kvs] == ["/k"]
    with pytest.raises(FutureRevisionError, match="mvcc: required revision is a future"):
        store.range("/k", revision=9)


def test_range_sorted_prefix_interval_limit(store: Store) -> None:
    for key in ["/r/pods/b", "/r/pods/a", "/r/podsx", "/r/pods/c", "/r/nodes/n1", "/s"]:
        store.put(key, key.encode())
    resp = store.range("/r/pods/", prefix=True)
    assert [kv.key for kv in resp.kvs] == ["/r/pods/a", "/r/pods/b", "/r/pods/c"]
    assert [kv.key for kv in store.range("/r/nodes/n1", "/r/pods/b").kvs] == [
        "/r/nodes/n1", "/r/pods/a"]
    assert [kv.key for kv in store.range("/r/podsx", "\0").kvs] == ["/r/podsx", "/s"]
    assert len(store.range("", prefix=True).kvs) == 6
    page = store.range("/r/", prefix=True, limit=2)
    assert ([kv.key for kv in page.kvs], page.count, page.more) == (
        ["/r/nodes/n1", "/r/pods/a"], 5, True)
    assert store.range("/r/", prefix=True, limit=5).more is False
    counted = store.range("/r/", prefix=True, count_only=True)
    assert (counted.kvs, counted.count) == ((), 5)
    keys = store.range("/r/pods/", prefix=True, keys_only=True).kvs
    assert {kv.value for kv in keys} == {b""} and keys[0].version == 1


def test_prefix_end() -> None:
    assert prefix_end("/a/") == "/a0"
    assert prefix_end("a\U0010ffff") == "b"
    assert prefix_end("") == "\0"


def test_compaction(store: Store) -> None:
    store.put("/a", b"1")     # 2
    store.put("/a", b"2")     # 3
    store.put("/b", b"1")     # 4
    store.delete_range("/b")  # 5
    store.put("/c", b"1")     # 6
    store.compact(5)
    assert store.compact_revision == 5
    with pytest.raises(CompactedError, match="mvcc: required revision has been compacted") as err:
        store.range("/a", revision=4)
    assert err.value.compact_revision == 5
    assert store.range("/a", revision=5).kvs[0].value == b"2"  # the compaction point is readable
    assert store.range("/b", revision=5).kvs == ()
    assert [kv.key for kv in store.range("/", prefix=True).kvs] == ["/a", "/c"]
    with pytest.raises(CompactedError):
        store.compact(5)
    with pytest.raises(FutureRevisionError):
        store.compact(7)
    store.compact(6)
    assert store.range("/a").kvs[0].version == 2  # versions survive compaction


def test_values_must_be_bytes(store: Store) -> None:
    for bad in ("text", bytearray(b"x"), {"kind": "Pod"}, None):
        with pytest.raises(TypeError, match="value must be bytes"):
            store.put("/a", bad)  # type: ignore[arg-type]
    assert store.revision == 1


def test_bad_keys(store: Store) -> None:
    with pytest.raises(InvalidArgumentError, match="etcdserver: key is not provided"):
        store.put("", b"x")
    with pytest.raises(TypeError, match="key must be a str"):
        store.put(b"/a", b"x")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="not both"):
        store.range("/a", "/b", prefix=True)
    assert store.revision == 1


def test_request_size_limit() -> None:
    store = Store(Clock())
    limit = store.max_request_bytes
    assert limit == 1572864
    store.put("/ok", b"x" * (limit - 3))  # key + value exactly at the limit
    with pytest.raises(RequestTooLargeError, match=r"^etcdserver: request is too large$"):
        store.put("/big", b"x" * limit)
    assert store.revision == 2 and store.range("/big").kvs == ()
    small = Store(Clock(), max_request_bytes=100)
    with pytest.raises(RequestTooLargeError):
        small.put("/a", b"x" * 100)


def test_compaction_is_traced_writes_are_not() -> None:
    clock = Clock()
    trace = Trace(lambda: clock.now)
    store = Store(clock, trace=trace)
    for i in range(10):
        store.put("/a", str(i).encode())
    store.compact(5)
    assert [(r.component, r.verb, r.detail) for r in trace] == [
        ("etcd", "compact", {"revision": 5})]
