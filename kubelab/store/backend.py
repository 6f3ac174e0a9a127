"""What the API server needs from its storage: the slice of etcd's v3 KV and Watch API it uses.

Upstream's storage layer (k8s.io/apiserver/pkg/storage/etcd3/store.go) talks to etcd through
clientv3's KV and Watcher interfaces and nothing else. kubelab keeps the same seam, so the
embedded `Store`, a simulated Raft cluster of stores and a real etcd can each stand behind the
API server without it knowing which (docs/ARCHITECTURE.md section 1).

Every method answers synchronously; the virtual time a request waited is carried in the
response's `latency`, as kubelab/store/disk.py explains. A backend that cannot answer raises a
`StoreError` subclass in etcd's words (kubelab/store/errors.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubelab.store.rpc import Compare, DeleteResponse, Op, PutResponse, RangeResponse, TxnResponse
from kubelab.store.watch import WatchCallback

__all__ = ["Backend", "WatchHandle"]


class WatchHandle(Protocol):
    """One open watch (clientv3.WatchChan): cancel it, or ask whether it has been sent every
    change the backend has made to its keys."""

    def cancel(self) -> None: ...

    def caught_up(self) -> bool: ...


class Backend(Protocol):
    @property
    def revision(self) -> int:
        """The revision of the newest write."""
        ...

    @property
    def compact_revision(self) -> int:
        """Reads and watches below this revision fail with CompactedError (0: never compacted)."""
        ...

    def range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              revision: int = 0, limit: int = 0, count_only: bool = False,
              keys_only: bool = False) -> RangeResponse: ...

    def put(self, key: str, value: bytes, *, prev_kv: bool = False, lease: int = 0
            ) -> PutResponse: ...

    def delete_range(self, key: str, range_end: str | None = None, *, prefix: bool = False,
                     prev_kv: bool = False) -> DeleteResponse: ...

    def txn(self, compares: Sequence[Compare] = (), success: Sequence[Op] = (),
            failure: Sequence[Op] = ()) -> TxnResponse: ...

    def compact(self, revision: int) -> None: ...

    def watch(self, key: str, range_end: str | None = None, *, prefix: bool = False,
              start_revision: int = 0, callback: WatchCallback,
              prev_kv: bool = False) -> WatchHandle: ...
