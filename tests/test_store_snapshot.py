"""Snapshots: a faithful round trip, and damaged files refused without harm."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.sim import Clock, Trace
from kubelab.store import PutRequest, SnapshotError, Store, WatchResponse


def busy_store(clock: Clock) -> Store:
    store = Store(clock)
    for i in range(20):
        store.put(f"/registry/pods/default/web-{i % 6}", f'{{"n":{i}}}'.encode(), lease=i % 2)
    store.delete_range("/registry/pods/default/web-5")
    store.compact(10)
    store.txn([], [PutRequest("/registry/nodes/n1", b"\x00\xffbinary"),
                   PutRequest("/registry/nodes/n2", b"")])
    store.delete_range("/registry/pods/default/web-4")
    return store


def everything(store: Store, revision: int = 0) -> object:
    return store.range("", prefix=True, revision=revision).kvs


def test_round_trip(tmp_path: Path) -> None:
    clock = Clock()
    store = busy_store(clock)
    path = tmp_path / "etcd.snap"
    size = store.save_snapshot(path)
    assert size == path.stat().st_size
    assert not (tmp_path / "etcd.snap.part").exists()
    restored = Store.restore(path, Clock())
    assert (restored.revision, restored.compact_revision) == (store.revision, 10)
    for rev in range(10, store.revision + 1):  # history since the compaction survives
        assert everything(restored, rev) == everything(store, rev)
    # the restored store goes on from the same revision and replays watches
    clock2 = Clock()
    restored = Store.restore(path, clock2)
    got: list[WatchResponse] = []
    restored.watch("/registry/", prefix=True, start_revision=22, callback=got.append,
                   prev_kv=True)
    assert restored.put("/registry/x", b"1").revision == store.revision + 1
    clock2.run_until_idle()
    kinds = [(e.type, e.kv.key, e.kv.mod_revision) for r in got for e in r.events]
    assert kinds == [("DELETE", "/registry/pods/default/web-5", 22),
                     ("PUT", "/registry/nodes/n1", 23), ("PUT", "/registry/nodes/n2", 23),
                     ("DELETE", "/registry/pods/default/web-4", 24),
                     ("PUT", "/registry/x", 25)]
    deleted = got[0].events[0].prev_kv
    assert deleted is not None and deleted.value == b'{"n":17}' and deleted.lease == 1
    assert store.save_snapshot(tmp_path / "again.snap") == size
    assert (tmp_path / "again.snap").read_bytes() == path.read_bytes()  # deterministic


def test_restore_is_traced(tmp_path: Path) -> None:
    clock = Clock()
    trace = Trace(lambda: clock.now)
    store = Store(clock, trace=trace)
    store.put("/a", b"1")
    store.save_snapshot(tmp_path / "s.snap")
    Store.restore(tmp_path / "s.snap", clock, trace=trace)
    assert [(r.verb, r.object, r.detail["revision"]) for r in trace] == [
        ("snapshot-save", "s.snap", 2), ("snapshot-restore", "s.snap", 2)]


@pytest.mark.parametrize(("damage", "message"), [
    (lambda b: b[:200] + bytes([b[200] ^ 0x01]) + b[201:], "corrupted: checksum mismatch"),
    (lambda b: b[:-1] + bytes([b[-1] ^ 0x80]), "corrupted: checksum mismatch"),
    (lambda b: b[: len(b) // 2], "is truncated"),
    (lambda b: b[:10], "is truncated"),
    (lambda b: b + b"x", "unexpected trailing bytes"),
    (lambda b: b"SQLite format 3\x00" + b[16:], "not a kubelab store snapshot"),
    (lambda b: b.replace(b"snapshot v1", b"snapshot v9", 1), "unsupported format v9"),
    (lambda b: b"", "is truncated"),
])
def test_damaged_snapshot_is_refused(tmp_path: Path, damage: object, message: str) -> None:
    clock = Clock()
    store = busy_store(clock)
    path = tmp_path / "etcd.snap"
    store.save_snapshot(path)
    before = (store.revision, everything(store))
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    with pytest.raises(SnapshotError, match=message) as err:
        Store.restore(path, clock)
    assert str(path) in str(err.value)
    assert (store.revision, everything(store)) == before  # the running store is untouched
    store.put("/still", b"works")


def test_missing_snapshot(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="cannot read snapshot file"):
        Store.restore(tmp_path / "nope.snap", Clock())
