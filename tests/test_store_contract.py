"""One contract for every store behind the API server: the embedded Store and a real etcd.

These are the behaviours notebook 01 teaches and the API server relies on (docs/ARCHITECTURE.md
section 2): revisions, create/mod revision and version, txn compares, ranges at a revision,
limit and count, watches from a revision with prev_kv, delete events and compaction errors. Each
test runs against both backends (etcd: one real member for the whole module, each test under
its own key prefix, so revisions are compared relative to where the test starts).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from etcd_helpers import require_etcd, settle

from kubelab.sim import Clock, RealTimeClock
from kubelab.store import (
    CompactedError,
    Compare,
    DeleteRequest,
    FutureRevisionError,
    InvalidArgumentError,
    PutRequest,
    RangeRequest,
    Store,
    WatchResponse,
)


class Harness:
    def __init__(self, name: str, store: Any, clock: Clock) -> None:
        self.name, self.store, self.clock = name, store, clock

    def settle(self, done: Callable[[], bool]) -> bool:
        return settle(self.clock, done, timeout=5.0)


@pytest.fixture(scope="module", params=["embedded", "etcd"])
def backend(request: pytest.FixtureRequest) -> Iterator[Harness]:
    if request.param == "embedded":
        clock = Clock()
        yield Harness("embedded", Store(clock), clock)
        return
    require_etcd()
    from kubelab.etcd import EtcdBackend, EtcdCluster

    etcd = EtcdCluster(1)
    try:
        clock = RealTimeClock()
        store = EtcdBackend(etcd.endpoints, clock)
        try:
            yield Harness("etcd", store, clock)
        finally:
            store.close()
    finally:
        etcd.close()


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    return f"/contract/{request.node.originalname}/"


def test_each_write_is_the_next_revision_with_create_mod_revision_and_version(
        backend: Harness, prefix: str) -> None:
    store, key = backend.store, prefix + "a"
    r0 = store.revision
    first = store.put(key, b"1")
    assert first.revision == r0 + 1 == store.revision
    second = store.put(key, b"2", prev_kv=True)
    assert second.revision == r0 + 2
    assert second.prev_kv is not None and second.prev_kv.value == b"1"
    (kv,) = store.range(key).kvs
    assert (kv.value, kv.create_revision, kv.mod_revision, kv.version) == (b"2", r0 + 1, r0 + 2, 2)
    assert store.put(prefix + "b", b"x").prev_kv is None


def test_a_range_at_an_old_revision_sees_the_old_value_and_a_future_one_is_refused(
        backend: Harness, prefix: str) -> None:
    store, key = backend.store, prefix + "a"
    old = store.put(key, b"old").revision
    store.put(key, b"new")
    assert store.range(key, revision=old).kvs[0].value == b"old"
    assert store.range(key).kvs[0].value == b"new"
    with pytest.raises(FutureRevisionError, match="required revision is a future revision"):
        store.range(key, revision=store.revision + 100)


def test_limit_cuts_the_answer_count_says_how_many_and_keys_only_drops_values(
        backend: Harness, prefix: str) -> None:
    store = backend.store
    for i in range(5):
        store.put(f"{prefix}k{i}", b"v")
    page = store.range(prefix, prefix=True, limit=2)
    assert [kv.key for kv in page.kvs] == [prefix + "k0", prefix + "k1"]
    assert (page.count, page.more, page.revision) == (5, True, store.revision)
    whole = store.range(prefix, prefix=True)
    assert (len(whole.kvs), whole.count, whole.more) == (5, 5, False)
    counted = store.range(prefix, prefix=True, count_only=True)
    assert (counted.kvs, counted.count) == ((), 5)
    keys = store.range(prefix, prefix=True, keys_only=True)
    assert {kv.value for kv in keys.kvs} == {b""} and len(keys.kvs) == 5
    between = store.range(prefix + "k1", prefix + "k3")
    assert [kv.key for kv in between.kvs] == [prefix + "k1", prefix + "k2"]


def test_a_txn_compares_on_create_and_mod_revision_and_runs_one_branch(
        backend: Harness, prefix: str) -> None:
    store, key = backend.store, prefix + "obj"
    absent = Compare.create_revision(key, "=", 0)
    created = store.txn([absent], [PutRequest(key, b"v1")], [RangeRequest(key)])
    assert created.succeeded and created.revision == store.revision
    again = store.txn([absent], [PutRequest(key, b"v2")], [RangeRequest(key)])
    assert not again.succeeded and again.revision == created.revision  # nothing written
    (found,) = again.responses
    assert isinstance(found, type(store.range(key))) and found.kvs[0].value == b"v1"
    rv = found.kvs[0].mod_revision
    stale = store.txn([Compare.mod_revision(key, "=", rv - 1)], [PutRequest(key, b"x")])
    assert not stale.succeeded and store.range(key).kvs[0].value == b"v1"
    fresh = store.txn([Compare.mod_revision(key, "=", rv)], [PutRequest(key, b"v2")])
    assert fresh.succeeded and store.range(key).kvs[0].version == 2
    assert store.txn([Compare.version(key, ">", 1), Compare.value_of(key, "=", b"v2")],
                     [DeleteRequest(key)]).succeeded
    assert store.range(key).kvs == ()


def test_a_bad_request_is_refused_in_etcds_words_and_changes_nothing(
        backend: Harness, prefix: str) -> None:
    store, key = backend.store, prefix + "a"
    before = store.revision
    with pytest.raises(InvalidArgumentError, match="etcdserver: key is not provided"):
        store.put("", b"x")
    with pytest.raises(TypeError, match="value must be bytes"):
        store.put(key, "text")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="duplicate key given in txn request"):
        store.txn([], [PutRequest(key, b"1"), PutRequest(key, b"2")])
    with pytest.raises(InvalidArgumentError, match="too many operations in txn request"):
        store.txn([], [PutRequest(f"{prefix}{i}", b"") for i in range(129)])
    assert store.revision == before and store.range(key).kvs == ()


def test_delete_returns_prev_kvs_and_deleting_nothing_keeps_the_revision(
        backend: Harness, prefix: str) -> None:
    store = backend.store
    store.put(prefix + "a", b"1")
    store.put(prefix + "b", b"2")
    gone = store.delete_range(prefix, prefix=True, prev_kv=True)
    assert gone.deleted == 2 and gone.revision == store.revision
    assert sorted(kv.value for kv in gone.prev_kvs) == [b"1", b"2"]
    nothing = store.delete_range(prefix, prefix=True)
    assert (nothing.deleted, nothing.revision) == (0, gone.revision)


def test_a_watch_from_a_revision_replays_history_in_order_with_prev_kv(
        backend: Harness, prefix: str) -> None:
    store, key = backend.store, prefix + "a"
    created = store.put(key, b"1").revision
    store.put(key, b"2")
    deleted = store.delete_range(key).revision
    got: list[WatchResponse] = []
    watch = store.watch(prefix, prefix=True, start_revision=created, prev_kv=True,
                        callback=got.append)
    events = lambda: [e for r in got for e in r.events]  # noqa: E731
    assert backend.settle(lambda: len(events()) == 3)
    put1, put2, delete = events()
    assert (put1.type, put1.kv.value, put1.kv.version, put1.prev_kv) == ("PUT", b"1", 1, None)
    assert (put2.type, put2.kv.value, put2.prev_kv and put2.prev_kv.value) == ("PUT", b"2", b"1")
    assert (delete.type, delete.kv.mod_revision, delete.kv.create_revision, delete.kv.value) == \
        ("DELETE", deleted, 0, b"")
    assert delete.prev_kv is not None and delete.prev_kv.value == b"2"
    store.put(key, b"3")
    assert backend.settle(lambda: len(events()) == 4)
    assert events()[-1].kv.create_revision == events()[-1].kv.mod_revision  # a new generation
    watch.cancel()
    store.put(key, b"4")
    backend.clock.run(until=backend.clock.now + 0.2)
    assert len(events()) == 4  # nothing after cancel


def test_a_watch_from_now_sees_only_later_changes_without_prev_kv_unless_asked(
        backend: Harness, prefix: str) -> None:
    store, key = backend.store, prefix + "a"
    store.put(key, b"before")
    got: list[WatchResponse] = []
    store.watch(key, callback=got.append)
    assert got == []  # never inside the caller's call
    store.put(key, b"after")
    assert backend.settle(lambda: any(r.events for r in got))
    (event,) = [e for r in got for e in r.events]
    assert (event.kv.value, event.prev_kv) == (b"after", None)


def test_compaction_refuses_old_reads_and_cancels_a_watch_from_below_it(
        backend: Harness, prefix: str) -> None:
    store, key = backend.store, prefix + "a"
    old = store.put(key, b"1").revision
    point = store.put(key, b"2").revision
    store.compact(point)
    assert store.compact_revision == point
    with pytest.raises(CompactedError, match="required revision has been compacted") as err:
        store.range(key, revision=old)
    assert err.value.compact_revision == point
    assert store.range(key, revision=point).kvs[0].value == b"2"  # the point itself is kept
    with pytest.raises(CompactedError):
        store.compact(point)
    with pytest.raises(FutureRevisionError):
        store.compact(store.revision + 100)
    got: list[WatchResponse] = []
    store.watch(prefix, prefix=True, start_revision=old, callback=got.append)
    assert backend.settle(lambda: bool(got))
    (cancel,) = got
    assert cancel.canceled and cancel.compact_revision == point and cancel.events == ()
    assert "required revision has been compacted" in cancel.cancel_reason


def test_a_watch_is_caught_up_once_it_has_been_sent_every_change_to_its_keys(
        backend: Harness, prefix: str) -> None:
    """What the API server's watch cache asks before it serves a list from its index
    (kubelab/apiserver/storage/watch_cache.py fresh()): has the store watch been sent everything?"""
    store = backend.store
    got: list[WatchResponse] = []
    watch = store.watch(prefix, prefix=True, callback=got.append)
    assert backend.settle(watch.caught_up)
    store.put(prefix + "a", b"1")
    assert not watch.caught_up()  # written, not yet delivered: never inside the writer's call
    assert backend.settle(watch.caught_up)
    assert [e.kv.value for r in got for e in r.events] == [b"1"]
    store.put("/contract/elsewhere", b"x")  # a key it does not watch
    assert backend.settle(watch.caught_up)  # etcd: after the next progress notification
    watch.cancel()
    assert not watch.caught_up()
