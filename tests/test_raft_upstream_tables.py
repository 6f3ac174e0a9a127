"""etcd-io/raft's own test tables for log replication, as data, run against kubelab's Raft:
raft_test.go TestFastLogRejection and TestHandleMsgApp, raft_paper_test.go TestFollowerCheckMsgApp
and TestLeaderSyncFollowerLog, log_test.go TestFindConflictByTerm."""

from __future__ import annotations

import random

import pytest

from kubelab.store.raft import Entry, Message, Raft, RaftLog
from kubelab.store.raft.messages import (
    MSG_APP,
    MSG_APP_RESP,
    MSG_HEARTBEAT,
    MSG_HEARTBEAT_RESP,
    MSG_VOTE_RESP,
)

PEERS = ["1", "2", "3"]


def entries(first: int, *terms: int) -> list[Entry]:
    """raft_test.go's index(first).terms(...)."""
    return [Entry(t, first + i) for i, t in enumerate(terms)]


def member(name: str, log: list[Entry], term: int, *, committed: int = 0) -> Raft:
    r = Raft(name, PEERS, random.Random(0))
    r.log.entries = list(log)
    r.log.committed = committed
    r.term = term
    return r


def read(r: Raft) -> list[Message]:
    msgs, r.msgs = r.msgs, []
    return msgs


# raft_test.go TestFastLogRejection: (leader's terms, follower's terms, follower compacted up to,
# the rejection's (log_term, reject_hint), the leader's next MsgApp's (log_term, index))
@pytest.mark.parametrize(("leader_terms", "follower_terms", "compact", "hint", "next_append"), [
    ((1, 2, 2, 4, 4, 4, 4), (1, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3), 0, (3, 7), (2, 3)),
    ((1, 2, 2, 3, 4, 4, 4, 5), (1, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3), 0, (3, 8), (3, 4)),
    ((1, 1, 1, 1), (1, 2, 2, 4), 0, (1, 1), (1, 1)),            # the follower skips its tail
    ((1, 1, 1, 1, 1, 1), (1, 2, 2, 4), 0, (1, 1), (1, 1)),      # the leader's tail is longer
    ((1, 1, 1, 1), (1, 2, 2, 4, 4, 4), 0, (1, 1), (1, 1)),      # the follower's tail is longer
    ((1, 1, 1, 4, 5), (1, 1, 1, 4), 0, (4, 4), (4, 4)),         # no conflict: the follower is behind
    ((2, 5, 5, 5, 5, 5, 5, 5, 5), (2, 4, 4, 4, 4, 4), 0, (4, 6), (2, 1)),     # stepLeader's example
    ((2, 2, 2, 2, 2), (2, 4, 4, 4, 4, 4, 4, 4), 0, (2, 1), (2, 1)),   # handleAppendEntries' example
    ((1, 1, 3), (1, 1, 3, 3, 3), 5, (0, 3), (1, 2)),            # a stale MsgApp, compacted away
])
def test_fast_log_rejection(leader_terms: tuple[int, ...], follower_terms: tuple[int, ...],
                            compact: int, hint: tuple[int, int], next_append: tuple[int, int]) -> None:
    last = entries(1, *leader_terms)[-1]
    n1 = member("1", entries(1, *leader_terms), last.term - 1, committed=last.index)
    n1.become_candidate()  # bumps the term to the last entry's
    n1.become_leader()
    read(n1)
    n2 = member("2", entries(1, *follower_terms), last.term)
    n2.vote = "1"
    if compact:  # as upstream's test: compacted although nothing is committed (cannot happen)
        n2.log.applied = compact
        n2.log.compact(compact)

    n2.step(Message(MSG_HEARTBEAT, "2", "1", n1.term))
    msgs = read(n2)
    assert [m.type for m in msgs] == [MSG_HEARTBEAT_RESP]
    n1.step(msgs[0])
    msgs = read(n1)
    assert [m.type for m in msgs] == [MSG_APP]
    n2.step(msgs[0])
    msgs = read(n2)
    assert [m.type for m in msgs] == [MSG_APP_RESP] and msgs[0].reject
    assert (msgs[0].log_term, msgs[0].reject_hint) == hint
    n1.step(msgs[0])
    msgs = read(n1)
    assert (msgs[0].log_term, msgs[0].index) == next_append


# raft_paper_test.go TestFollowerCheckMsgApp, on a log of terms [1, 2] with entry 1 committed:
# a MsgApp's (log_term, index) -> the answer's (index, reject, reject_hint, log_term)
@pytest.mark.parametrize(("log_term", "index", "want"), [
    (0, 0, (1, False, 0, 0)),           # matches a committed entry
    (1, 1, (1, False, 0, 0)),
    (2, 2, (2, False, 0, 0)),           # matches an uncommitted entry
    (1, 2, (2, True, 1, 1)),            # does not match an entry we have
    (3, 3, (3, True, 2, 2)),            # an entry we do not have
])
def test_follower_check_msg_app(log_term: int, index: int, want: tuple[int, bool, int, int]) -> None:
    r = member("1", entries(1, 1, 2), 0, committed=1)
    r.become_follower(2, "2")
    r.step(Message(MSG_APP, "1", "2", 2, log_term=log_term, index=index))
    assert read(r) == [Message(MSG_APP_RESP, "2", "1", 2, index=want[0], reject=want[1],
                               reject_hint=want[2], log_term=want[3])]


