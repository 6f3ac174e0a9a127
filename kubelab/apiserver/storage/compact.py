"""The API server's compactor: it compacts etcd every 5 minutes, to the revision of 5 minutes ago.

Follows k8s.io/apiserver/pkg/storage/etcd3/compact.go (kube-apiserver
--etcd-compaction-interval, 5m by default; 0 turns it off). Several API servers share one
etcd, so they agree through one key, `compact_rev_key`, whose *version* is the logical
compaction time:

- every interval, a txn: if compact_rev_key's version equals the compaction time this server
  last saw, put the revision it saw at the previous interval there (the version goes up by one)
  and compact to that revision; else, learn the other server's time and wait another interval;
- the first successful round only remembers the revision: nothing is compacted on bootstrap.

So history stays readable for at least one interval, which is why a reflector that was away
for less than 5 minutes can resume its watch, and one that was away longer relists.

An error (a full etcd refuses the txn's put with `etcdserver: mvcc: database space exceeded`) is
logged to the trace and the loop carries on: a full etcd is not compacted by the API server, an
operator has to (etcdctl compact, defrag, alarm disarm).
"""

from __future__ import annotations

from kubelab.sim import Clock, Trace
from kubelab.sim.clock import Timer
from kubelab.store.backend import Backend
from kubelab.store.errors import StoreError
from kubelab.store.rpc import Compare, PutRequest, RangeRequest, RangeResponse

__all__ = ["COMPACT_REV_KEY", "DEFAULT_COMPACTION_INTERVAL", "Compactor"]

COMPACT_REV_KEY = "compact_rev_key"
DEFAULT_COMPACTION_INTERVAL = 300.0  # --etcd-compaction-interval=5m


class Compactor:
    """One API server's compaction loop on the clock."""

    def __init__(self, store: Backend, clock: Clock, trace: Trace | None,
                 interval: float = DEFAULT_COMPACTION_INTERVAL) -> None:
        self.store, self.clock, self.trace, self.interval = store, clock, trace, interval
        self.compact_time = 0  # the version of compact_rev_key this server last saw
        self.rev = 0           # the revision seen at the previous interval
        self._timer: Timer | None = None

    def start(self) -> None:
        """A fresh process: nothing remembered, the first round only records a revision."""
        self.compact_time, self.rev = 0, 0
        if self.interval > 0 and self._timer is None:
            self._timer = self.clock.call_later(self.interval, self._tick, background=True)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        self._timer = self.clock.call_later(self.interval, self._tick, background=True)
        try:
            self.compact_time, self.rev = self.compact(self.compact_time, self.rev)
        except StoreError as err:
            if self.trace is not None:  # klog: "etcd: endpoint ... compact failed"
                self.trace.record("apiserver", "compact-failed", "", error=str(err))

    def compact(self, t: int, rev: int) -> tuple[int, int]:
        """compact.go compact(): one round; returns the new (compaction time, revision)."""
        resp = self.store.txn([Compare.version(COMPACT_REV_KEY, "=", t)],
                              [PutRequest(COMPACT_REV_KEY, str(rev).encode())],
                              [RangeRequest(COMPACT_REV_KEY)])
        cur_rev = resp.revision
        if not resp.succeeded:  # another API server compacted: follow its clock
            got = resp.responses[0]
            assert isinstance(got, RangeResponse)
            return got.kvs[0].version, cur_rev
        if rev == 0:  # "We don't compact on bootstrap."
            return t + 1, cur_rev
        self.store.compact(rev)  # an error (already compacted past rev) is logged by _tick
        return t + 1, cur_rev
