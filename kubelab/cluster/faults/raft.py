"""Faults for an etcd Raft cluster (`Cluster(etcd_members=3)`): crash and restart a member, cut
members off the network, lose the quorum. Mixed into kubelab.cluster.faults.Faults, so each one is a
`c.faults` method, schedulable with `c.faults.at(...)` and recorded in the trace.

A partitioned member still reaches the members partitioned with it, but neither the others nor
the API server (kubelab/store/raft/etcd.py). Without a quorum on the API server's side, writes
and reads fail with "etcdserver: request timed out" and watches stop advancing; the kubelets
keep running what they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.store.raft import EtcdCluster

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["EtcdFaults"]


class EtcdFaults:
    if TYPE_CHECKING:
        _cluster: Cluster

        def _record(self, name: str, obj: str = "", **detail: Any) -> None: ...  # Faults records

    def _etcd(self) -> EtcdCluster:
        etcd = self._cluster.etcd
        if etcd is None:
            raise ValueError("this cluster runs a single store; start it with Cluster(etcd_members=3)")
        if not isinstance(etcd, EtcdCluster):
            raise ValueError("this cluster runs on real etcd processes: kill, pause and restart "
                             "them with c.etcd.kill(name), c.etcd.pause(name), c.etcd.restart(name)")
        return etcd

    def crash_etcd_member(self, member: str) -> None:
        """Stop one etcd member (e.g. "etcd-2"); its disk (log, term, vote, data) survives."""
        self._etcd().crash(member)
        self._cluster._process_died(member)  # its static pod's container (the anatomy's) dies
        self._record("crash_etcd_member", member)

    def restart_etcd_member(self, member: str) -> None:
        """Start a crashed member again: it rejoins as a follower and catches up from the leader."""
        self._etcd().restart(member)
        self._record("restart_etcd_member", member)

    def partition_etcd(self, *members: str) -> None:
        """Cut these members off from the rest of etcd and from the API server."""
        self._etcd().partition(*members)
        self._record("partition_etcd", ",".join(members))

    def heal_etcd(self) -> None:
        """Reconnect every etcd member."""
        self._etcd().heal()
        self._record("heal_etcd", "etcd")

    def crash_etcd_leader(self) -> str:
        """Crash whichever member leads now; returns its name."""
        leader = self._etcd().leader
        if leader is None:
            raise ValueError("etcd has no leader right now")
        self.crash_etcd_member(leader)
        return leader

    def lose_etcd_quorum(self) -> list[str]:
        """Crash members, the leader first, until fewer than a quorum run; returns their names."""
        etcd = self._etcd()
        running = [n for n, m in etcd.members.items() if m.up]
        leader = etcd.leader
        order = ([leader] if leader else []) + [n for n in running if n != leader]
        quorum = len(etcd.members) // 2 + 1
        crashed = order[:max(0, len(running) - quorum + 1)]
        for name in crashed:
            self.crash_etcd_member(name)
        return crashed
