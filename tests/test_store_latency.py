"""The slow-disk knob: writers wait, writes queue on the disk, watchers hear late."""

from __future__ import annotations

import pytest

from kubelab.sim import Clock, Trace
from kubelab.store import DeleteRequest, PutRequest, RangeRequest, Store, WatchResponse


def test_no_latency_by_default() -> None:
    clock = Clock()
    store = Store(clock)
    assert store.latency == 0.0
    assert store.put("/a", b"1").latency == 0.0
    assert store.txn([], [PutRequest("/b", b"1")]).latency == 0.0


def test_writes_wait_and_queue_watchers_hear_at_commit_time() -> None:
    clock = Clock()
    store = Store(clock)
    heard: list[tuple[float, list[int]]] = []

    def on_watch(resp: WatchResponse) -> None:
        heard.append((clock.now, [e.kv.mod_revision for e in resp.events]))

    store.watch("/", prefix=True, callback=on_watch)
    store.latency = 0.5
    first = store.put("/a", b"1")
    second = store.put("/b", b"1")  # the disk is still busy with the first write
    third = store.txn([], [PutRequest("/c", b"1")])
    assert (first.latency, second.latency, third.latency) == (0.5, 1.0, 1.5)
    assert store.range("/c").kvs[0].value == b"1"  # applied at once: readers see it now
    clock.run_until_idle()
    assert heard == [(0.5, [2]), (1.0, [3]), (1.5, [4])]
    clock.run(until=10.0)
    assert store.put("/d", b"1").latency == 0.5  # an idle disk again: just the latency
    clock.run_until_idle()
    assert heard[-1] == (10.5, [5])


def test_writes_at_one_commit_time_arrive_as_one_batch() -> None:
    clock = Clock()
    store = Store(clock)
    store.latency = 0.25
    batches: list[tuple[float, int]] = []
    store.watch("/", prefix=True,
                callback=lambda r: batches.append((clock.now, len(r.events))))
    store.txn([], [PutRequest("/a", b"1"), PutRequest("/b", b"1")])
    clock.run_until_idle()
    assert batches == [(0.25, 2)]


def test_lowering_latency_keeps_commit_order() -> None:
    clock = Clock()
    store = Store(clock)
    heard: list[tuple[float, int]] = []
    store.watch("/", prefix=True,
                callback=lambda r: heard.extend((clock.now, e.kv.mod_revision)
                                                for e in r.events))
    store.latency = 2.0
    store.put("/a", b"1")
    store.latency = 0.0
    assert store.put("/b", b"1").latency == 2.0  # still behind the slow write on the disk
    clock.run_until_idle()
    assert heard == [(2.0, 2), (2.0, 3)]


def test_what_waits_for_the_disk() -> None:
    clock = Clock()
    store = Store(clock)
    store.put("/a", b"1")
    store.latency = 1.0
    assert store.range("/a").kvs  # reads never wait
    assert store.txn([], [RangeRequest("/a")]).latency == 0.0  # a read-only txn is a read
    # writes go through the raft log even when they change nothing
    assert store.delete_range("/missing").latency == 1.0
    assert store.txn([], [RangeRequest("/a")], [DeleteRequest("/a")]).latency == 2.0
    assert store.revision == 2


def test_slow_writes_are_traced() -> None:
    clock = Clock()
    trace = Trace(lambda: clock.now)
    store = Store(clock, trace=trace)
    store.latency = 0.05
    store.put("/fast", b"1")
    assert len(trace) == 0
    clock.run(until=1.0)
    store.latency = 0.3
    store.put("/slow", b"1")
    (rec,) = trace
    assert (rec.component, rec.verb, rec.object) == ("etcd", "slow-apply", "/slow")
    assert rec.detail == {"took": 0.3, "expected": 0.1}


def test_latency_must_be_a_non_negative_number() -> None:
    store = Store(Clock())
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="store latency must be >= 0"):
            store.latency = bad
    assert store.latency == 0.0


def test_a_fast_write_never_commits_before_a_slow_one_ahead_of_it() -> None:
    clock = Clock()
    store = Store(clock)
    store.latency = 1.0

    def at_one_second() -> None:  # runs at t=1.0 just before the first write's commit timer
        store.latency = 0.0
        assert store.put("/b", b"1").latency == 0.0  # the disk is free, but /a is not durable

    heard: list[tuple[float, list[int]]] = []
    store.watch("/", prefix=True, callback=lambda r: heard.append(
        (clock.now, [e.kv.mod_revision for e in r.events])))
    clock.call_at(1.0, at_one_second)
    store.put("/a", b"1")
    clock.run_until_idle()
    assert heard == [(1.0, [2, 3])]
    late: list[int] = []  # a replay started afterwards sees both: the disk committed both
    store.watch("/", prefix=True, start_revision=2,
                callback=lambda r: late.extend(e.kv.mod_revision for e in r.events))
    clock.run_until_idle()
    assert late == [2, 3]
