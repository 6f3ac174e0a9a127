"""Raft's rules, case by case, after etcd-io/raft's raft_test.go and log_test.go."""

from __future__ import annotations

import random

import pytest

from kubelab.store.raft import CANDIDATE, FOLLOWER, LEADER, Entry, Message, Raft, RaftLog
from kubelab.store.raft.messages import MSG_VOTE, MSG_VOTE_RESP, VoteRequest, VoterState
from kubelab.store.raft.rules import commit_index, request_vote


class Net:
    """raft_test.go's network: deliver every message at once, dropping those to or from a down node."""

    def __init__(self, n: int, seed: int = 0) -> None:
        names = [f"etcd-{i}" for i in range(1, n + 1)]
        self.nodes = {name: Raft(name, names, random.Random(seed + i)) for i, name in enumerate(names)}
        self.down: set[str] = set()

    def flush(self) -> None:
        pending = [m for r in self.nodes.values() for m in r.msgs]
        for r in self.nodes.values():
            r.msgs = []
        while pending:
            m = pending.pop(0)
            if m.to in self.down or m.frm in self.down:
                continue
            r = self.nodes[m.to]
            r.step(m)
            pending.extend(r.msgs)
            r.msgs = []

    def campaign(self, name: str) -> None:
        self.nodes[name].campaign()
        self.flush()


@pytest.mark.parametrize(("n", "down", "state", "term"), [
    (3, set(), LEADER, 1),
    (3, {"etcd-3"}, LEADER, 1),
    (3, {"etcd-2", "etcd-3"}, CANDIDATE, 1),
    (4, {"etcd-3", "etcd-4"}, CANDIDATE, 1),   # 2 of 4 is no majority
    (5, {"etcd-4", "etcd-5"}, LEADER, 1),
])
def test_leader_election(n: int, down: set[str], state: str, term: int) -> None:
    net = Net(n)
    net.down = down
    net.campaign("etcd-1")
    assert net.nodes["etcd-1"].state == state
    assert net.nodes["etcd-1"].term == term


def test_a_leader_appends_an_empty_entry_of_its_term_and_commits_it() -> None:
    net = Net(3)
    net.campaign("etcd-1")
    net.nodes["etcd-1"].tick_heartbeat()  # heartbeats carry the commit index to the followers
    net.flush()
    for r in net.nodes.values():
        assert r.log.last_index() == 1 and r.log.term(1) == 1 and r.log.committed == 1
        assert r.lead == "etcd-1"


def test_a_member_votes_once_per_term() -> None:
    net = Net(3)
    voter = net.nodes["etcd-3"]
    voter.step(Message(MSG_VOTE, "etcd-3", "etcd-1", 1))
    voter.step(Message(MSG_VOTE, "etcd-3", "etcd-2", 1))
    answers = [(m.to, m.reject) for m in voter.msgs if m.type == MSG_VOTE_RESP]
    assert answers == [("etcd-1", False), ("etcd-2", True)]
    assert voter.vote == "etcd-1"


# raft_test.go TestRecvMsgVote: (log last index, log last term, vote, msg index, msg log term, reject)
@pytest.mark.parametrize(("last_index", "last_term", "vote", "index", "log_term", "granted"), [
    (2, 2, None, 0, 0, False), (2, 2, None, 0, 1, False), (2, 2, None, 0, 2, False),
    (2, 2, None, 0, 3, True), (2, 2, None, 1, 0, False), (2, 2, None, 1, 1, False),
    (2, 2, None, 1, 2, False), (2, 2, None, 1, 3, True), (2, 2, None, 2, 0, False),
    (2, 2, None, 2, 1, False), (2, 2, None, 2, 2, True), (2, 2, None, 2, 3, True),
    (2, 2, None, 3, 0, False), (2, 2, None, 3, 1, False), (2, 2, None, 3, 2, True),
    (2, 2, None, 3, 3, True), (2, 2, "etcd-2", 3, 3, True), (2, 2, "etcd-3", 3, 3, False),
])
def test_request_vote_rule(last_index: int, last_term: int, vote: str | None, index: int,
                           log_term: int, granted: bool) -> None:
    state = VoterState(4, vote, None, last_index, last_term)
    assert request_vote(state, VoteRequest(4, "etcd-2", index, log_term)) is granted


