"""One member's Raft state machine: roles, terms, votes, replication, ReadIndex (etcd-io/raft raft.go).

Like upstream's `raft` struct it never does I/O: `step(message)` and `tick()` change its state and
put the messages to send in `msgs`; its owner (kubelab/store/raft/member.py, the Ready loop of
etcd's raftNode) delivers them and applies what got committed. Followed closely:
- Step's term rules: a higher term makes a member a follower (unless it is a MsgVote arriving
  while the member still hears from a leader: CheckQuorum's lease); a lower term is ignored, but
  a stale leader's MsgApp or MsgHeartbeat is answered so that it learns the new term;
- tickElection / tickHeartbeat, with the election timeout drawn from [election, 2 * election)
  ticks (resetRandomizedElectionTimeout);
- CheckQuorum, on in etcd: a leader that has not heard from a quorum for an election timeout
  steps down;
- the progress of each follower (tracker.py, tracker/progress.go): match and next, probing back
  on reject with fast log backtracking: the follower's rejection carries findConflictByTerm's
  (reject_hint, log_term), and the leader skips its own entries of a higher term (stepLeader);
- ReadIndex (read_only.py, read_only.go ReadOnlySafe), only after the leader has committed an
  entry of its own term (earlier requests wait, as pendingReadIndexMessages do);
- Config.MaxSizePerMsg (`max_size_per_msg`): a MsgApp carries the entries that fit in that many
  bytes, and always at least one (log.go limitSize); 0 is upstream's "at most one entry per
  message", None (the default, etcd's members) no limit. entry_size() stands in for
  raftpb.Entry.Size().
Left out: pre-vote, learners, joint consensus, leadership transfer, flow control (inflights).
"""

from __future__ import annotations

import random

from kubelab.store.raft.log import RaftLog
from kubelab.store.raft.messages import (
    MSG_APP,
    MSG_APP_RESP,
    MSG_HEARTBEAT,
    MSG_HEARTBEAT_RESP,
    MSG_PROP,
    MSG_READ_INDEX,
    MSG_READ_INDEX_RESP,
    MSG_SNAP,
    MSG_VOTE,
    MSG_VOTE_RESP,
    Entry,
    Message,
    Snapshot,
    VoteRequest,
    VoterState,
)
from kubelab.store.raft.read_only import ReadOnly, ReadRequest
from kubelab.store.raft.rules import DEFAULT_RULES, Rules
from kubelab.store.raft.tracker import Progress

__all__ = ["CANDIDATE", "FOLLOWER", "LEADER", "Raft", "entry_size", "limit_size"]

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"
ENTRY_HEADER = 6  # bytes of an Entry's term, index and type fields on the wire (small numbers)


