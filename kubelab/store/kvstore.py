"""The store: etcd's multi-version key-value store, in one process, on the simulated clock.

Every change gets the next *revision*, a counter over the whole store (an empty store is at
revision 1; the first write makes it 2). Each key remembers create_revision, mod_revision and
version, and old versions stay readable until compaction, so a reader can ask "what did the
store look like at revision 7?". A txn applies a whole branch at one revision, or changes
nothing and keeps the revision. This follows etcd server/storage/mvcc/kvstore.go and
kvstore_txn.go; watchers are in watch.py, the disk and its latency in disk.py.

Store.latency makes the disk slow: writes still apply at once in call order, but each occupies
the disk for `latency` virtual seconds; its commit time is max(now, disk free at) + latency,
its watchers hear of it at that time, and its response's `.latency` says how long the writer
waited (commit time - now), which the API server adds to the request's duration.

The space quota, its NOSPACE alarm and defragmentation are in quota.py: every put is checked
and charged there, compaction recounts the space in use, defragment() shrinks the file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from kubelab.sim import Clock, Trace
from kubelab.store import snapshot
from kubelab.store.disk import Disk
from kubelab.store.errors import CompactedError, FutureRevisionError, InvalidArgumentError
from kubelab.store.index import KeyIndex
from kubelab.store.kv import DELETE, PUT, Event, KeyValue
from kubelab.store.quota import NOSPACE, BackendQuota, cost_put, cost_txn
from kubelab.store.rpc import (
    Compare,
    DeleteResponse,
    Op,
    PutRequest,
    PutResponse,
    RangeRequest,
    RangeResponse,
    Response,
    TxnResponse,
    check_value,
    key_range,
)
from kubelab.store.txn import (
    DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_MAX_TXN_OPS,
    check_size,
    check_txn,
    compare_holds,
)
from kubelab.store.watch import WatchCallback, Watcher, WatchHub

__all__ = ["SLOW_APPLY_SECONDS", "Store"]

# etcd logs "apply request took too long" past --warning-apply-duration (100ms by default,
# server/embed/config.go); we record such writes in the trace, and no others.
SLOW_APPLY_SECONDS = 0.1


class Store:
    """An etcd stand-in: MVCC revisions, txn, watch, compaction, snapshots."""

    def __init__(self, clock: Clock, *, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                 max_txn_ops: int = DEFAULT_MAX_TXN_OPS, trace: Trace | None = None,
                 quota_backend_bytes: int = 0) -> None:
        self.max_request_bytes = max_request_bytes
        self.quota = BackendQuota(quota_backend_bytes)  # --quota-backend-bytes (0: 2 GiB)
        self.quota.on_alarm = self._record_alarm
        self.max_txn_ops = max_txn_ops
        self._clock = clock
        self._trace = trace
        self._index = KeyIndex()
        self._revision = 1            # etcd: an empty store is at revision 1
        self._compact_revision = 0    # 0: never compacted
        self._hub = WatchHub(clock, trace, self._revision)
        self._events = self._hub.events  # the event log, appended to by every write
        self._disk = Disk(clock, self._hub.commit, self._revision)

    @property
    def revision(self) -> int:
        """The revision of the newest write (applied; maybe not yet committed to disk)."""
        return self._revision

    @property
    def compact_revision(self) -> int:
        """Reads and watches below this revision fail: its history is gone (0: none yet)."""
        return self._compact_revision

    @property
    def latency(self) -> float:
        """Virtual seconds each write occupies the disk; set it to make etcd slow."""
        return self._disk.latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        self._disk.latency = seconds

    def __len__(self) -> int:
        """Number of keys that exist now."""
        return sum(1 for key in self._index.keys("", "\0") if self._index.latest(key))

    # -- reads ---------------------------------------------------------------------------------

    def range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              revision: int = 0, limit: int = 0, count_only: bool = False,
              keys_only: bool = False) -> RangeResponse:
        """Read key (or [key, range_end), or every key under prefix) at revision (0: now)."""
        start, end = key_range(key, range_end, prefix)
        if revision < 0 or limit < 0:
            raise InvalidArgumentError("revision and limit must be >= 0")
        return self._range(start, end, revision, limit, count_only, keys_only)

    def _range(self, start: str, end: str | None, revision: int, limit: int,
               count_only: bool, keys_only: bool) -> RangeResponse:
        current = self._revision
        self._check_revision(revision)
        at = revision or current
        if end is None:
            kv = self._index.get(start, at)
            kvs = [] if kv is None else [kv]
        else:
            kvs = self._index.range(start, end, at)
        count = len(kvs)
        if count_only:
            return RangeResponse((), count, False, current)
        more = 0 < limit < count
        if more:
            kvs = kvs[:limit]
        if keys_only:
            kvs = [kv._replace(value=b"") for kv in kvs]
        return RangeResponse(tuple(kvs), count, more, current)

    def _check_revision(self, revision: int) -> None:
        # etcd kvstore_txn.go rangeKeys: the compaction point itself is still readable.
        if revision > self._revision:
            raise FutureRevisionError(self._revision)
        if 0 < revision < self._compact_revision:
            raise CompactedError(self._compact_revision)

    # -- writes --------------------------------------------------------------------------------

    def put(self, key: str, value: bytes, *, prev_kv: bool = False, lease: int = 0) -> PutResponse:
        """Set key to value at the next revision."""
        if type(value) is not bytes:
            check_value(value)  # raises TypeError
        if type(key) is not str or not key:
            key_range(key, None, False)  # raises the right error
        cost = cost_put(key, value)
        self.quota.check(cost)
        check_size(len(key.encode()) + len(value), self.max_request_bytes)
        revision = self._revision + 1
        kv, prev = self._index.put(key, value, revision, lease)
        self.quota.charge(cost)
        self._events.append(Event(PUT, kv, prev))
        self._revision = revision
        latency = self._disk.write(revision)
        if latency > SLOW_APPLY_SECONDS:
            self._record_slow(key, latency)
        return PutResponse(revision, prev if prev_kv else None, latency)

    def delete_range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
                     prev_kv: bool = False) -> DeleteResponse:
        """Delete key (or a range, or a prefix). Deleting nothing keeps the revision."""
        start, end = key_range(key, range_end, prefix)
        check_size(len(start.encode()) + len((end or "").encode()), self.max_request_bytes)
        prevs = self._delete(start, end, self._revision + 1)
        latency = self._disk.write(self._revision if prevs else None)
        if latency > SLOW_APPLY_SECONDS:
            self._record_slow(start, latency)
        return DeleteResponse(len(prevs), tuple(prevs) if prev_kv else (), self._revision,
                              latency)

    def _delete(self, start: str, end: str | None, revision: int) -> list[KeyValue]:
        deleted = []
        for key in self._index.keys(start, end):
            if self._index.latest(key) is not None:
                tombstone, prev = self._index.tombstone(key, revision)
                self.quota.charge(cost_put(key, b""))
                self._events.append(Event(DELETE, tombstone, prev))
                deleted.append(prev)
        if deleted:
            self._revision = revision
        return deleted

    def txn(self, compares: Sequence[Compare] = (), success: Sequence[Op] = (),
            failure: Sequence[Op] = ()) -> TxnResponse:
        """If every compare holds, run success, else failure; all at one revision.

        The whole txn is checked first (sizes, duplicate keys, read revisions), so an error
        changes nothing. A txn that writes nothing keeps the revision.
        """
        compares, success, failure = tuple(compares), tuple(success), tuple(failure)
        self.quota.check(cost_txn(success, failure))
        check_txn(compares, success, failure, max_ops=self.max_txn_ops,
                  max_bytes=self.max_request_bytes)
        # (Plain loops, not all()/any() over generators: every API write comes through here.)
        succeeded = True
        for compare in compares:
            if not compare_holds(self._index.latest(compare.key), compare):
                succeeded = False
                break
        ops = success if succeeded else failure
        for op in ops:
            if isinstance(op, RangeRequest):
                self._check_revision(op.revision)
        writes = False  # does either branch write? (see the latency comment below)
        for op in success + failure:
            if not isinstance(op, RangeRequest):
                writes = True
                break
        revision = self._revision + 1
        responses: list[Response] = []
        for op in ops:
            if isinstance(op, RangeRequest):
                start, end = key_range(op.key, op.range_end, op.prefix)
                responses.append(self._range(start, end, op.revision, op.limit,
                                             op.count_only, op.keys_only))
            elif isinstance(op, PutRequest):
                kv, prev = self._index.put(op.key, op.value, revision, op.lease)
                self.quota.charge(cost_put(op.key, op.value))
                self._events.append(Event(PUT, kv, prev))
                self._revision = revision
                responses.append(PutResponse(revision, prev if op.prev_kv else None))
            else:
                start, end = key_range(op.key, op.range_end, op.prefix)
                prevs = self._delete(start, end, revision)
                responses.append(DeleteResponse(len(prevs), tuple(prevs) if op.prev_kv else (),
                                                self._revision))
        latency = 0.0
        # etcd serves a txn without writes in either branch as a read; any other goes
        # through the raft log and so waits for the disk, even if it ends up changing nothing.
        if writes:
            latency = self._disk.write(self._revision if self._revision == revision else None)
            if latency > SLOW_APPLY_SECONDS:
                self._record_slow(ops[0].key if ops else "", latency)
        return TxnResponse(succeeded, tuple(responses), self._revision, latency)

    def compact(self, revision: int) -> None:
        """Forget history below revision; each key keeps its version live at revision.

        Reads below revision then raise CompactedError; watchers still replaying from below it
        are canceled with compact_revision (watchers already caught up lose nothing).
        """
        if revision <= self._compact_revision:
            raise CompactedError(self._compact_revision)
        if revision > self._revision:
            raise FutureRevisionError(self._revision)
        self._compact_revision = revision
        self._index.compact(revision)
        self.quota.recount(self._index.versions())
        self._hub.compact(revision)
        if self._trace is not None:
            self._trace.record("etcd", "compact", "", revision=revision)

    # -- maintenance (etcd's Maintenance service: Defragment, Alarm) --------------------------

    @property
    def db_size(self) -> int:
        """Bytes of the database file (etcdctl endpoint status: DB SIZE)."""
        return self.quota.size

    @property
    def db_size_in_use(self) -> int:
        """Bytes of the revisions still kept (DB SIZE IN USE)."""
        return self.quota.in_use

    def defragment(self) -> int:
        """`etcdctl defrag`: give the pages compaction freed back; returns the bytes freed."""
        freed = self.quota.defragment()
        if self._trace is not None:
            self._trace.record("etcd", "defragment", "", freed=freed, size=self.quota.size)
        return freed

    def alarm_list(self) -> list[str]:
        """`etcdctl alarm list`: the active alarms (NOSPACE once the quota refused a write)."""
        return sorted(self.quota.alarms)

    def alarm_disarm(self) -> None:
        """`etcdctl alarm disarm`: writes are accepted again (if they fit)."""
        had = NOSPACE in self.quota.alarms
        self.quota.disarm()
        if self._trace is not None and had:
            self._trace.record("etcd", "alarm-disarm", NOSPACE)

    # -- watch ---------------------------------------------------------------------------------

    def watch(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              start_revision: int = 0, callback: WatchCallback,
              prev_kv: bool = False) -> Watcher:
        """Call callback with WatchResponse batches for every change to the keys, in order.

        start_revision 0 means "changes after now"; an older one first replays history from
        there (canceled with compact_revision if it is below the compaction point); a future
        one waits silently until the store gets there.
        """
        start, end = key_range(key, range_end, prefix)
        if start_revision < 0:
            raise InvalidArgumentError(f"start_revision must be >= 0, got {start_revision}")
        return self._hub.add(start, end, start_revision, callback, prev_kv, self._revision)

    # -- snapshots -----------------------------------------------------------------------------

    def save_snapshot(self, path: str | os.PathLike[str]) -> int:
        """Write the whole store to one checksummed file; returns its size in bytes."""
        size = snapshot.write_snapshot(path, self._revision, self._compact_revision,
                                       self._index.versions())
        if self._trace is not None:
            self._trace.record("etcd", "snapshot-save", os.path.basename(path),
                               revision=self._revision, bytes=size)
        return size

    @classmethod
    def restore(cls, path: str | os.PathLike[str], clock: Clock, *,
                max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                max_txn_ops: int = DEFAULT_MAX_TXN_OPS, trace: Trace | None = None) -> Store:
        """A new store from a snapshot file; raises SnapshotError if the file is damaged.

        Same revision, compaction point and history; watchers are not part of a snapshot.
        """
        revision, compact_revision, kvs = snapshot.read_snapshot(path)
        store = cls.from_versions(clock, revision, compact_revision, kvs,
                                  max_request_bytes=max_request_bytes, max_txn_ops=max_txn_ops,
                                  trace=trace)
        if trace is not None:
            trace.record("etcd", "snapshot-restore", os.path.basename(path), revision=revision)
        return store

    def versions(self) -> list[KeyValue]:
        """Every stored version in key order: a snapshot's payload (KeyValues are immutable)."""
        return list(self._index.versions())

    @classmethod
    def from_versions(cls, clock: Clock, revision: int, compact_revision: int,
                      kvs: Sequence[KeyValue], *, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                      max_txn_ops: int = DEFAULT_MAX_TXN_OPS, trace: Trace | None = None) -> Store:
        """A new store holding these versions (a snapshot's payload, as versions() gives it)."""
        store = cls(clock, max_request_bytes=max_request_bytes, max_txn_ops=max_txn_ops,
                    trace=trace)
        store._index.load(list(kvs))
        store.quota.recount(list(kvs))
        store.quota.defragment()  # a restored member's file holds only what the snapshot had
        store._revision = store._disk.committed = store._hub.committed = revision
        store._compact_revision = store._hub.compact_revision = compact_revision
        store._events.extend(snapshot.events_since(list(kvs), compact_revision))
        return store

    def _record_alarm(self) -> None:
        if self._trace is not None:
            self._trace.record("etcd", "alarm", NOSPACE, size=self.quota.size,
                               quota=self.quota.limit)

    def _record_slow(self, key: str, took: float) -> None:
        if self._trace is not None:
            self._trace.record("etcd", "slow-apply", key, took=round(took, 6),
                               expected=SLOW_APPLY_SECONDS)

    def __repr__(self) -> str:
        return (f"<Store revision={self._revision} compact_revision={self._compact_revision} "
                f"keys={len(self)} watchers={len(self._hub)} latency={self.latency}>")
