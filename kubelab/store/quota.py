"""etcd's space quota, its NOSPACE alarm, and defragmentation.

etcd refuses to grow its database past `--quota-backend-bytes` (2 GiB by default; 0 means the
default, a negative value turns the quota off). The pieces, as upstream has them:

- server/etcdserver/quota.go (3.4; server/storage/quota.go in 3.5+): a put costs
  kvOverhead (256) + len(key) + len(value); a txn costs the bigger of its success and failure
  branches' puts; deletes and reads cost nothing and always pass. A request fits while
  `backend size + cost < quota`.
- api/v3rpc/quota.go quotaAlarmer.check: a request that does not fit raises the NOSPACE alarm
  and fails with `etcdserver: mvcc: database space exceeded`.
- server/etcdserver/apply.go applierV3Capped (3.4+): while the NOSPACE alarm is active every put
  and every txn with a put fails with the same error, even once space is free again, until an
  operator runs `etcdctl alarm disarm`.
- server/etcdserver/api/v3alarm: the alarm list (`etcdctl alarm list`, `alarm disarm`).

The size model (documented, rough, as the issue asks): the database holds every revision the
key index still keeps, tombstones included, each costing kvOverhead + key + value. That is the
space *in use*. The database *file* (bbolt's Size(), what the quota judges) only grows: a write
reuses pages freed by compaction, but compaction never shrinks the file; defragmentation
rewrites it to the space in use (etcd maintenance Defragment). So a full etcd needs all three
steps, as etcd's operations guide says: compact, defragment, disarm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kubelab.store.errors import StoreError
from kubelab.store.kv import KeyValue
from kubelab.store.rpc import Op, PutRequest

__all__ = ["DEFAULT_QUOTA_BYTES", "KV_OVERHEAD", "NOSPACE", "BackendQuota", "NoSpaceError"]

DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024  # quota.go DefaultQuotaBytes: 2 GiB
MAX_QUOTA_BYTES = 8 * 1024 * 1024 * 1024      # MaxQuotaBytes: larger is allowed, with a warning
KV_OVERHEAD = 256                              # quota.go kvOverhead: a key's metadata
NOSPACE = "NOSPACE"                            # etcdserverpb.AlarmType_NOSPACE


class NoSpaceError(StoreError):
    """rpctypes.ErrGRPCNoSpace: the quota is exhausted or the NOSPACE alarm is active."""

    def __init__(self) -> None:
        super().__init__("etcdserver: mvcc: database space exceeded")


def cost_put(key: str, value: bytes) -> int:
    """quota.go costPut."""
    return KV_OVERHEAD + len(key.encode()) + len(value)


def cost_txn(success: Sequence[Op], failure: Sequence[Op]) -> int:
    """quota.go costTxn: the dearer branch's puts."""
    def branch(ops: Sequence[Op]) -> int:
        return sum(cost_put(op.key, op.value) for op in ops if isinstance(op, PutRequest))
    return max(branch(success), branch(failure))


class BackendQuota:
    """The backend's size, the quota it is judged against, and the member's alarms.

    Invariants: 0 <= in_use <= size; size changes only by growing (a write that does not fit in
    the free pages) or by defragment(); alarms holds NOSPACE from the first refused request
    until alarm_disarm()."""

    def __init__(self, quota_backend_bytes: int = 0) -> None:
        # NewBackendQuota: 0 means the default; a negative value disables the quota.
        self.limit: int | None = (DEFAULT_QUOTA_BYTES if quota_backend_bytes == 0 else
                                  None if quota_backend_bytes < 0 else quota_backend_bytes)
        self.in_use = 0   # bytes of the revisions the index keeps (backend SizeInUse)
        self.size = 0     # bytes of the database file (backend Size)
        self.alarms: set[str] = set()
        self.on_alarm: Callable[[], None] | None = None  # the store records it in the trace

    def check(self, cost: int) -> None:
        """Refuse a mutating request of `cost` bytes, raising the alarm if it does not fit."""
        if cost == 0:  # no puts: deletes and reads always pass
            return
        if self.limit is not None and self.size + cost >= self.limit:
            if NOSPACE not in self.alarms:  # quotaAlarmer.check activates it, then refuses
                self.alarms.add(NOSPACE)
                if self.on_alarm is not None:
                    self.on_alarm()
            raise NoSpaceError()
        if NOSPACE in self.alarms:    # applierV3Capped: refused until disarmed
            raise NoSpaceError()

    def charge(self, cost: int) -> None:
        """A version was written: it takes free pages first, then grows the file."""
        self.in_use += cost
        if self.in_use > self.size:
            self.size = self.in_use

    def recount(self, kept: Iterable[KeyValue]) -> None:
        """After compaction: the space in use is what the index still keeps; the file stays."""
        self.in_use = sum(cost_put(kv.key, kv.value) for kv in kept)

    def defragment(self) -> int:
        """Rewrite the file to the space in use; returns the bytes given back."""
        freed, self.size = self.size - self.in_use, self.in_use
        return freed

    def disarm(self) -> None:
        self.alarms.discard(NOSPACE)
