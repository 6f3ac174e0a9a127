"""The faults of notebook 10: restart every API server at once, and etcd's maintenance.

Mixed into `Faults` (kubelab/cluster/faults/faults.py); recorded in the trace like every fault.

- restart_apiservers: every kube-apiserver process restarts at the same moment (an upgrade
  gone wrong, a node reboot under all of them). Each comes back with an empty watch cache, as
  upstream's cacher does: every open watch ends, and a watch from a resourceVersion older than
  the new cache's start gets 410 `too old resource version`, so every reflector relists (the
  relist storm). With one API server this is a restart of it; with replicas, of each.
- defragment / alarm_disarm: `etcdctl defrag` and `etcdctl alarm disarm`, the operator's way
  back from `etcdserver: mvcc: database space exceeded` (kubelab/store/quota.py); the third
  step, compaction, is `faults.compact`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelab.apiserver import APIServer
    from kubelab.cluster import Cluster

__all__ = ["ScaleFaults"]


class ScaleFaults:
    _cluster: Cluster

    def _record(self, name: str, obj: str = "", **detail: Any) -> None: ...

    def _apiservers(self) -> list[APIServer]:
        return list(self._cluster.apiservers)  # one, or several with replicas

    def restart_apiservers(self, down: float = 0.0) -> int:
        """Stop every API server now and start them again `down` virtual seconds later
        (0: at once). Returns how many watches were open when they went down."""
        if down < 0:
            raise ValueError(f"down must be >= 0, got {down}")
        servers = self._apiservers()
        watches = sum(len(c.open_watchers()) for s in servers for c in s.served.cachers.values())
        for server in servers:
            server.stop()
        self._record("restart_apiservers", "apiserver", servers=len(servers), down=down,
                     watches=watches)

        def start() -> None:
            for server in servers:
                server.start()

        if down == 0:
            start()
        else:
            self._cluster.clock.call_later(down, start)
        return watches

    def _maintained_store(self, what: str) -> Any:
        store = self._cluster.store
        if not hasattr(store, what):  # a Raft cluster of stores, or a real etcd
            raise ValueError(f"{type(store).__name__} has no {what}(): the quota, its alarm and "
                             "defragmentation are the embedded store's (kubelab/store/quota.py)")
        return store

    def defragment(self) -> int:
        """`etcdctl defrag`: the store's file shrinks to the space in use; returns bytes freed."""
        freed = int(self._maintained_store("defragment").defragment())
        self._record("defragment", "store", freed=freed)
        return freed

    def alarm_disarm(self) -> None:
        """`etcdctl alarm disarm`: etcd accepts writes again (if they fit the quota)."""
        self._maintained_store("alarm_disarm").alarm_disarm()
        self._record("alarm_disarm", "store")
