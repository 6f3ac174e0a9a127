"""A real etcd behind kubelab's API server: the `Backend` protocol over etcd's v3 API.

The API server stores through kubelab/store/backend.py's Backend, the slice of clientv3's KV
and Watcher that k8s.io/apiserver pkg/storage/etcd3/store.go uses. This class answers it from
a real etcd (one member or a cluster) through the gRPC-JSON gateway (kubelab/etcd/client.py):
range with revision/limit/count_only/keys_only, put, delete_range, txn with compares, compact,
and watch from a revision with prev_kv.

This is an edge, like kubelab/serve/: sockets, threads and the wall clock are allowed here and
nowhere in the simulation (an import contract in pyproject.toml keeps it so). What crosses into
the simulation does so on its thread: requests block it for the round trip, and watch events
wait in an inbox until a clock timer (every POLL_SECONDS) hands them to their callbacks. A
cluster on a real etcd therefore runs on the real-time clock (kubelab/sim/clock.py
RealTimeClock): virtual time follows the wall clock, and runs are no longer reproducible.

Responses carry latency 0: the real wait has already happened in wall time, which the
real-time clock counts.
"""

from __future__ import annotations

import queue
from collections.abc import Sequence
from typing import Any

from kubelab.etcd import wire
from kubelab.etcd.client import DEFAULT_TIMEOUT, GatewayClient
from kubelab.etcd.errors import unreachable
from kubelab.etcd.watch import EtcdWatch, Inbox
from kubelab.sim import Clock, Timer
from kubelab.store.errors import CompactedError, FutureRevisionError, InvalidArgumentError
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
from kubelab.store.txn import DEFAULT_MAX_TXN_OPS
from kubelab.store.watch import WatchCallback

__all__ = ["POLL_SECONDS", "EtcdBackend"]

POLL_SECONDS = 0.01  # how often the clock collects watch events from the reader threads