def test_no_vote_while_following_a_leader_of_the_term() -> None:
    assert not request_vote(VoterState(3, None, "etcd-1", 5, 3), VoteRequest(3, "etcd-2", 9, 3))


# raft_test.go TestCommit: (match indexes, terms of the log's entries, current term, commit)
@pytest.mark.parametrize(("matches", "terms", "term", "want"), [
    ([1], [1], 1, 1), ([1], [1], 2, 0), ([2], [1, 2], 2, 2), ([1], [2], 2, 1),
    ([2, 1, 1], [1, 2], 1, 1), ([2, 1, 1], [1, 1], 2, 0), ([2, 1, 2], [1, 2], 2, 2),
    ([2, 1, 2], [1, 1], 2, 0),
    ([2, 1, 1, 1], [1, 2], 1, 1), ([2, 1, 1, 1], [1, 1], 2, 0), ([2, 1, 1, 2], [1, 2], 1, 1),
    ([2, 1, 1, 2], [1, 1], 2, 0), ([2, 1, 2, 2], [1, 2], 2, 2), ([2, 1, 2, 2], [1, 1], 2, 0),
])
def test_commit_rule(matches: list[int], terms: list[int], term: int, want: int) -> None:
    match_terms = [terms[m - 1] if 1 <= m <= len(terms) else None for m in matches]
    assert commit_index(term, 0, matches, match_terms) == want


def test_an_old_terms_entry_on_a_majority_is_not_committed_until_one_of_the_new_term_is() -> None:
    """Figure 8 of the Raft paper: counting replicas commits only entries of the current term."""
    net = Net(3)
    leader = net.nodes["etcd-1"]
    leader.term, leader.log.entries = 2, [Entry(1, 1), Entry(2, 2)]  # etcd-1 led term 2 before
    net.nodes["etcd-2"].log.entries = [Entry(1, 1), Entry(2, 2)]
    net.nodes["etcd-3"].log.entries = [Entry(1, 1)]
    net.down = {"etcd-3"}
    net.campaign("etcd-1")          # term 3: appends an empty entry 3 of term 3
    assert leader.state == LEADER and leader.term == 3
    assert leader.log.committed == 3  # entry 3 (term 3) on etcd-1 and etcd-2 commits 2 with it
    leader.progress["etcd-2"].match = 2
    leader.log.committed = 1
    assert leader.rules.commit_index(3, 1, [2, 2, 0], [2, 2, None]) == 1  # 2 is of term 2: wait


def test_a_higher_term_makes_a_leader_step_down() -> None:
    net = Net(3)
    net.campaign("etcd-1")
    net.nodes["etcd-1"].step(Message("MsgAppResp", "etcd-1", "etcd-2", 5))
    assert net.nodes["etcd-1"].state == FOLLOWER and net.nodes["etcd-1"].term == 5


def test_check_quorum_makes_an_isolated_leader_step_down() -> None:
    net = Net(3)
    net.campaign("etcd-1")
    net.down = {"etcd-2", "etcd-3"}
    leader = net.nodes["etcd-1"]
    for _ in range(2 * leader.election_timeout):
        leader.tick()
        net.flush()
    assert leader.state == FOLLOWER


def test_a_member_hearing_from_its_leader_ignores_a_disrupting_candidate() -> None:
    net = Net(3)
    net.campaign("etcd-1")
    follower = net.nodes["etcd-2"]
    follower.step(Message(MSG_VOTE, "etcd-2", "etcd-3", 7, index=9, log_term=9))
    assert follower.term == 1 and not follower.msgs


def test_read_index_needs_a_quorum_heartbeat_round() -> None:
    net = Net(3)
    net.campaign("etcd-1")
    leader = net.nodes["etcd-1"]
    net.down = {"etcd-2", "etcd-3"}
    leader.read_index(42)
    net.flush()
    assert leader.read_states == []        # it cannot know it is still the leader
    net.down = set()
    leader.read_index(43)
    net.flush()
    assert [c for c, _ in leader.read_states] == [42, 43]
    assert all(i == leader.log.committed for _, i in leader.read_states)