# raft_test.go TestHandleMsgApp, on a log of terms [1, 2], nothing committed:
# the MsgApp's (term, log_term, index, commit, entries as (index, term)) -> (last index, commit, reject)
@pytest.mark.parametrize(("term", "log_term", "index", "commit", "ents", "want"), [
    (2, 3, 2, 3, [], (2, 0, True)),                     # the entry before does not match
    (2, 3, 3, 3, [], (2, 0, True)),                     # the entry before is not there
    (2, 1, 1, 1, [], (2, 1, False)),
    (2, 0, 0, 1, [(1, 2)], (1, 1, False)),
    (2, 2, 2, 3, [(3, 2), (4, 2)], (4, 3, False)),
    (2, 2, 2, 4, [(3, 2)], (3, 3, False)),
    (2, 1, 1, 4, [(2, 2)], (2, 2, False)),
    (1, 1, 1, 3, [], (2, 1, False)),                    # commit up to the last new entry, 1
    (1, 1, 1, 3, [(2, 2)], (2, 2, False)),              # ... 2
    (2, 2, 2, 3, [], (2, 2, False)),
    (2, 2, 2, 4, [], (2, 2, False)),                    # commit up to the log's last index
])
def test_handle_msg_app(term: int, log_term: int, index: int, commit: int,
                        ents: list[tuple[int, int]], want: tuple[int, int, bool]) -> None:
    r = member("1", entries(1, 1, 2), 0)
    r.become_follower(2, None)
    r.handle_append_entries(Message(MSG_APP, "1", "2", term, log_term=log_term, index=index,
                                    commit=commit, entries=tuple(Entry(t, i) for i, t in ents)))
    msgs = read(r)
    assert (r.log.last_index(), r.log.committed, [m.reject for m in msgs]) == (
        want[0], want[1], [want[2]])


# raft_paper_test.go TestLeaderSyncFollowerLog (figure 7): a leader of term 9 whose log has terms
# [1 1 1 4 4 5 5 6 6 6] brings each follower's log to its own.
@pytest.mark.parametrize("follower_terms", [
    (1, 1, 1, 4, 4, 5, 5, 6, 6),
    (1, 1, 1, 4),
    (1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 6),
    (1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7, 7),
    (1, 1, 1, 4, 4, 4, 4),
    (1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3),
])
def test_leader_sync_follower_log(follower_terms: tuple[int, ...]) -> None:
    lead_log = entries(1, 1, 1, 1, 4, 4, 5, 5, 6, 6, 6)
    lead = member("1", lead_log, 8, committed=len(lead_log))
    follower = member("2", entries(1, *follower_terms), 7)
    nodes = {"1": lead, "2": follower}   # member 3 drops whatever it is sent

    def deliver() -> None:
        pending = read(lead) + read(follower)
        while pending:
            m = pending.pop(0)
            if m.to in nodes:
                nodes[m.to].step(m)
                pending += read(nodes[m.to])

    lead.campaign()
    deliver()
    lead.step(Message(MSG_VOTE_RESP, "1", "3", lead.term))  # member 3's vote wins the election
    deliver()
    assert lead.propose(None)
    deliver()
    assert ([(e.index, e.term) for e in follower.log.entries], follower.log.committed) == (
        [(e.index, e.term) for e in lead.log.entries], lead.log.committed)


# log_test.go TestFindConflictByTerm: (snapshot (index, term), terms after it, index, term, want)
@pytest.mark.parametrize(("snap", "terms", "index", "term", "want"), [
    ((0, 0), (2, 2, 5, 5, 5), 100, 2, 100),       # past the end: may match
    ((0, 0), (2, 2, 5, 5, 5), 5, 6, 5),
    ((0, 0), (2, 2, 5, 5, 5), 5, 5, 5),
    ((0, 0), (2, 2, 5, 5, 5), 5, 4, 2),
    ((0, 0), (2, 2, 5, 5, 5), 5, 2, 2),
    ((0, 0), (2, 2, 5, 5, 5), 5, 1, 0),
    ((0, 0), (2, 2, 5, 5, 5), 1, 2, 1),
    ((0, 0), (2, 2, 5, 5, 5), 1, 1, 0),
    ((0, 0), (2, 2, 5, 5, 5), 0, 0, 0),
    ((10, 3), (3, 3, 4, 4, 4), 30, 3, 30),        # past the end
    ((10, 3), (3, 3, 4, 4, 4), 14, 9, 14),
    ((10, 3), (3, 3, 4, 4, 4), 14, 4, 14),
    ((10, 3), (3, 3, 4, 4, 4), 14, 3, 12),
    ((10, 3), (3, 3, 4, 4, 4), 14, 2, 9),
    ((10, 3), (3, 3, 4, 4, 4), 11, 5, 11),
    ((10, 3), (3, 3, 4, 4, 4), 10, 5, 10),
    ((10, 3), (3, 3, 4, 4, 4), 10, 3, 10),
    ((10, 3), (3, 3, 4, 4, 4), 10, 2, 9),
    ((10, 3), (3, 3, 4, 4, 4), 9, 2, 9),          # compacted: may match
    ((10, 3), (3, 3, 4, 4, 4), 4, 2, 4),
    ((10, 3), (3, 3, 4, 4, 4), 0, 0, 0),
])
def test_find_conflict_by_term(snap: tuple[int, int], terms: tuple[int, ...], index: int, term: int,
                               want: int) -> None:
    log = RaftLog()
    log.snapshot_index, log.snapshot_term = snap
    log.entries = entries(snap[0] + 1, *terms)
    assert log.find_conflict_by_term(index, term) == (want, log.term(want) or 0)