class Raft:
    def __init__(self, name: str, peers: list[str], rand: random.Random, *, election_tick: int = 10,
                 heartbeat_tick: int = 1, rules: Rules = DEFAULT_RULES,
                 max_size_per_msg: int | None = None) -> None:
        self.id, self.peers = name, sorted(peers)    # peers includes ourselves
        self.rand, self.rules = rand, rules
        self.max_size_per_msg = max_size_per_msg
        self.election_timeout, self.heartbeat_timeout = election_tick, heartbeat_tick
        # persistent state (etcd's HardState and log): survives a crash
        self.term = 0
        self.vote: str | None = None
        self.log = RaftLog()
        self.snapshot: Snapshot | None = None          # the newest snapshot of our state machine
        self.pending_snapshot: Snapshot | None = None  # received, for the owner to restore
        # volatile state
        self.state = FOLLOWER
        self.lead: str | None = None
        self.msgs: list[Message] = []
        self.read_states: list[tuple[int, int]] = []     # (context, read index) ready to serve
        self.reset(0)

    # ------------------------------------------------------------------ roles

    def quorum(self) -> int:
        return len(self.peers) // 2 + 1

    def reset(self, term: int) -> None:
        if term != self.term:
            self.term, self.vote = term, None
        self.lead = None
        self.election_elapsed = self.heartbeat_elapsed = 0
        self.randomized_election_timeout = self.rand.randrange(self.election_timeout,
                                                               2 * self.election_timeout)
        self.votes: dict[str, bool] = {}
        self.progress = {p: Progress(next=self.log.last_index() + 1) for p in self.peers}
        self.read_only = ReadOnly()
        self.waiting_reads: list[Message] = []           # before the leader's first commit

    def become_follower(self, term: int, lead: str | None) -> None:
        self.reset(term)
        self.state, self.lead = FOLLOWER, lead

    def become_candidate(self) -> None:
        assert self.state != LEADER, "invalid transition [leader -> candidate]"
        self.reset(self.term + 1)
        self.vote, self.state = self.id, CANDIDATE

    def become_leader(self) -> None:
        assert self.state != FOLLOWER, "invalid transition [follower -> leader]"
        self.reset(self.term)
        self.state, self.lead = LEADER, self.id
        for pr in self.progress.values():
            pr.recent_active = True
        # An empty entry of the new term: once it commits, everything before it is committed too.
        self.append_entry(None)

    def campaign(self) -> None:
        """MsgHup: become a candidate and ask every peer for its vote."""
        if self.state == LEADER:
            return
        self.become_candidate()
        self.poll(self.id, True)
        if self.state != CANDIDATE:
            return
        for p in self.peers:
            if p != self.id:
                self.send(Message(MSG_VOTE, p, self.id, self.term, log_term=self.log.last_term(),
                                  index=self.log.last_index()))

    def poll(self, frm: str, granted: bool) -> None:
        self.votes.setdefault(frm, granted)
        yes = sum(1 for v in self.votes.values() if v)
        if yes >= self.quorum():
            self.become_leader()
            self.bcast_append()  # tell everyone: the empty entry of our term
        elif len(self.votes) - yes >= self.quorum():
            self.become_follower(self.term, None)

    # ------------------------------------------------------------------ time

    def tick(self) -> None:
        if self.state == LEADER:
            self.tick_heartbeat()
        else:
            self.tick_election()

    def tick_election(self) -> None:
        self.election_elapsed += 1
        if self.election_elapsed >= self.randomized_election_timeout:
            self.election_elapsed = 0
            self.campaign()

    def tick_heartbeat(self) -> None:
        self.heartbeat_elapsed += 1
        self.election_elapsed += 1
        if self.election_elapsed >= self.election_timeout:
            self.election_elapsed = 0
            # CheckQuorum: step down unless a quorum was heard from during the last timeout.
            active = sum(1 for p, pr in self.progress.items() if p == self.id or pr.recent_active)
            for p, pr in self.progress.items():
                pr.recent_active = p == self.id
            if active < self.quorum():
                self.become_follower(self.term, None)
                return
        if self.heartbeat_elapsed >= self.heartbeat_timeout:
            self.heartbeat_elapsed = 0
            self.bcast_heartbeat(0)

    # ------------------------------------------------------------------ local requests

    def propose(self, data: object) -> bool:
        """A proposal from a client of this member; False when it is dropped (no leader known)."""
        return self._step_prop(Message(MSG_PROP, self.id, self.id, 0, entries=(Entry(0, 0, data),)))

    def read_index(self, context: int) -> bool:
        """Ask for a linearizable read; (context, index) appears in read_states when it is safe."""
        m = Message(MSG_READ_INDEX, self.id, self.id, 0, context=context)
        if self.state == LEADER:
            self._leader_read_index(m)
            return True
        if self.lead is None:
            return False
        self.send(m._replace(to=self.lead))
        return True

    # ------------------------------------------------------------------ messages

    def send(self, m: Message) -> None:
        """Queue m for the owner to deliver. MsgProp and MsgReadIndex travel with term 0: they
        are forwarded local requests (raft.go send)."""
        self.msgs.append(m)

    def step(self, m: Message) -> None:
        if m.term > self.term:
            in_lease = (m.type == MSG_VOTE and self.lead is not None
                        and self.election_elapsed < self.election_timeout)
            if in_lease:
                return  # CheckQuorum: a leader is alive, so this candidate cannot be right
            self.become_follower(m.term, m.frm if m.type in (MSG_APP, MSG_HEARTBEAT, MSG_SNAP)
                                 else None)
        elif m.term and m.term < self.term:
            if m.type in (MSG_APP, MSG_HEARTBEAT):
                self.send(Message(MSG_APP_RESP, m.frm, self.id, self.term))  # tell it our term
            return
        if m.type == MSG_VOTE:
            state = VoterState(self.term, self.vote, self.lead, self.log.last_index(),
                               self.log.last_term())
            grant = bool(self.rules.request_vote(state, VoteRequest(m.term, m.frm, m.index, m.log_term)))
            if grant:
                self.election_elapsed, self.vote = 0, m.frm
            self.send(Message(MSG_VOTE_RESP, m.frm, self.id, self.term, reject=not grant))
        elif self.state == LEADER:
            self._step_leader(m)
        elif self.state == CANDIDATE:
            self._step_candidate(m)
        else:
            self._step_follower(m)

    def _step_prop(self, m: Message) -> bool:
        if self.state == LEADER:
            for e in m.entries:
                self.append_entry(e.data)
            self.bcast_append()
            return True
        if self.state == FOLLOWER and self.lead is not None:
            self.send(m._replace(to=self.lead, frm=self.id, term=0))
            return True
        return False  # raft: "no leader at term; dropping proposal"

    def _step_leader(self, m: Message) -> None:
        if m.type == MSG_PROP:
            self._step_prop(m)
            return
        if m.type == MSG_READ_INDEX:
            self._leader_read_index(m)
            return
        pr = self.progress.get(m.frm)
        if pr is None:
            return
        if m.type == MSG_APP_RESP:
            pr.recent_active = True
            if m.reject:
                # The follower has (reject_hint, log_term). Our entries above a term of log_term
                # cannot be in its log, so probe at the last of ours with a term <= log_term: at
                # most one probe per term of our log (stepLeader). log_term 0: nothing known.
                next_probe = m.reject_hint
                if m.log_term > 0:
                    next_probe, _ = self.log.find_conflict_by_term(m.reject_hint, m.log_term)
                if pr.maybe_decr_to(m.index, next_probe):
                    self.send_append(m.frm)
            elif pr.maybe_update(m.index):
                if self.maybe_commit():
                    self.bcast_append()
                elif pr.match < self.log.last_index():
                    self.send_append(m.frm)
        elif m.type == MSG_HEARTBEAT_RESP:
            pr.recent_active = True
            if pr.match < self.log.last_index():
                self.send_append(m.frm)
            if m.context and self.read_only.recv_ack(m.frm, m.context) >= self.quorum():
                for context, request in self.read_only.advance(m.context):
                    self._answer_read(context, request)

    def _step_candidate(self, m: Message) -> None:
        if m.type in (MSG_APP, MSG_HEARTBEAT, MSG_SNAP):
            self.become_follower(m.term, m.frm)
            self._step_follower(m)
        elif m.type == MSG_VOTE_RESP:
            self.poll(m.frm, not m.reject)

    def _step_follower(self, m: Message) -> None:
        if m.type == MSG_PROP:
            self._step_prop(m)
        elif m.type in (MSG_APP, MSG_HEARTBEAT, MSG_SNAP):
            self.election_elapsed, self.lead = 0, m.frm
            if m.type == MSG_APP:
                self.handle_append_entries(m)
            elif m.type == MSG_HEARTBEAT:
                self.log.commit_to(m.commit)
                self.send(Message(MSG_HEARTBEAT_RESP, m.frm, self.id, self.term, context=m.context))
            else:
                self.handle_snapshot(m)
        elif m.type == MSG_READ_INDEX and self.lead is not None:
            self.send(m._replace(to=self.lead))
        elif m.type == MSG_READ_INDEX_RESP:
            self.read_states.append((m.context, m.index))

    # ------------------------------------------------------------------ replication

    def append_entry(self, data: object) -> None:
        entry = Entry(self.term, self.log.last_index() + 1, data)
        self.log.append(entry)
        me = self.progress[self.id]
        me.match, me.next = entry.index, entry.index + 1
        self.maybe_commit()  # a one-member cluster commits at once

    def maybe_commit(self) -> bool:
        matches = [self.progress[p].match for p in self.peers]
        terms = [self.log.term(m) for m in matches]
        new = int(self.rules.commit_index(self.term, self.log.committed, matches, terms))
        if new > self.log.committed:
            self.log.commit_to(new)
            if self.waiting_reads and self.log.term(self.log.committed) == self.term:
                waiting, self.waiting_reads = self.waiting_reads, []
                for m in waiting:
                    self._leader_read_index(m)
            return True
        return False

    def send_append(self, to: str) -> None:
        pr = self.progress[to]
        prev = pr.next - 1
        prev_term = self.log.term(prev)
        if prev_term is None or prev < self.log.snapshot_index:
            if self.snapshot is None:
                return
            self.send(Message(MSG_SNAP, to, self.id, self.term, snapshot=self.snapshot))
            pr.next = self.snapshot.index + 1  # optimistic; the MsgAppResp confirms it
            return
        entries = limit_size(self.log.slice(pr.next, self.log.last_index() + 1), self.max_size_per_msg)
        self.send(Message(MSG_APP, to, self.id, self.term, log_term=prev_term, index=prev,
                          entries=entries, commit=self.log.committed))
        if entries:
            pr.next = entries[-1].index + 1

    def bcast_append(self) -> None:
        for p in self.peers:
            if p != self.id:
                self.send_append(p)

    def bcast_heartbeat(self, context: int) -> None:
        for p in self.peers:
            if p != self.id:
                commit = min(self.progress[p].match, self.log.committed)
                self.send(Message(MSG_HEARTBEAT, p, self.id, self.term, commit=commit, context=context))

    def handle_append_entries(self, m: Message) -> None:
        if m.index < self.log.committed:
            self.send(Message(MSG_APP_RESP, m.frm, self.id, self.term, index=self.log.committed))
            return
        last_new = self.log.maybe_append(m.index, m.log_term, m.commit, m.entries)
        if last_new is None:
            # Hint the leader at the largest (index, term) where our logs may agree: no entry of
            # ours after m.index can match, nor one with a term above m.log_term (terms only
            # grow along a log), so a divergent tail is skipped in one round trip.
            hint, hint_term = self.log.find_conflict_by_term(min(m.index, self.log.last_index()),
                                                             m.log_term)
            self.send(Message(MSG_APP_RESP, m.frm, self.id, self.term, index=m.index, reject=True,
                              reject_hint=hint, log_term=hint_term))
        else:
            self.send(Message(MSG_APP_RESP, m.frm, self.id, self.term, index=last_new))

    def handle_snapshot(self, m: Message) -> None:
        snap = m.snapshot
        assert snap is not None
        if snap.index <= self.log.committed:
            self.send(Message(MSG_APP_RESP, m.frm, self.id, self.term, index=self.log.committed))
            return
        if self.log.match_term(snap.index, snap.term):  # we have it: just commit up to it
            self.log.commit_to(snap.index)
        else:
            self.log.restore(snap.index, snap.term)
            self.snapshot = self.pending_snapshot = snap  # the owner restores its state machine
        self.send(Message(MSG_APP_RESP, m.frm, self.id, self.term, index=self.log.last_index()))

    # ------------------------------------------------------------------ ReadIndex

    def _leader_read_index(self, m: Message) -> None:
        if self.log.term(self.log.committed) != self.term:
            self.waiting_reads.append(m)  # no entry of our term committed yet
            return
        if len(self.peers) == 1:
            self._answer_read(m.context, ReadRequest(self.log.committed, m.frm))
            return
        self.read_only.add_request(self.log.committed, m.context, m.frm, self.id)
        self.bcast_heartbeat(m.context)

    def _answer_read(self, context: int, request: ReadRequest) -> None:
        if request.frm == self.id:
            self.read_states.append((context, request.index))
        else:
            self.send(Message(MSG_READ_INDEX_RESP, request.frm, self.id, self.term,
                              index=request.index, context=context))


def entry_size(entry: Entry) -> int:
    """Stands in for raftpb.Entry.Size(): its term, index and type fields (ENTRY_HEADER bytes)
    and its data (bytes or text by length, anything else by its repr)."""
    if entry.data is None:
        return ENTRY_HEADER
    if isinstance(entry.data, (bytes, str)):
        return ENTRY_HEADER + len(entry.data)
    return ENTRY_HEADER + len(repr(entry.data))


def limit_size(entries: list[Entry], max_size: int | None) -> tuple[Entry, ...]:
    """The longest prefix of entries within max_size bytes, but never fewer than one entry
    (log.go limitSize); max_size None: all of them."""
    if max_size is None or not entries:
        return tuple(entries)
    size, n = entry_size(entries[0]), 1
    while n < len(entries):
        size += entry_size(entries[n])
        if size > max_size:
            break
        n += 1
    return tuple(entries[:n])