# log_test.go TestFindConflict
@pytest.mark.parametrize(("entries", "want"), [
    ([], 0), ([(1, 1), (2, 2), (3, 3)], 0), ([(2, 2), (3, 3)], 0), ([(3, 3)], 0),
    ([(1, 1), (2, 2), (3, 3), (4, 4), (5, 4)], 4), ([(2, 2), (3, 3), (4, 4), (5, 4)], 4),
    ([(3, 3), (4, 4), (5, 4)], 4), ([(4, 4), (5, 4)], 4),
    ([(1, 4), (2, 4)], 1), ([(2, 1), (3, 4), (4, 4)], 2), ([(3, 1), (4, 2), (5, 4), (6, 4)], 3),
])
def test_find_conflict(entries: list[tuple[int, int]], want: int) -> None:
    log = RaftLog()
    log.entries = [Entry(1, 1), Entry(2, 2), Entry(3, 3)]
    assert log.find_conflict([Entry(t, i) for i, t in entries]) == want


# log_test.go TestLogMaybeAppend, on a log of terms [1, 2, 3], committed 1
@pytest.mark.parametrize(("index", "log_term", "committed", "entries", "last_new", "commit"), [
    (3, 2, 3, [(4, 4)], None, 1),           # the entry before does not match
    (4, 3, 3, [(5, 4)], None, 1),           # we do not have it at all
    (3, 3, 3, [], 3, 3),
    (3, 3, 4, [], 3, 3),                    # commit stops at the last new entry
    (3, 3, 2, [], 3, 2),
    (3, 3, 0, [], 3, 1),                    # commit never goes back
    (3, 3, 3, [(4, 4)], 4, 3),
    (3, 3, 4, [(4, 4)], 4, 4),
    (3, 3, 5, [(4, 4), (5, 4)], 5, 5),
    (2, 2, 3, [(3, 4)], 3, 3),              # a conflict: entry 3 is cut and replaced
    (1, 1, 3, [(2, 4)], 2, 2),
    (2, 2, 3, [(3, 3), (4, 4)], 4, 3),      # what agrees is kept
])
def test_maybe_append(index: int, log_term: int, committed: int, entries: list[tuple[int, int]],
                      last_new: int | None, commit: int) -> None:
    log = RaftLog()
    log.entries = [Entry(1, 1), Entry(2, 2), Entry(3, 3)]
    log.committed = 1
    new = [Entry(t, i) for i, t in entries]
    assert log.maybe_append(index, log_term, committed, new) == last_new
    assert log.committed == commit
    if last_new is not None and new:
        assert log.slice(new[0].index, last_new + 1) == new


def test_a_conflict_with_a_committed_entry_is_refused() -> None:
    log = RaftLog()
    log.entries = [Entry(1, 1), Entry(2, 2), Entry(3, 3)]
    log.committed = 2
    with pytest.raises(AssertionError, match="conflicts with committed"):
        log.maybe_append(1, 1, 3, [Entry(4, 2)])


def test_a_rejected_append_probes_back_until_the_logs_match() -> None:
    net = Net(3)
    leader, lagging = net.nodes["etcd-1"], net.nodes["etcd-3"]
    lagging.log.entries = [Entry(1, 1), Entry(1, 2), Entry(1, 3), Entry(1, 4)]   # stale term-1 tail
    leader.term = 1
    leader.log.entries = [Entry(1, 1), Entry(2, 2), Entry(2, 3)]
    net.nodes["etcd-2"].log.entries = list(leader.log.entries)
    net.nodes["etcd-2"].term = 2
    leader.term = 2
    net.campaign("etcd-1")
    leader.tick_heartbeat()
    net.flush()
    assert leader.state == LEADER
    assert [(e.index, e.term) for e in lagging.log.entries] == [(1, 1), (2, 2), (3, 2), (4, 3)]


