"""One etcd member: a Raft node, its state machine (a kubelab Store) and the loop between them.

etcd's raftNode (server/etcdserver/raft.go) takes each Ready from raft: it persists entries,
sends messages, and the server applies committed entries to its MVCC store (apply.go). Here
`ready()` does the same after every tick or message: apply what got committed, install a received
snapshot, take a snapshot and compact the log every `snapshot_count` entries (etcd's
--snapshot-count, keeping SnapshotCatchUpEntries behind for slow followers), and hand back the
messages to send. Each member's Store applies the same requests in the same order, so every
member reaches the same revisions, as etcd's members do.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from kubelab.sim import Clock
from kubelab.store.errors import StoreError
from kubelab.store.kv import KeyValue
from kubelab.store.kvstore import Store
from kubelab.store.raft.messages import Message, Snapshot
from kubelab.store.raft.raft import Raft
from kubelab.store.raft.rules import Rules
from kubelab.store.rpc import Compare, Op

__all__ = ["CompactOp", "DeleteOp", "Member", "PutOp", "Request", "StoreImage", "TxnOp", "apply_request"]


class PutOp(NamedTuple):
    key: str
    value: bytes
    prev_kv: bool
    lease: int


class DeleteOp(NamedTuple):
    key: str
    range_end: str | None
    prev_kv: bool


class TxnOp(NamedTuple):
    compares: tuple[Compare, ...]
    success: tuple[Op, ...]
    failure: tuple[Op, ...]


class CompactOp(NamedTuple):
    revision: int


class Request(NamedTuple):
    """What a log entry carries (etcdserverpb.InternalRaftRequest): an id to find the waiting
    caller, and one operation."""

    id: int
    op: PutOp | DeleteOp | TxnOp | CompactOp


class StoreImage(NamedTuple):
    """A state machine snapshot: everything Store.from_versions needs."""

    revision: int
    compact_revision: int
    kvs: tuple[KeyValue, ...]


def apply_request(store: Store, op: PutOp | DeleteOp | TxnOp | CompactOp) -> object:
    """Apply one request to a member's store (etcd apply.go); an etcd error is the result too.
    Every member applies the same request to the same state, so each gets the same answer."""
    try:
        if isinstance(op, PutOp):
            return store.put(op.key, op.value, prev_kv=op.prev_kv, lease=op.lease)
        if isinstance(op, DeleteOp):
            return store.delete_range(op.key, op.range_end, prev_kv=op.prev_kv)
        if isinstance(op, TxnOp):
            return store.txn(op.compares, op.success, op.failure)
        store.compact(op.revision)
        return None
    except (StoreError, TypeError, ValueError) as err:
        return err


class Member:
    def __init__(self, name: str, peers: list[str], clock: Clock, rand: random.Random, *,
                 election_tick: int, rules: Rules, snapshot_count: int, catch_up_entries: int,
                 max_request_bytes: int) -> None:
        self.name, self.clock = name, clock
        self.raft = Raft(name, peers, rand, election_tick=election_tick, rules=rules)
        self.max_request_bytes = max_request_bytes
        self.store = Store(clock, max_request_bytes=max_request_bytes)
        self.snapshot_count, self.catch_up_entries = snapshot_count, catch_up_entries
        self.up = True
        self.waiting: set[int] = set()             # ids of requests a caller waits for here
        self.results: dict[int, object] = {}       # their responses, once applied
        self.restored = 0                          # snapshots installed from the leader

    def ready(self) -> list[Message]:
        """Apply what is committed and return the messages to send (raft.Ready)."""
        r = self.raft
        snap = r.pending_snapshot
        if snap is not None:
            r.pending_snapshot = None
            image: StoreImage = snap.data  # type: ignore[assignment]
            latency = self.store.latency
            self.store = Store.from_versions(self.clock, image.revision, image.compact_revision,
                                             image.kvs, max_request_bytes=self.max_request_bytes)
            self.store.latency = latency
            self.restored += 1
        log = r.log
        while log.applied < log.committed:
            entry = log.entry(log.applied + 1)
            if entry.data is not None:
                request: Request = entry.data  # type: ignore[assignment]
                result = apply_request(self.store, request.op)
                if request.id in self.waiting:
                    self.results[request.id] = result
            log.applied = entry.index
        if log.applied - (r.snapshot.index if r.snapshot else 0) >= self.snapshot_count:
            self.take_snapshot()
        msgs, r.msgs = r.msgs, []
        return msgs

    def take_snapshot(self) -> None:
        """Snapshot the store at the applied index and compact the log behind it
        (etcdserver/server.go snapshot and the compaction after it)."""
        r = self.raft
        index = r.log.applied
        term = r.log.term(index)
        assert term is not None
        image = StoreImage(self.store.revision, self.store.compact_revision,
                           tuple(self.store.versions()))
        r.snapshot = Snapshot(index, term, image)
        r.log.compact(index - self.catch_up_entries)

    def crash(self) -> None:
        self.up = False
        self.waiting.clear()
        self.results.clear()

    def restart(self) -> None:
        """Back from its disk: term, vote, log, snapshot and store survive; it rejoins as a
        follower that knows no leader (etcd replays its WAL the same way)."""
        self.up = True
        r = self.raft
        r.become_follower(r.term, None)
        r.msgs, r.read_states = [], []

    def __repr__(self) -> str:
        r = self.raft
        return (f"<Member {self.name} {r.state} term={r.term} commit={r.log.committed} "
                f"applied={r.log.applied} {'up' if self.up else 'down'}>")