class EtcdBackend:
    """kubelab's Backend on a real etcd reached at `endpoints` (["http://127.0.0.1:2379"])."""

    def __init__(self, endpoints: list[str], clock: Clock, *, timeout: float = DEFAULT_TIMEOUT
                 ) -> None:
        self.endpoints = list(endpoints)
        self._gateway = GatewayClient(self.endpoints, timeout)
        self._inbox: Inbox = queue.SimpleQueue()
        self._watches: list[EtcdWatch] = []
        self._clock = clock
        self._compact_revision = 0
        self._gateway.revision = self._status()
        self._poller: Timer | None = clock.call_later(POLL_SECONDS, self._poll, background=True)

    def _status(self) -> int:
        """Ask for the current revision: fails at once, naming the endpoints, if none answers."""
        answer = self._gateway.call("kv/range", {"key": wire.b64("/"), "count_only": True})
        return wire.header_revision(answer)

    @property
    def revision(self) -> int:
        """The newest revision this client has been told of (a response header's revision)."""
        return self._gateway.revision

    @property
    def compact_revision(self) -> int:
        """The newest compaction this client made or was told of (etcd does not publish it)."""
        return self._compact_revision

    @property
    def latency(self) -> float:
        return 0.0

    @latency.setter
    def latency(self, seconds: float) -> None:
        raise ValueError("a real etcd's disk cannot be slowed from kubelab; slow_store needs the "
                         "embedded store (Cluster() without store=)")

    def _call(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        answer = self._gateway.call(path, body)
        revision = wire.header_revision(answer)
        if revision > self._gateway.revision:
            self._gateway.revision = revision
        return answer, revision

    # -- KV --------------------------------------------------------------------------------

    def range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              revision: int = 0, limit: int = 0, count_only: bool = False,
              keys_only: bool = False) -> RangeResponse:
        if revision < 0 or limit < 0:
            raise InvalidArgumentError("revision and limit must be >= 0")
        body = wire.range_body(key, range_end, prefix, revision, limit, count_only, keys_only)
        answer, rev = self._call("kv/range", body)
        return wire.range_response(answer, rev)

    def put(self, key: str, value: bytes, *, prev_kv: bool = False, lease: int = 0
            ) -> PutResponse:
        check_value(value)
        key_range(key, None, False)
        answer, rev = self._call("kv/put", wire.put_body(key, value, prev_kv, lease))
        prev = answer.get("prev_kv")
        return PutResponse(rev, wire.key_value(prev) if prev else None)

    def delete_range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
                     prev_kv: bool = False) -> DeleteResponse:
        answer, rev = self._call("kv/deleterange", wire.delete_body(key, range_end, prefix,
                                                                    prev_kv))
        return DeleteResponse(int(answer.get("deleted", 0)),
                              tuple(wire.key_value(kv) for kv in answer.get("prev_kvs") or ()),
                              rev)

    def txn(self, compares: Sequence[Compare] = (), success: Sequence[Op] = (),
            failure: Sequence[Op] = ()) -> TxnResponse:
        if len(success) > DEFAULT_MAX_TXN_OPS or len(failure) > DEFAULT_MAX_TXN_OPS or \
                len(compares) > DEFAULT_MAX_TXN_OPS:
            raise InvalidArgumentError("etcdserver: too many operations in txn request")
        body = {"compare": [wire.compare(c) for c in compares],
                "success": [wire.op(o) for o in success],
                "failure": [wire.op(o) for o in failure]}
        answer, rev = self._call("kv/txn", body)
        succeeded = bool(answer.get("succeeded", False))
        ops = success if succeeded else failure
        bodies = answer.get("responses") or [{} for _ in ops]
        return TxnResponse(succeeded, tuple(wire.response(o, b, rev) for o, b in
                                            zip(ops, bodies, strict=True)), rev)

    def compact(self, revision: int) -> None:
        """Forget history below revision (etcd: Compact, not physical). As the embedded store,
        refuse one at or below the last compaction, or in the future."""
        if revision <= self._compact_revision:
            raise CompactedError(self._compact_revision)
        if revision > self._gateway.revision:
            self._call("kv/range", {"key": wire.b64("/"), "count_only": True})
        if revision > self._gateway.revision:
            raise FutureRevisionError(self._gateway.revision)
        try:
            self._call("kv/compaction", {"revision": str(revision)})
        except CompactedError:  # someone else compacted further: now we know
            self._compact_revision = revision
            raise
        self._compact_revision = revision
        self._gateway.compact_revision = revision

    # -- Watch -------------------------------------------------------------------------------

    def watch(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              start_revision: int = 0, callback: WatchCallback,
              prev_kv: bool = False) -> EtcdWatch:
        """Watch from start_revision; 0 means "after the newest revision this client has seen",
        so no change made after that (by anyone) is missed."""
        if start_revision < 0:
            raise InvalidArgumentError(f"start_revision must be >= 0, got {start_revision}")
        create: dict[str, Any] = wire.range_body(key, range_end, prefix)
        create["progress_notify"] = True
        if prev_kv:
            create["prev_kv"] = True
        start = start_revision or self._gateway.revision + 1
        watch = EtcdWatch(self._gateway, self._inbox, create, callback, start, start - 1)
        if not watch.wait_created(self._gateway.timeout):
            watch.cancel()
            raise unreachable([e.removeprefix("http://") for e in self.endpoints],
                              "the watch was not created in time")
        self._watches = [w for w in self._watches if not w.canceled]
        self._watches.append(watch)
        return watch

    def _poll(self) -> None:
        """On the simulation's thread: deliver what the reader threads received, in order."""
        self._poller = self._clock.call_later(POLL_SECONDS, self._poll, background=True)
        while True:
            try:
                watch, response = self._inbox.get_nowait()
            except queue.Empty:
                return
            if not watch.stopped:
                if response.compact_revision > self._compact_revision:
                    self._compact_revision = response.compact_revision
                watch.deliver(response)

    def close(self) -> None:
        """Stop every watch and the poller, and close the connection."""
        if self._poller is not None:
            self._poller.cancel()
            self._poller = None
        for watch in self._watches:
            watch.cancel()
        self._watches.clear()
        self._gateway.close()

    def __repr__(self) -> str:
        return (f"<EtcdBackend {','.join(self.endpoints)} revision={self.revision} "
                f"watches={sum(not w.canceled for w in self._watches)}>")
