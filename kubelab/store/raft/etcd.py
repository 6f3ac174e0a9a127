"""An etcd cluster of simulated members: the network between them, the tick, faults, and a view.

Every member ticks on the cluster's clock every heartbeat interval (etcd --heartbeat-interval,
100 ms); the election timeout (--election-timeout, 1000 ms) is 10 ticks, randomized per member in
[10, 20) from the cluster's seeded random. A message takes `delay` virtual seconds to arrive,
and is lost when its sender or receiver is down or they are on different sides of a partition
(checked on arrival, as a cable pulled mid-flight loses the packet).

A client request runs the network *inline* (run_inline): its messages are delivered at once,
in order of their virtual arrival time, until no message is left; the time they would have
taken is what the request reports as its latency. Everything else (heartbeats, elections,
catching up after a heal) travels on the clock.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from typing import NamedTuple

from kubelab.sim import Clock, LivelockError, Trace
from kubelab.store.raft.invariants import RaftChecker, check_log_matching
from kubelab.store.raft.member import Member
from kubelab.store.raft.messages import Message
from kubelab.store.raft.raft import CANDIDATE, LEADER
from kubelab.store.raft.rules import DEFAULT_RULES, Rules
from kubelab.store.txn import DEFAULT_MAX_REQUEST_BYTES

__all__ = ["EtcdCluster", "MemberStatus"]

MAX_INLINE_MESSAGES = 100_000


class MemberStatus(NamedTuple):
    name: str
    role: str              # follower, candidate or leader; "down" when crashed
    term: int
    leader: str | None     # whom it follows
    commit: int            # commit index
    applied: int           # applied index
    last_index: int
    revision: int          # its store's revision
    partitioned: bool      # cut off from the client's side of the network


class EtcdCluster:
    """etcd_members members named etcd-1, etcd-2, ... and the network between them."""

    def __init__(self, clock: Clock, rand: random.Random, trace: Trace | None = None, members: int = 3,
                 *, heartbeat: float = 0.1, election: float = 1.0, delay: float = 0.001,
                 rules: Rules = DEFAULT_RULES, snapshot_count: int = 10_000,
                 catch_up_entries: int = 5_000,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        if not 1 <= members <= 9:
            raise ValueError(f"etcd_members must be between 1 and 9, got {members}")
        if not 0 < heartbeat < election:
            raise ValueError("the heartbeat interval must be above 0 and below the election timeout")
        self.clock, self.trace, self.delay, self.heartbeat = clock, trace, delay, heartbeat
        self.rand = random.Random(rand.getrandbits(64))
        # etcd ServerConfig.ReqTimeout: how long a request waits before "request timed out"
        self.request_timeout = 5.0 + 2 * election
        names = [f"etcd-{i}" for i in range(1, members + 1)]
        tick = round(election / heartbeat)
        self.members = {n: Member(n, names, clock, self.rand, election_tick=tick, rules=rules,
                                  snapshot_count=snapshot_count, catch_up_entries=catch_up_entries,
                                  max_request_bytes=max_request_bytes) for n in names}
        self.side: dict[str, int] = dict.fromkeys(names, 0)  # partition side; the client is on 0
        self.checker = RaftChecker()
        self.timeline: list[tuple[float, str]] = []   # "etcd-2 became leader at term 3", ...
        self.messages_delivered = self.messages_dropped = 0
        self._seen = {n: (0, "follower", 0) for n in names}  # (term, role, commit) last noted
        self._inline: list[tuple[float, int, Message]] | None = None
        self._offset, self._seq = 0.0, 0
        self.on_change: list[Callable[[], None]] = []  # called after a fault or a restore
        from kubelab.store.raft.client import EtcdClient  # the client needs this module
        self.client = EtcdClient(self)
        self._bootstrap()
        self._ticks, self._start = 0, clock.now
        self._schedule_tick()

    # ------------------------------------------------------------------ the network

    def reachable(self, a: str, b: str) -> bool:
        ma, mb = self.members[a], self.members[b]
        return ma.up and mb.up and self.side[a] == self.side[b]

    def client_reachable(self, name: str) -> bool:
        return self.members[name].up and self.side[name] == 0

    def _send(self, m: Message) -> None:
        if self._inline is not None:
            self._seq += 1
            heapq.heappush(self._inline, (self._offset + self.delay, self._seq, m))
        else:
            self.clock.call_later(self.delay, lambda: self._deliver(m))

    def _deliver(self, m: Message) -> None:
        if not self.reachable(m.frm, m.to):
            self.messages_dropped += 1
            return
        self.messages_delivered += 1
        member = self.members[m.to]
        member.raft.step(m)
        self._ready(member)

    def _ready(self, member: Member) -> None:
        restored = member.restored
        for m in member.ready():
            self._send(m)
        self._note(member)
        if member.restored != restored:
            self._changed()

    def run_inline(self, start: Callable[[], None], done: Callable[[], bool]) -> float | None:
        """Run start(), then deliver every message it causes at once, in arrival order, until
        none is left; returns the virtual time at which done() first held (None: never)."""
        assert self._inline is None, "run_inline is not reentrant"
        self._inline, self._offset = [], 0.0
        finished: float | None = None
        try:
            start()
            if done():
                finished = 0.0
            for _ in range(MAX_INLINE_MESSAGES):
                if not self._inline:
                    return finished
                self._offset, _, m = heapq.heappop(self._inline)
                self._deliver(m)
                if finished is None and done():
                    finished = self._offset
            raise LivelockError(f"etcd: messages still flowing after {MAX_INLINE_MESSAGES}")
        finally:
            self._inline = None

    # ------------------------------------------------------------------ time

    def _schedule_tick(self) -> None:
        # tick n falls at start + n * heartbeat, rounded, so the times do not drift
        self._ticks += 1
        self.clock.call_at(round(self._start + self._ticks * self.heartbeat, 9), self._tick)

    def _tick(self) -> None:
        for member in self.members.values():
            if member.up:
                member.raft.tick()
                self._ready(member)
        self._schedule_tick()

    def _bootstrap(self) -> None:
        """The first election, before the API server starts (as kubeadm waits for a healthy etcd):
        the members tick until one of them leads and has committed its first entry. The ticks
        run inline, so the cluster starts at virtual time 0 with a leader."""
        def tick_all() -> None:
            for member in self.members.values():
                member.raft.tick()
                self._ready(member)
        for _ in range(100 * len(self.members)):
            self.run_inline(tick_all, lambda: False)
            leader = self.leader
            if leader is not None and self.members[leader].raft.log.committed > 0:
                return
        raise RuntimeError("etcd: no leader elected at bootstrap")

    def _note(self, member: Member) -> None:
        """Record role changes in the timeline and the trace, and feed the invariant checker."""
        r, name = member.raft, member.name
        term, role, commit = self._seen[name]
        if (r.term, r.state) != (term, role):
            if r.state == LEADER:
                self.checker.on_leader(name, r.term, r.log)
                self._event(name, "became-leader", f"{name} became leader at term {r.term}", r.term)
            elif r.state == CANDIDATE:
                self._event(name, "campaign", f"{name} started an election at term {r.term}", r.term)
            elif role == LEADER:
                self._event(name, "lost-leadership", f"{name} stepped down at term {r.term}", r.term)
        if r.log.committed > commit:
            self.checker.on_commit(name, r.log, commit, r.log.committed)
        self._seen[name] = (r.term, r.state, r.log.committed)

    def _event(self, name: str, verb: str, text: str, term: int) -> None:
        self.timeline.append((self.clock.now, text))
        if self.trace is not None:
            self.trace.record("etcd", verb, name, term=term)

    def _changed(self) -> None:
        for fn in self.on_change:
            fn()

    # ------------------------------------------------------------------ faults

    def _member(self, name: str) -> Member:
        if name not in self.members:
            raise ValueError(f"no etcd member {name!r}; members: {', '.join(self.members)}")
        return self.members[name]

    def crash(self, name: str) -> None:
        member = self._member(name)
        if not member.up:
            raise ValueError(f"etcd member {name} is already down")
        member.crash()
        self._event(name, "crash", f"{name} crashed", member.raft.term)
        self._changed()

    def restart(self, name: str) -> None:
        member = self._member(name)
        if member.up:
            raise ValueError(f"etcd member {name} is already running")
        member.restart()
        self._seen[name] = (member.raft.term, member.raft.state, member.raft.log.committed)
        self._event(name, "restart", f"{name} restarted", member.raft.term)
        self._changed()

    def partition(self, *names: str) -> None:
        """Cut these members off from the others and from the client (they still reach each other)."""
        if not names:
            raise ValueError("name at least one etcd member to partition")
        for n in names:
            self._member(n)
        side = max(self.side.values()) + 1
        for n in names:
            self.side[n] = side
        self._event(",".join(names), "partition", f"{', '.join(names)} partitioned away", 0)
        self._changed()

    def heal(self) -> None:
        self.side = dict.fromkeys(self.members, 0)
        self._event("", "heal", "network healed", 0)
        self._changed()

    def set_rules(self, rules: Rules) -> None:
        """Every member votes and commits by these rules from now on (exercise 7.2 plugs a
        learner's in; kubelab/store/raft/rules.py has the reference)."""
        for member in self.members.values():
            member.raft.rules = rules

    # ------------------------------------------------------------------ what a view shows

    @property
    def leader(self) -> str | None:
        """The running leader of the highest term, if any (a stale one may still think it leads)."""
        leaders = [m for m in self.members.values() if m.up and m.raft.state == LEADER]
        return max(leaders, key=lambda m: m.raft.term).name if leaders else None

    def has_quorum(self) -> bool:
        """Can the client's side of the network elect a leader and commit?"""
        reachable = sum(1 for n in self.members if self.client_reachable(n))
        return reachable >= len(self.members) // 2 + 1

    def status(self) -> list[MemberStatus]:
        rows = []
        for name, m in self.members.items():
            r = m.raft
            rows.append(MemberStatus(name, r.state if m.up else "down", r.term, r.lead,
                                     r.log.committed, r.log.applied, r.log.last_index(),
                                     m.store.revision, self.side[name] != 0))
        return rows

    def violations(self) -> list[str]:
        """Every Raft invariant broken so far (empty: all held)."""
        logs = {n: m.raft.log for n, m in self.members.items()}
        return self.checker.violations + check_log_matching(logs)

    def __repr__(self) -> str:
        return f"<EtcdCluster members={len(self.members)} leader={self.leader}>"
