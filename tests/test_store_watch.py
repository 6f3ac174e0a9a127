"""Watch: asynchronous, batched, ordered, exactly once; replay, compaction and future revisions."""

from __future__ import annotations

import pytest

from kubelab.sim import Clock, Trace
from kubelab.store import (
    Compare,
    DeleteRequest,
    Event,
    InvalidArgumentError,
    PutRequest,
    Store,
    WatchResponse,
)


class Recorder:
    """A watch callback that keeps every response and the virtual time it arrived."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.responses: list[WatchResponse] = []
        self.times: list[float] = []

    def __call__(self, resp: WatchResponse) -> None:
        self.responses.append(resp)
        self.times.append(self.clock.now)

    @property
    def events(self) -> list[Event]:
        return [e for r in self.responses for e in r.events]

    def summary(self) -> list[tuple[str, str, int]]:
        return [(e.type, e.kv.key, e.kv.mod_revision) for e in self.events]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> Store:
    return Store(clock)


def test_delivery_is_async_and_batched(clock: Clock, store: Store) -> None:
    rec = Recorder(clock)
    store.watch("/a", callback=rec)
    store.put("/a", b"1")
    store.put("/a", b"2")
    assert rec.responses == []  # never inside the writer's call
    clock.run_until_idle()
    assert len(rec.responses) == 1  # everything committed by then comes as one batch
    (resp,) = rec.responses
    assert [e.kv.value for e in resp.events] == [b"1", b"2"]
    assert resp.header_revision == 3 and not resp.canceled and resp.compact_revision == 0
    assert rec.times == [0.0]


def test_start_zero_means_from_the_next_revision(clock: Clock, store: Store) -> None:
    store.put("/a", b"old")
    rec = Recorder(clock)
    store.watch("/a", callback=rec)
    clock.run_until_idle()
    assert rec.responses == []  # no empty "created" batch, no history
    store.put("/a", b"new")
    clock.run_until_idle()
    assert [e.kv.value for e in rec.events] == [b"new"]


def test_key_range_and_prefix_selection(clock: Clock, store: Store) -> None:
    one, pods, span = Recorder(clock), Recorder(clock), Recorder(clock)
    store.watch("/r/pods/a", callback=one)
    store.watch("/r/pods/", prefix=True, callback=pods)
    store.watch("/r/a", "/r/p", callback=span)
    for key in ["/r/pods/a", "/r/pods/b", "/r/podsx", "/r/nodes/n", "/r/pods/a"]:
        store.put(key, b"x")
    clock.run_until_idle()
    assert [e.kv.key for e in one.events] == ["/r/pods/a", "/r/pods/a"]
    assert [e.kv.key for e in pods.events] == ["/r/pods/a", "/r/pods/b", "/r/pods/a"]
    assert [e.kv.key for e in span.events] == ["/r/nodes/n"]


def test_replay_then_stream_in_order(clock: Clock, store: Store) -> None:
    store.put("/a", b"1")                                    # 2
    store.txn([], [PutRequest("/b", b"1"), PutRequest("/c", b"1")])  # 3: two events, one rev
    store.delete_range("/a")                                 # 4
    rec = Recorder(clock)
    store.watch("/", prefix=True, start_revision=3, callback=rec, prev_kv=True)
    store.put("/d", b"1")                                    # 5
    clock.run_until_idle()
    store.put("/b", b"2")                                    # 6
    clock.run_until_idle()
    assert rec.summary() == [("PUT", "/b", 3), ("PUT", "/c", 3), ("DELETE", "/a", 4),
                             ("PUT", "/d", 5), ("PUT", "/b", 6)]
    delete = rec.events[2]
    assert delete.kv.create_revision == 0 and delete.kv.value == b"" and delete.kv.version == 0
    assert delete.prev_kv is not None and delete.prev_kv.value == b"1"
    assert rec.events[4].prev_kv is not None and rec.events[4].prev_kv.mod_revision == 3
    assert [r.header_revision for r in rec.responses] == [5, 6]


def test_prev_kv_only_when_asked(clock: Clock, store: Store) -> None:
    plain, full = Recorder(clock), Recorder(clock)
    store.watch("/a", callback=plain)
    store.watch("/a", callback=full, prev_kv=True)
    store.put("/a", b"1")
    store.put("/a", b"2")
    clock.run_until_idle()
    assert [e.prev_kv for e in plain.events] == [None, None]
    assert [e.prev_kv.value if e.prev_kv else None for e in full.events] == [None, b"1"]


def test_no_loss_duplicate_or_reorder_under_interleaving(clock: Clock, store: Store) -> None:
    rec = Recorder(clock)
    store.watch("/", prefix=True, start_revision=1, callback=rec)
    expected = []
    for i in range(200):
        key = f"/k{i % 7}"
        if i % 5 == 4:
            if store.delete_range(key).deleted:
                expected.append(("DELETE", key, store.revision))
        else:
            store.put(key, b"v")
            expected.append(("PUT", key, store.revision))
        if i % 3 == 0:
            clock.step()
    clock.run_until_idle()
    assert rec.summary() == expected
    revs = [r.header_revision for r in rec.responses]
    assert revs == sorted(set(revs))


def test_writes_from_a_callback_arrive_in_a_later_batch(clock: Clock, store: Store) -> None:
    rec = Recorder(clock)

    def echo(resp: WatchResponse) -> None:
        for e in resp.events:
            if e.kv.key == "/ping":
                store.put("/pong", e.kv.value)

    store.watch("/", prefix=True, callback=echo)
    store.watch("/", prefix=True, callback=rec)
    store.put("/ping", b"1")
    clock.run_until_idle()
    assert [[e.kv.key for e in r.events] for r in rec.responses] == [["/ping"], ["/pong"]]


def test_cancel_stops_delivery(clock: Clock, store: Store) -> None:
    rec = Recorder(clock)
    watcher = store.watch("/a", callback=rec)
    store.put("/a", b"1")
    watcher.cancel()  # before the pending batch is delivered
    watcher.cancel()  # idempotent
    store.put("/a", b"2")
    clock.run_until_idle()
    assert rec.responses == []


def test_watch_from_a_compacted_revision_is_canceled(clock: Clock) -> None:
    trace = Trace(lambda: clock.now)
    store = Store(clock, trace=trace)
    for i in range(5):
        store.put("/a", str(i).encode())  # revisions 2..6
    store.compact(5)
    rec = Recorder(clock)
    store.watch("/a", start_revision=4, callback=rec)
    store.put("/a", b"later")
    clock.run_until_idle()
    assert rec.responses == [WatchResponse(
        (), 7, compact_revision=5, canceled=True,
        cancel_reason="mvcc: required revision has been compacted")]
    assert [r.verb for r in trace] == ["compact", "watch-compacted"]
    # etcd cancels only a start *below* the compaction point: the point itself replays
    at_point = Recorder(clock)
    store.watch("/a", start_revision=5, callback=at_point)
    clock.run_until_idle()
    assert [e.kv.mod_revision for e in at_point.events] == [5, 6, 7]


def test_replaying_watcher_is_canceled_by_a_compaction_before_it_catches_up(
        clock: Clock, store: Store) -> None:
    for i in range(5):
        store.put("/a", str(i).encode())
    rec = Recorder(clock)
    store.watch("/a", start_revision=2, callback=rec)  # unsynced: replay is pending
    store.compact(4)
    clock.run_until_idle()
    assert len(rec.responses) == 1 and rec.responses[0].canceled
    assert rec.responses[0].compact_revision == 4


def test_current_watcher_misses_nothing_across_compactions(clock: Clock, store: Store) -> None:
    rec = Recorder(clock)
    store.watch("/", prefix=True, callback=rec)
    expected = []
    for round_ in range(4):
        for i in range(5):
            store.put(f"/k{i}", str(round_).encode())
            expected.append(store.revision)
        store.delete_range("/k0")
        expected.append(store.revision)
        # compact before the batch is delivered: the events are still owed to the watcher
        store.compact(store.revision)
        if round_ % 2:
            clock.run_until_idle()
    store.latency = 1.0
    store.put("/slow", b"1")  # not yet durable when the compaction comes
    expected.append(store.revision)
    store.compact(store.revision)
    clock.run_until_idle()
    assert [e.kv.mod_revision for e in rec.events] == expected
    assert not any(r.canceled for r in rec.responses)


def test_future_revision_watch_waits_silently(clock: Clock, store: Store) -> None:
    rec = Recorder(clock)
    store.watch("/a", start_revision=5, callback=rec)
    for i in range(2, 7):
        store.put("/a", str(i).encode())
        clock.run_until_idle()
        if store.revision < 5:
            assert rec.responses == []
    assert [e.kv.mod_revision for e in rec.events] == [5, 6]


def test_txn_events_share_a_revision(clock: Clock, store: Store) -> None:
    store.put("/a", b"1")
    rec = Recorder(clock)
    store.watch("/", prefix=True, callback=rec)
    store.txn([Compare.version("/a", "=", 1)],
              [PutRequest("/b", b"1"), DeleteRequest("/a"), PutRequest("/c", b"1")])
    clock.run_until_idle()
    assert rec.summary() == [("PUT", "/b", 3), ("DELETE", "/a", 3), ("PUT", "/c", 3)]


def test_watch_checks_arguments(store: Store) -> None:
    with pytest.raises(InvalidArgumentError):
        store.watch("/a", start_revision=-1, callback=print)
    with pytest.raises(InvalidArgumentError, match="key is not provided"):
        store.watch("", callback=print)


def test_each_watcher_gets_exactly_its_keys_from_a_shared_batch(clock: Clock, store: Store) -> None:
    # One delivery, many watchers at the same revision: the batch's key span lets most skip it,
    # and none may lose an event at the edges of its range.
    ranges = {"key /b": ("/b", None, False), "prefix /b": ("/b", None, True),
              "[/a, /c)": ("/a", "/c", False), "[/c, /d)": ("/c", "/d", False),
              ">= /bz": ("/bz", "\0", False), "key /zz": ("/zz", None, False)}
    recs = {name: Recorder(clock) for name in ranges}
    for name, (key, end, prefix) in ranges.items():
        store.watch(key, end, prefix=prefix, callback=recs[name])
    for batch in (["/a", "/b", "/b/x", "/bz", "/c"], ["/c"], ["/bz"], ["/cc", "/d"], ["/b"]):
        for key in batch:  # one delivery per batch: each has its own key span
            store.put(key, b"v")
        clock.run_until_idle()
    store.delete_range("/b")
    store.put("/b", b"w")
    clock.run_until_idle()
    got = {name: [(e.type, e.kv.key) for e in rec.events] for name, rec in recs.items()}
    first = [("PUT", "/a"), ("PUT", "/b"), ("PUT", "/b/x"), ("PUT", "/bz"), ("PUT", "/c")]
    last = [("PUT", "/b"), ("DELETE", "/b"), ("PUT", "/b")]
    assert got == {
        "key /b": [e for e in first if e[1] == "/b"] + last,
        "prefix /b": [e for e in first if e[1].startswith("/b")] + [("PUT", "/bz")] + last,
        "[/a, /c)": [*first[:4], ("PUT", "/bz"), *last],
        "[/c, /d)": [("PUT", "/c"), ("PUT", "/c"), ("PUT", "/cc")],
        ">= /bz": [("PUT", "/bz"), ("PUT", "/c"), ("PUT", "/c"), ("PUT", "/bz"), ("PUT", "/cc"),
                   ("PUT", "/d")],
        "key /zz": [],
    }
