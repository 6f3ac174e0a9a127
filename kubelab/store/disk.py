"""The disk under the store: why a slow etcd makes the whole cluster slow.

A real etcd write is durable only after the raft log entry is fsynced to the write-ahead log
(etcd server/storage/wal/wal.go), and the disk does one fsync after another. Our model keeps
just that queue:

- a write applies to the in-memory state at once, in call order (readers see it immediately);
- it then occupies the disk: its commit time is max(now, disk free at) + latency, and the disk
  is busy until then, so back-to-back writes queue behind each other;
- the writer "waits" commit time - now: the store returns that as `latency` on the response
  and the API server adds it to the request's duration;
- watchers hear of a revision only at its commit time.

With latency 0 and an idle disk a write commits at once; watch delivery still happens in a later
clock callback (call_later(0)), never inside the writer's call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from kubelab.sim import Clock

__all__ = ["Disk"]


class Disk:
    """One write queue with a settable latency, reporting each committed revision."""

    def __init__(self, clock: Clock, on_commit: Callable[[int], None], committed: int) -> None:
        self._clock = clock
        self._on_commit = on_commit  # called with the newest committed revision
        self._latency = 0.0
        self._free_at = clock.now
        # Writes waiting for the disk, as (commit time, revision). Commit times never decrease,
        # so popping from the left commits revisions in order.
        self._inflight: deque[tuple[float, int]] = deque()
        self._timer_at = -1.0  # commit time of the last timer we scheduled
        self.committed = committed

    @property
    def latency(self) -> float:
        """Virtual seconds each write occupies the disk (0: an infinitely fast disk)."""
        return self._latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        if not seconds >= 0:  # also refuses NaN
            raise ValueError(f"store latency must be >= 0 seconds, got {seconds}")
        self._latency = float(seconds)

    def write(self, revision: int | None) -> float:
        """Queue one write request; returns how long its writer waits for it to be durable.

        revision is None for a write that changed nothing (a delete of nothing, a txn whose
        branch only read): it still went through the raft log and occupies the disk.
        """
        now = self._clock.now
        free_at = self._free_at
        commit_at = (now if now > free_at else free_at) + self._latency  # max(), spelled out: every write
        if commit_at <= now and not self._inflight:
            if revision is not None:
                self.committed = revision
                self._on_commit(revision)
            return 0.0
        self._free_at = commit_at
        if revision is not None:
            self._inflight.append((commit_at, revision))
            if commit_at != self._timer_at:
                self._timer_at = commit_at
                self._clock.call_at(commit_at, self._commit_due)
        return commit_at - now

    def _commit_due(self) -> None:
        now = self._clock.now
        while self._inflight and self._inflight[0][0] <= now:
            self.committed = self._inflight.popleft()[1]
        self._on_commit(self.committed)
