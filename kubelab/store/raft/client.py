"""The API server's etcd client over the simulated cluster: a Backend (kubelab/store/backend.py).

Like clientv3 it talks to one member, its endpoint, and moves to the next reachable member when
that one is down or cut off (watches move with it and resume after the last revision they
delivered). The endpoint does what an etcd server does with a request:
- a write becomes a proposal (etcdserver/v3_server.go processInternalRaftRequestOnce); a follower
  forwards it to its leader as MsgProp; the caller waits until the endpoint has applied it and
  gets its own member's response;
- a read is linearizable (v3_server.go linearizableReadLoop): the endpoint asks the leader for a
  ReadIndex, the leader confirms it still leads with a heartbeat round, and the endpoint serves
  from its own store once it has applied up to that index.
The request runs the network inline (EtcdCluster.run_inline) and reports the time its messages
took as the response's `latency`, as disk.py does for the disk. A request that cannot finish
(no leader, no quorum) fails with UnavailableError "etcdserver: request timed out" and the
request timeout as its latency; a proposal may still commit later, when the quorum is back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from kubelab.store.errors import InvalidArgumentError, UnavailableError
from kubelab.store.kv import WatchResponse
from kubelab.store.raft.member import CompactOp, DeleteOp, Member, PutOp, Request, TxnOp
from kubelab.store.rpc import (
    Compare,
    DeleteResponse,
    Op,
    PutResponse,
    RangeResponse,
    TxnResponse,
    check_value,
    key_range,
)
from kubelab.store.txn import DEFAULT_MAX_TXN_OPS, check_size, check_txn
from kubelab.store.watch import WatchCallback, Watcher

if TYPE_CHECKING:
    from kubelab.store.raft.etcd import EtcdCluster

__all__ = ["EtcdClient"]

R = TypeVar("R", PutResponse, DeleteResponse, TxnResponse)


class EtcdClient:
    def __init__(self, etcd: EtcdCluster) -> None:
        self.etcd = etcd
        self.max_request_bytes = next(iter(etcd.members.values())).max_request_bytes
        self.max_txn_ops = DEFAULT_MAX_TXN_OPS
        self._current = next(iter(etcd.members.values()))
        self._ids = 0
        self._watches: list[_Watch] = []
        etcd.on_change.append(self._refresh)

    # ------------------------------------------------------------------ the endpoint

    @property
    def endpoint(self) -> str:
        return self._current.name

    def _refresh(self) -> None:
        """Move to another member if ours cannot be reached; move the watches along."""
        current = self._current
        if not self.etcd.client_reachable(current.name):
            for name, member in self.etcd.members.items():
                if self.etcd.client_reachable(name):
                    self._current = member
                    break
        self._watches = [w for w in self._watches if not w.canceled]
        for w in self._watches:
            if w.store is not self._current.store:
                w.rehome(self._current)

    def _reachable_endpoint(self) -> Member:
        self._refresh()
        if not self.etcd.client_reachable(self._current.name):
            raise UnavailableError(latency=self.etcd.request_timeout)  # nobody answers
        return self._current

    # ------------------------------------------------------------------ Backend

    @property
    def revision(self) -> int:
        return self._current.store.revision

    @property
    def compact_revision(self) -> int:
        return self._current.store.compact_revision

    @property
    def latency(self) -> float:
        """Every member's disk latency (faults.slow_store sets them all)."""
        return self._current.store.latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        for member in self.etcd.members.values():
            member.store.latency = seconds

    def range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              revision: int = 0, limit: int = 0, count_only: bool = False,
              keys_only: bool = False) -> RangeResponse:
        key_range(key, range_end, prefix)
        if revision < 0 or limit < 0:
            raise InvalidArgumentError("revision and limit must be >= 0")
        member = self._linearizable_read()
        return member.store.range(key, range_end, prefix=prefix, revision=revision, limit=limit,
                                  count_only=count_only, keys_only=keys_only)

    def put(self, key: str, value: bytes, *, prev_kv: bool = False, lease: int = 0) -> PutResponse:
        check_value(value)
        key_range(key, None, False)
        check_size(len(key.encode()) + len(value), self.max_request_bytes)
        return self._write(PutOp(key, value, prev_kv, lease), PutResponse)

    def delete_range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
                     prev_kv: bool = False) -> DeleteResponse:
        start, end = key_range(key, range_end, prefix)
        check_size(len(start.encode()) + len((end or "").encode()), self.max_request_bytes)
        return self._write(DeleteOp(start, end, prev_kv), DeleteResponse)

    def txn(self, compares: Sequence[Compare] = (), success: Sequence[Op] = (),
            failure: Sequence[Op] = ()) -> TxnResponse:
        compares, success, failure = tuple(compares), tuple(success), tuple(failure)
        check_txn(compares, success, failure, max_ops=self.max_txn_ops,
                  max_bytes=self.max_request_bytes)
        return self._write(TxnOp(compares, success, failure), TxnResponse)

    def compact(self, revision: int) -> None:
        self._propose(CompactOp(revision))

    def watch(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              start_revision: int = 0, callback: WatchCallback, prev_kv: bool = False) -> _Watch:
        start, end = key_range(key, range_end, prefix)
        if start_revision < 0:
            raise InvalidArgumentError(f"start_revision must be >= 0, got {start_revision}")
        self._refresh()
        watch = _Watch(self._current, start, end, start_revision, callback, prev_kv)
        self._watches.append(watch)
        return watch

    # ------------------------------------------------------------------ requests

    def _write(self, op: PutOp | DeleteOp | TxnOp, kind: type[R]) -> R:
        result, took = self._propose(op)
        assert isinstance(result, kind)
        return result._replace(latency=result.latency + took)

    def _propose(self, op: PutOp | DeleteOp | TxnOp | CompactOp) -> tuple[object, float]:
        member = self._reachable_endpoint()
        self._ids += 1
        rid = self._ids
        member.waiting.add(rid)
        try:
            took = self.etcd.run_inline(lambda: self._start_proposal(member, Request(rid, op)),
                                        lambda: rid in member.results)
        finally:
            member.waiting.discard(rid)
        if took is None:
            raise UnavailableError(latency=self.etcd.request_timeout)
        result = member.results.pop(rid)
        if isinstance(result, Exception):
            raise result
        return result, took + 2 * self.etcd.delay  # and the hops between the client and its member

    def _start_proposal(self, member: Member, request: Request) -> None:
        member.raft.propose(request)
        self.etcd._ready(member)

    def _linearizable_read(self) -> Member:
        member = self._reachable_endpoint()
        self._ids += 1
        ctx = self._ids
        index: list[int] = []

        def start() -> None:
            member.raft.read_index(ctx)
            self.etcd._ready(member)

        def done() -> bool:
            if not index:
                for c, i in member.raft.read_states:
                    if c == ctx:
                        index.append(i)
                        member.raft.read_states.remove((c, i))
                        break
            return bool(index) and member.raft.log.applied >= index[0]

        took = self.etcd.run_inline(start, done)
        # answers to reads that gave up earlier may have come in since: nobody waits for them
        member.raft.read_states = [(c, i) for c, i in member.raft.read_states if c > ctx]
        if took is None:
            raise UnavailableError(latency=self.etcd.request_timeout)
        return member


