"""etcd as a Raft cluster, simulated on the cluster's clock: `Cluster(etcd_members=3)`.

Read in this order: messages.py (raftpb), log.py (log.go), rules.py (the vote and commit rules,
exercise 7.2), tracker.py (progress.go), read_only.py (read_only.go), raft.py (raft.go: roles,
terms, replication, ReadIndex), member.py (etcd's
raftNode and apply loop, over a kubelab Store), etcd.py (the members, their network, ticks and
faults), client.py (the API server's etcd client: the Backend), invariants.py (Raft's safety
properties, checked on the members' state).

The design, in short (docs/ARCHITECTURE.md has the long form):
- Each member is a real Raft node with its own log and its own MVCC Store as state machine;
  they exchange raftpb-shaped messages that take `delay` (1 ms) of virtual time. Heartbeats
  every 100 ms, election timeouts randomized in [1 s, 2 s) from the seeded random, CheckQuorum
  on (as etcd sets it), pre-vote off (etcd 3.5 turns it on; without it a member coming back
  from a partition forces an election with its higher term, which the course shows).
- The API server's calls are synchronous, so a request runs the network inline: its messages
  (proposal forwarding, AppendEntries, their answers, the heartbeat round of a ReadIndex) are
  delivered at once in order of virtual arrival, and the time they took is the response's
  `latency`. Without a leader or a quorum the request cannot finish and fails at once with
  "etcdserver: request timed out", carrying etcd's request timeout (7 s) as its latency; the
  API server turns that into the 500 Status a kube-apiserver returns.
- Everything else runs on the clock as messages: elections, heartbeats, a restarted or healed
  member catching up from the leader's log, or from a snapshot when the leader has compacted it.
- Watches hang on the endpoint member's store; they see what that member applies, so without
  a quorum they stop advancing but stay open, and they move with the client to another member.
- The first election runs before the cluster starts (virtual time 0), like a control plane
  that waits for a healthy etcd.

    etcd = EtcdCluster(clock, rand, trace, members=3)
    etcd.client.put("/registry/x", b"1")       # a Backend, for the API server
    etcd.status()                              # role, term, commit and applied index per member
    etcd.crash("etcd-1"); etcd.partition("etcd-2"); etcd.heal(); etcd.restart("etcd-1")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelab.store.raft.client import EtcdClient
    from kubelab.store.raft.etcd import EtcdCluster, MemberStatus
    from kubelab.store.raft.invariants import RaftChecker, check_log_matching
    from kubelab.store.raft.log import RaftLog
    from kubelab.store.raft.member import Member
    from kubelab.store.raft.messages import Entry, Message, Snapshot, VoteRequest, VoterState
    from kubelab.store.raft.raft import CANDIDATE, FOLLOWER, LEADER, Raft
    from kubelab.store.raft.rules import DEFAULT_RULES, Rules

__all__ = [
    "CANDIDATE", "DEFAULT_RULES", "FOLLOWER", "LEADER", "Entry", "EtcdClient", "EtcdCluster", "Member",
    "MemberStatus", "Message", "Raft", "RaftChecker", "RaftLog", "Rules", "Snapshot", "VoteRequest",
    "VoterState", "check_log_matching",
]

# Names load on first use (PEP 562): exercise 7.2's sandbox imports messages.py alone and must
# not load rules.py, the reference the learner writes.
_WHERE = {
    "EtcdClient": "client", "EtcdCluster": "etcd", "MemberStatus": "etcd", "RaftChecker": "invariants",
    "check_log_matching": "invariants", "RaftLog": "log", "Member": "member", "Entry": "messages",
    "Message": "messages", "Snapshot": "messages", "VoteRequest": "messages", "VoterState": "messages",
    "CANDIDATE": "raft", "FOLLOWER": "raft", "LEADER": "raft", "Raft": "raft", "DEFAULT_RULES": "rules",
    "Rules": "rules",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"kubelab.store.raft.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