def test_the_checker_sees_two_leaders_in_a_term_and_diverging_logs() -> None:
    from kubelab.store.raft import RaftChecker, check_log_matching

    checker, log = RaftChecker(), RaftLog()
    checker.on_leader("etcd-1", 3, log)
    checker.on_leader("etcd-2", 3, log)
    assert checker.violations == ["election safety: etcd-1 and etcd-2 were both leader of term 3"]
    a, b = RaftLog(), RaftLog()
    a.entries = [Entry(1, 1, "x"), Entry(2, 2)]
    b.entries = [Entry(1, 1, "y"), Entry(2, 2)]
    assert check_log_matching({"etcd-1": a, "etcd-2": b}) == [
        "log matching: etcd-1 and etcd-2 agree on entry 2 but differ at 1"]
    a.committed, b.committed = 1, 1
    checker.on_commit("etcd-1", a, 0, 1)
    checker.on_leader("etcd-3", 4, RaftLog())
    assert checker.violations[-1] == ("leader completeness: etcd-3 became leader of term 4 without "
                                      "the committed entry 1 (term 1)")


def test_a_follower_forwards_a_proposal_to_its_leader() -> None:
    net = Net(3)
    net.campaign("etcd-1")
    follower = net.nodes["etcd-2"]
    assert follower.propose("hello")
    assert [(m.type, m.to) for m in follower.msgs] == [("MsgProp", "etcd-1")]
    net.flush()
    assert net.nodes["etcd-1"].log.entry(2).data == "hello"
    assert not Net(3).nodes["etcd-3"].propose("nobody leads")  # dropped: no leader known


def test_a_member_far_behind_catches_up_from_a_snapshot() -> None:
    from kubelab.sim import Clock
    from kubelab.store.raft import EtcdCluster

    clock = Clock()
    etcd = EtcdCluster(clock, random.Random(4), snapshot_count=10, catch_up_entries=3)
    lagging = next(n for n in etcd.members if n != etcd.leader and n != etcd.client.endpoint)
    etcd.crash(lagging)
    for i in range(40):
        etcd.client.put(f"/registry/k/{i}", b"v")
    leader = etcd.members[etcd.leader or ""]
    assert leader.raft.log.snapshot_index > 1     # the entries the lagging member needs are gone
    etcd.restart(lagging)
    clock.run(until=clock.now + 2)
    member = etcd.members[lagging]
    assert member.restored == 1
    assert member.store.range("", "\0").kvs == leader.store.range("", "\0").kvs
    assert member.raft.log.applied == leader.raft.log.applied


def test_a_member_briefly_away_catches_up_from_the_log() -> None:
    from kubelab.sim import Clock
    from kubelab.store.raft import EtcdCluster

    clock = Clock()
    etcd = EtcdCluster(clock, random.Random(4))
    lagging = next(n for n in etcd.members if n != etcd.leader and n != etcd.client.endpoint)
    etcd.partition(lagging)
    for i in range(5):
        etcd.client.put(f"/registry/k/{i}", b"v")
    etcd.heal()
    clock.run(until=clock.now + 1)
    member = etcd.members[lagging]
    assert member.restored == 0 and member.store.revision == 6


@pytest.mark.parametrize(("max_size", "sizes"), [
    (None, [3]),                # no limit: everything from next in one MsgApp
    (0, [1, 1, 1]),             # upstream's "0: at most one entry per message"
    (2 * (6 + 5), [2, 1]),      # two entries of a 6-byte header and 5 bytes of data fit
    (6 + 3, [1, 1, 1]),         # an entry larger than the limit still goes, alone
])
def test_max_size_per_msg_limits_the_entries_of_a_msgapp(max_size: int | None, sizes: list[int]) -> None:
    # raft_test.go TestMsgAppFlowControl* and log.go limitSize: never fewer than one entry
    names = ["etcd-1", "etcd-2"]
    leader = Raft("etcd-1", names, random.Random(0), max_size_per_msg=max_size)
    leader.campaign()
    leader.step(Message(MSG_VOTE_RESP, "etcd-1", "etcd-2", leader.term))
    assert leader.state == LEADER
    for data in (b"aaaaa", b"bbbbb", b"ccccc"):
        leader.append_entry(data)
    leader.msgs = []  # (the MsgApp of the empty entry went when it became leader)
    sent = []
    while leader.progress["etcd-2"].next <= leader.log.last_index():
        leader.send_append("etcd-2")
        sent.append(len(leader.msgs.pop().entries))
    assert sent == sizes and sum(sent) == 3