class _Watch:
    """A clientv3 watch that survives a change of endpoint: it resumes on the new member after
    the last revision it delivered."""

    def __init__(self, member: Member, start: str, end: str | None, start_revision: int,
                 callback: WatchCallback, prev_kv: bool) -> None:
        self.key, self.end, self.callback, self.prev_kv = start, end, callback, prev_kv
        self.next_rev = start_revision or member.store.revision + 1
        self.canceled = False
        self.store = member.store
        self.inner: Watcher = self._open(member, start_revision)

    def _open(self, member: Member, start_revision: int) -> Watcher:
        self.store = member.store
        return member.store.watch(self.key, self.end,
                                  start_revision=start_revision, callback=self._deliver,
                                  prev_kv=self.prev_kv)

    def _deliver(self, resp: WatchResponse) -> None:
        if self.canceled:
            return
        if resp.canceled:
            self.canceled = True
        if resp.events:
            self.next_rev = max(self.next_rev, resp.events[-1].kv.mod_revision + 1)
        self.next_rev = max(self.next_rev, resp.header_revision + 1)
        self.callback(resp)

    def rehome(self, member: Member) -> None:
        self.inner.cancel()
        self.inner = self._open(member, self.next_rev)

    def cancel(self) -> None:
        self.canceled = True
        self.inner.cancel()

    def caught_up(self) -> bool:
        return not self.canceled and self.inner.caught_up()
