"""Checks for notebook 07's exercises: try_acquire_or_renew on a Lease (7.1), Raft's vote and
commit rules (7.2).

7.1: the learner's function is the one attempt of kubelab's own LeaderElector
(kubelab.client.leaderelection), whose loops (acquire with jittered RetryPeriod, renew until
RenewDeadline, the callbacks) stay kubelab's. Candidates race for one Lease in kube-system of a
simulated cluster; the checks read the Lease as the API server has it, and who started and
stopped leading when. Safety: never two candidates leading at one virtual instant. Liveness: a
new leader after the holder dies, no sooner than its lease allows and no later than
LeaseDuration + 2 x RetryPeriod x (1 + JitterFactor) (a candidate may see the last renewal one
jittered RetryPeriod late, and the expiry one more late).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar

from kubelab.api.errors import ApiError
from kubelab.api.meta import micro_time
from kubelab.client.leaderelection.leaderelection import (
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
)
from kubelab.client.leaderelection.resourcelock import LeaseLock
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.grading.shared import share
from kubelab.store.raft import rules as reference_rules
from kubelab.store.raft.invariants import RaftChecker, check_log_matching
from kubelab.store.raft.messages import Message, VoteRequest, VoterState
from kubelab.store.raft.raft import LEADER, Raft

__all__: list[str] = []

# 7.2: the learner's RaftRules runs in every member of a simulated etcd (c.etcd.set_rules). Two
# table checks after raft_test.go, each followed by seeded cases whose answers come from running
# kubelab's own rules (so a submission cannot answer from a copy of the tables), then the fault
# search: the Raft paper's figure 8 played message by message on five of kubelab's Raft members
# (with one entry per MsgApp, as etcd's MaxSizePerMsg allows, a majority can hold an older term's
# entry without the new leader's empty entry), then seeded fault schedules on a simulated etcd
# searched by increasing length, checked against Raft's invariants
# (kubelab/store/raft/invariants.py) and lost writes.

share(LeaderElector, ("config", "clock", "observed_raw_record", "observed_time",
                      "get_observed_record", "set_observed_record", "is_leader",
                      "is_lease_valid", "get_leader"))
share(LeaderElectionConfig, ("lock", "lease_duration", "renew_deadline", "retry_period"))
share(LeaseLock, ("get", "create", "update", "identity", "describe"))

NAMESPACE, NAME = "kube-system", "kube-scheduler"
LEASE, RENEW, RETRY = 15.0, 10.0, 2.0
LATEST = LEASE + 2 * RETRY * (1 + JITTER_FACTOR)


class CountingLock(LeaseLock):
    """The Lease lock, counting what the learner sends through it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[str] = []

    def get(self) -> Any:
        self.calls.append("get")
        return super().get()

    def create(self, record: Any) -> None:
        self.calls.append("create")
        super().create(record)

    def update(self, record: Any) -> None:
        self.calls.append("update")
        super().update(record)


class Timeline:
    """Who leads, from on_started_leading until on_stopped_leading or a crash."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.leading: dict[str, float] = {}
        self.overlaps: list[str] = []
        self.starts: list[tuple[float, str]] = []

    def started(self, who: str) -> None:
        others = sorted(o for o in self.leading if o != who)
        if others:
            self.overlaps.append(f"at t={self.clock.now:.2f}s {who} started leading while "
                                 f"{', '.join(others)} still led")
        self.leading[who] = self.clock.now
        self.starts.append((self.clock.now, who))

    def stopped(self, who: str) -> None:
        self.leading.pop(who, None)


class LearnerElector(LeaderElector):
    def __init__(self, learner: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._learner = learner

    def try_acquire_or_renew(self) -> bool:
        return bool(self._learner(self))


def candidate(ctx: CheckContext, c: Any, who: str, timeline: Timeline | None = None) -> LearnerElector:
    """A candidate as kube-scheduler builds one: its own client, a lock whose client times out
    after RenewDeadline / 2."""
    client = c.client_for(f"candidate-{who}", ["system:masters"])
    lock = CountingLock(client, NAMESPACE, NAME, who, timeout=RENEW / 2)
    t = timeline
    callbacks = LeaderCallbacks(lambda: t.started(who) if t else None,
                                lambda: t.stopped(who) if t else None)
    config = LeaderElectionConfig(lock, callbacks, LEASE, RENEW, RETRY, name=f"candidate-{who}")
    return LearnerElector(ctx.learner, config, c.clock, random.Random(f"{ctx.seed}-{who}"),
                          trace=c.trace)


def lease_spec(c: Any) -> dict[str, Any]:
    return dict(c.get("leases", NAME, namespace=NAMESPACE).get("spec") or {})


def _cluster(ctx: CheckContext) -> Any:
    return ctx.cluster(nodes=0, components=[])


@check("7.1", points=2, hint="No Lease: create one holding it. A released Lease (holderIdentity "
       "empty) is free at once: take it over with leaderTransitions + 1.")
def acquires_a_free_lease(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    c.run(3)
    a = candidate(ctx, c, "a")
    ctx.expect_equal(a.try_acquire_or_renew(), True, "try_acquire_or_renew with no Lease yet",
                     unit="returned")
    spec = lease_spec(c)
    now = micro_time(c.clock.now)
    ctx.expect_equal(spec, {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": now,
                            "renewTime": now, "leaseTransitions": 0},
                     "the Lease created by the first candidate", unit="spec =")
    c.run(5)
    lease = c.get("leases", NAME, namespace=NAMESPACE)  # a's release: what release() writes
    lease["spec"] = {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}
    c.client.update(lease)
    c.run(1)
    b = candidate(ctx, c, "b")
    ctx.expect_equal(b.try_acquire_or_renew(), True, "a candidate finding a released Lease "
                     "(holderIdentity empty)", unit="returned")
    spec = lease_spec(c)
    ctx.expect_equal((spec.get("holderIdentity"), spec.get("leaseTransitions")), ("b", 1),
                     "who holds the released Lease after the new candidate's attempt",
                     unit="(holderIdentity, leaseTransitions) =")


@check("7.1", points=2, hint="The leader renews with one update of what it last wrote (the fast "
       "path); if that fails (409, 404) it gets the Lease and tries again, and creates it if gone.")
def renews_its_own_lease(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    a = candidate(ctx, c, "a")
    lock = a.config.lock
    assert isinstance(lock, CountingLock)
    a.try_acquire_or_renew()
    acquired = micro_time(c.clock.now)
    c.run(2)
    lock.calls.clear()
    ctx.expect_equal(a.try_acquire_or_renew(), True, "the holder renewing its valid lease",
                     unit="returned")
    ctx.expect_equal(lock.calls, ["update"], "the requests of a renewal while the lease is valid",
                     unit="lock calls")
    spec = lease_spec(c)
    ctx.expect_equal((spec["acquireTime"], spec["renewTime"], spec["leaseTransitions"]),
                     (acquired, micro_time(c.clock.now), 0),
                     "a renewal moves renewTime only", unit="(acquireTime, renewTime, leaseTransitions) =")
    lease = c.get("leases", NAME, namespace=NAMESPACE)
    lease["metadata"]["labels"] = {"touched": "by-an-admin"}  # a new resourceVersion: 409 next
    c.client.update(lease)
    c.run(2)
    ctx.expect_equal(a.try_acquire_or_renew(), True, "renewing after someone else updated the "
                     "Lease (the fast path's update gets 409 Conflict)", unit="returned")
    c.client.delete("leases", NAME, NAMESPACE)
    c.run(2)
    ctx.expect_equal(a.try_acquire_or_renew(), True, "renewing after the Lease was deleted",
                     unit="returned")
    ctx.expect_equal(lease_spec(c).get("holderIdentity"), "a", "who holds the Lease now",
                     unit="holderIdentity =")


@check("7.1", points=2, hint="Expiry is judged by the local time at which you last saw the record "
       "change (le.is_lease_valid), never by renewTime, which another machine's clock wrote.")
def waits_out_a_held_lease_by_its_own_clock(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    holder = c.client_for("other-holder", ["system:masters"])
    c.run(60)
    base = c.clock.now
    future = micro_time(c.clock.now + 3600)  # the holder's clock runs an hour ahead
    holder.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                   "metadata": {"name": NAME, "namespace": NAMESPACE},
                   "spec": {"holderIdentity": "x", "leaseDurationSeconds": 15, "acquireTime": future,
                            "renewTime": future, "leaseTransitions": 3}})
    b = candidate(ctx, c, "b")
    answers = []
    for at, renew in ((0, False), (5, True), (6, False), (16, False), (22, False)):
        c.run(base + at - c.clock.now)
        if renew:  # x renews: its (skewed) renewTime changes
            lease = holder.get("leases", NAME, NAMESPACE)
            lease["spec"]["renewTime"] = micro_time(c.clock.now + 3600)
            holder.update(lease)
        else:
            answers.append(bool(b.try_acquire_or_renew()))
    ctx.expect_equal(answers, [False, False, False, True],
                     "attempts at t=0, 6, 16 and 22 s on a Lease that x last renewed at t=5 "
                     "(seen changed at 6: expires for this candidate at 21)", unit="returned")
    spec = lease_spec(c)
    ctx.expect_equal((spec["holderIdentity"], spec["leaseTransitions"]), ("b", 4),
                     "the Lease after the takeover", unit="(holderIdentity, leaseTransitions) =")


def _chaos(ctx: CheckContext, c: Any, timeline: Timeline, rand: random.Random) -> dict[str, Any]:
    """Three candidates; crashes and restarts, conflicting writers and a slow API server."""
    live: dict[str, LearnerElector] = {}
    serial = {"n": 0}

    def start() -> None:
        serial["n"] += 1
        who = f"c{serial['n']}"
        live[who] = candidate(ctx, c, who, timeline)
        live[who].run()

    def crash() -> None:
        if live:
            who = rand.choice(sorted(live))
            live.pop(who).stop()
            timeline.stopped(who)  # the process is gone: it acts no more

    def touch() -> None:
        try:
            lease = c.client.get("leases", NAME, NAMESPACE)
        except Exception:
            return
        lease["metadata"]["labels"] = {"touched": str(c.clock.now)}
        c.client.update(lease)

    for _ in range(3):
        start()
    for _ in range(40):
        c.run(rand.uniform(1.0, 9.0))
        roll = rand.random()
        if roll < 0.25:
            crash()
        elif roll < 0.45 or len(live) < 2:
            start()
        elif roll < 0.7:
            touch()
        else:  # the API server answers late (7 s: past the candidates' 5 s timeout)
            c.faults.slow_apiserver(rand.choice([0.0, 0.0, 3.0, 7.0]))
    c.faults.slow_apiserver(0)
    while len(live) < 3:  # heal: three candidates again
        start()
    return live


@check("7.1", points=2, seeds=(1, 2, 3), hint="Only one update can win (the Lease's "
       "resourceVersion decides); a lease held by another is off limits until LeaseDuration has "
       "passed since you last saw it change.")
def one_leader_at_a_time(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    timeline = Timeline(c.clock)
    live = _chaos(ctx, c, timeline, random.Random(ctx.seed))
    if timeline.overlaps:
        ctx.fail("two candidates led at the same time", expected="at most one leader at any instant",
                 got="; ".join(timeline.overlaps[:3]))
    c.run(LATEST + RENEW)
    leaders = sorted(who for who in timeline.leading if who in live)
    ctx.expect_equal(len(leaders), 1, "leaders once the faults healed (three candidates alive)",
                     unit="leader(s)")


@check("7.1", points=2, seeds=(1, 2), hint="An expired lease must be taken over: held by someone "
       "else, unchanged for LeaseDuration since you saw it change, is free.")
def a_new_leader_after_the_holder_dies(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    timeline = Timeline(c.clock)
    rand = random.Random(ctx.seed)
    electors = {who: candidate(ctx, c, who, timeline) for who in ("a", "b")}
    for elector in electors.values():
        elector.run()
    c.run(20 + rand.uniform(0, 10))
    if len(timeline.leading) != 1:
        ctx.fail("one of two candidates should lead after 20 s", expected="1 leader",
                 got=f"{len(timeline.leading)} leader(s)")
    dead = next(iter(timeline.leading))
    electors[dead].stop()
    timeline.stopped(dead)
    crashed = c.clock.now
    c.run(LATEST + 1)
    later = [(at - crashed, who) for at, who in timeline.starts if at > crashed]
    if not later:
        ctx.fail(f"nobody took over within {LATEST:g} s of the leader's crash",
                 expected=f"a new leader within LeaseDuration + 2 x RetryPeriod x (1 + JitterFactor) "
                 f"= {LATEST:g} s",
                 got="no new leader")
    took, _who = later[0]
    if not LEASE - RETRY <= took <= LATEST:
        ctx.fail("the takeover time after the leader crashed", expected=f"between {LEASE - RETRY:g} "
                 f"and {LATEST:g} s", got=f"{took:.2f} s")


# ---------------------------------------------------------------- 7.2 RaftRules

# raft_test.go TestRecvMsgVote, on a voter at term 4 whose log ends at index 2, term 2:
# (voted_for, leader, candidate's last index, candidate's last term) -> grant?
VOTE_CASES = [
    (None, None, 0, 0, False), (None, None, 0, 3, True), (None, None, 1, 2, False),
    (None, None, 1, 3, True), (None, None, 2, 1, False), (None, None, 2, 2, True),
    (None, None, 3, 1, False), (None, None, 3, 2, True), (None, None, 3, 3, True),
    ("etcd-2", None, 3, 3, True), ("etcd-3", None, 3, 3, False), (None, "etcd-1", 3, 3, False),
    ("etcd-2", None, 1, 1, False),
]

# raft_test.go TestCommit: (match indexes, the leader's log terms, current term, committed) -> commit
COMMIT_CASES = [
    ([1], [1], 1, 0, 1), ([1], [1], 2, 0, 0), ([2], [1, 2], 2, 0, 2), ([1], [2], 2, 0, 1),
    ([2, 1, 1], [1, 2], 1, 0, 1), ([2, 1, 1], [1, 1], 2, 0, 0), ([2, 1, 2], [1, 2], 2, 0, 2),
    ([2, 1, 2], [1, 1], 2, 0, 0), ([2, 1, 1, 1], [1, 2], 1, 0, 1), ([2, 1, 1, 2], [1, 2], 1, 0, 1),
    ([2, 1, 2, 2], [1, 2], 2, 0, 2), ([3, 3, 1, 1, 1], [1, 2, 2], 3, 1, 1),   # figure 8: wait
    ([3, 3, 3, 1, 1], [1, 2, 3], 3, 1, 3), ([4, 3, 3, 2, 2], [1, 2, 3, 4], 4, 3, 3),
    ([5, 5, 1], [1, 1, 1, 1, 1], 1, 5, 5),
]


@check("7.2", points=3, hint="Vote only if you have not voted for someone else this term (and "
       "follow no leader), and only for a log at least as up to date as yours: a higher last "
       "term, or the same last term and a last index at least as high.")
def votes_like_raft(ctx: CheckContext) -> None:
    rules = ctx.learner()
    for voted_for, leader, index, log_term, want in VOTE_CASES:
        state = VoterState(4, voted_for, leader, 2, 2)
        request = VoteRequest(4, "etcd-2", index, log_term)
        got = bool(rules.request_vote(state, request))
        if got != want:
            ctx.fail(f"request_vote({state}, {request})", expected=f"grant = {want}", got=f"grant = {got}")
    rand = random.Random(ctx.seed)  # then seeded cases, answered by running kubelab's own rule
    for _ in range(60):
        term, last_term = rand.randint(2, 6), rand.randint(0, 5)
        state = VoterState(term, rand.choice([None, None, "etcd-2", "etcd-3"]),
                           rand.choice([None, None, None, "etcd-1"]), rand.randint(0, 6),
                           min(last_term, term - 1))
        request = VoteRequest(term, "etcd-2", rand.randint(0, 6), rand.randint(0, term))
        want = reference_rules.request_vote(state, request)
        got = bool(rules.request_vote(state, request))
        if got != want:
            ctx.fail(f"request_vote({state}, {request})", expected=f"grant = {want}", got=f"grant = {got}")


def _seeded_commit_cases(rand: random.Random, n: int) -> list[tuple[list[int], list[int], int, int, int]]:
    """Leader logs (terms never decrease along a log), match indexes and commit indexes drawn
    at random; the answer is what kubelab's own rule (kubelab/store/raft/rules.py) returns."""
    cases = []
    for _ in range(n):
        terms = sorted(rand.randint(1, 4) for _ in range(rand.randint(1, 7)))
        term = terms[-1] + rand.choice([0, 0, 1])
        members = rand.choice([1, 3, 3, 5, 5, 7])
        matches = [len(terms)] + [rand.randint(0, len(terms)) for _ in range(members - 1)]
        rand.shuffle(matches)
        committed = rand.randint(0, len(terms) - 1)
        match_terms = [terms[m - 1] if m >= 1 else None for m in matches]
        cases.append((matches, terms, term, committed,
                      reference_rules.commit_index(term, committed, matches, match_terms)))
    return cases


@check("7.2", points=3, hint="Sort the match indexes: the one in the middle (len // 2 from the top) "
       "is on a majority. Commit it only if it is above committed and its entry is of the current "
       "term (Raft paper, figure 8).")
def commits_like_raft(ctx: CheckContext) -> None:
    rules = ctx.learner()
    for matches, terms, term, committed, want in COMMIT_CASES + _seeded_commit_cases(
            random.Random(ctx.seed), 60):
        match_terms = [terms[m - 1] if 1 <= m <= len(terms) else None for m in matches]
        got = rules.commit_index(term, committed, list(matches), match_terms)
        if got != want:
            older = isinstance(got, int) and committed < got <= len(terms) and terms[got - 1] != term
            why = (f" (entry {got} is of term {terms[got - 1]}: an entry of an older term is never "
                   "committed by counting replicas)") if older else ""
            ctx.fail(f"commit_index(current_term={term}, committed={committed}, "
                     f"match_indexes={matches}, match_terms={match_terms}) (the leader's log terms: "
                     f"{terms})", expected=f"commit index = {want}", got=f"commit index = {got}{why}")


def _schedule(rand: random.Random, members: int, length: int) -> list[tuple[str, ...]]:
    """length fault steps on etcd-1..etcd-<members>, each followed by writes and a wait."""
    names = [f"etcd-{i}" for i in range(1, members + 1)]
    steps: list[tuple[str, ...]] = []
    for _ in range(length):
        kind = rand.choice(["crash", "crash", "crash", "restart", "partition", "heal"])
        if kind in ("crash", "restart"):
            steps.append((kind, rand.choice(names)))
        elif kind == "partition":
            steps.append(("partition", *sorted(rand.sample(names, rand.randint(1, members - 1)))))
        else:
            steps.append(("heal",))
        steps.append(("write", str(rand.randint(1, 4))))
        steps.append(("wait", rand.choice(["0.3", "1.5", "3"])))
    return steps


def _describe(steps: list[tuple[str, ...]]) -> str:
    words = {"crash": "crash {0}", "restart": "restart {0}", "heal": "heal the network",
             "write": "write {0} ConfigMap(s)", "wait": "wait {0} s"}
    out = [("partition " + "+".join(s[1:])) if s[0] == "partition" else words[s[0]].format(*s[1:])
           for s in steps]
    return ", ".join(out) + ", then heal and restart every member"


def _play(ctx: CheckContext, rules: Any, members: int, steps: list[tuple[str, ...]],
          done: list[tuple[str, ...]]) -> str | None:
    """Run one schedule with the learner's rules in every member; what broke, or None. done
    gets the steps that did something (a crash of a member already down does nothing)."""
    c = ctx.cluster(nodes=0, components=[], etcd_members=members)
    etcd: Any = c.etcd
    etcd.set_rules(rules)
    acked, serial = [], 0
    for step in steps:
        kind = step[0]
        if kind in ("crash", "restart") and etcd.members[step[1]].up == (kind == "restart"):
            continue
        done.append(step)
        if kind == "crash":
            c.faults.crash_etcd_member(step[1])
        elif kind == "restart":
            c.faults.restart_etcd_member(step[1])
        elif kind == "partition":
            c.faults.partition_etcd(*step[1:])
        elif kind == "heal":
            c.faults.heal_etcd()
        elif kind == "write":
            for _ in range(int(step[1])):
                serial += 1
                try:
                    c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": f"w-{serial}"}})
                except ApiError:
                    continue  # no quorum: "etcdserver: request timed out" (may still commit later)
                acked.append(f"w-{serial}")
        elif kind == "wait":
            c.run(float(step[1]))
        if etcd.violations():
            return str(etcd.violations()[0])
    c.faults.heal_etcd()
    for name, member in etcd.members.items():
        if not member.up:
            c.faults.restart_etcd_member(name)
    for _ in range(10):  # up to 10 s for a leader, and for every member to apply what it committed
        c.run(1)
        rows = etcd.status()
        if etcd.leader is not None and len({(r.commit, r.applied) for r in rows}) == 1:
            break
    if etcd.violations():
        return str(etcd.violations()[0])
    if etcd.leader is None:
        return "no leader 10 s after every member was back and the network healed"
    try:
        names = {cm["metadata"]["name"] for cm in c.get("configmaps")}
    except ApiError as err:
        return f"the API server could not list ConfigMaps after healing: {err.message}"
    lost = [n for n in acked if n not in names]
    if lost:
        return f"acknowledged write(s) lost: configmaps {', '.join(lost[:5])}"
    return None


MAX_FIGURE_8_MESSAGES = 20_000  # the schedule takes under two hundred


class _Figure8:
    """Five of kubelab's Raft members (kubelab/store/raft/raft.py) running the learner's rules,
    on a network the check drives one message at a time, as etcd-io/raft's own tests drive
    theirs. MsgApp carries one entry (MaxSizePerMsg 0), so a follower can hold an entry of an
    older term without the new leader's empty entry behind it: the state of the paper's
    figure 8. A crashed member keeps its term, vote and log (restart() clears only whom it
    follows, as etcd's WAL replay does); a message is lost when its sender or receiver is down
    or they are on different sides of the network when it arrives."""

    NAMES: ClassVar[list[str]] = [f"etcd-{i}" for i in range(1, 6)]

    def __init__(self, rules: Any, seed: int) -> None:
        self.members = {n: Raft(n, self.NAMES, random.Random(f"{seed}-{n}"), rules=rules,
                                max_size_per_msg=0) for n in self.NAMES}
        self.up = set(self.NAMES)
        self.side = dict.fromkeys(self.NAMES, 0)
        self.wire: list[Message] = []
        self.checker = RaftChecker()
        self._seen = {n: (0, "", 0) for n in self.NAMES}
        self.delivered = 0

    def partition(self, *groups: tuple[str, ...]) -> None:
        for i, group in enumerate(groups):
            for name in group:
                self.side[name] = i

    def crash(self, name: str) -> None:
        self.up.discard(name)
        self.members[name].msgs = []

    def restart(self, name: str) -> None:
        r = self.members[name]
        r.become_follower(r.term, None)
        r.msgs = []
        self.up.add(name)

    def campaign(self, name: str) -> None:
        """MsgHup until it leads (an election lost to a vote given already in that term is
        tried again in the next), delivering only until it does: its first MsgApps wait."""
        r = self.members[name]
        for _ in range(4):
            if r.state == LEADER:
                return
            r.campaign()
            self.note()
            self.deliver(until=lambda: r.state == LEADER)

    def note(self) -> None:
        for name, r in self.members.items():
            self.wire += r.msgs
            r.msgs = []
            term, role, commit = self._seen[name]
            if r.state == LEADER and (role != LEADER or term != r.term):
                self.checker.on_leader(name, r.term, r.log)
            if r.log.committed > commit:
                self.checker.on_commit(name, r.log, commit, r.log.committed)
            self._seen[name] = (r.term, r.state, r.log.committed)

    def deliver(self, until: Callable[[], bool] = lambda: False) -> None:
        """Deliver messages in the order sent until none is left or `until()` holds."""
        while self.wire and not until():
            m = self.wire.pop(0)
            if {m.frm, m.to} <= self.up and self.side[m.frm] == self.side[m.to]:
                self.delivered += 1
                if self.delivered > MAX_FIGURE_8_MESSAGES:
                    self.checker.violations.append(
                        f"the members exchanged more than {MAX_FIGURE_8_MESSAGES} messages "
                        "without settling")
                    self.wire.clear()
                    return
                self.members[m.to].step(m)
                self.note()


FIGURE_8 = ("the Raft paper's figure 8, message by message with one entry per MsgApp: etcd-1 "
            "leads term 2 and its entry 2 reaches etcd-2 only; etcd-1 crashes; etcd-5 leads term 3 "
            "(votes of etcd-3 and etcd-4), its entry 2 reaches nobody; etcd-5 crashes; etcd-1 "
            "leads term 4 and replicates its entry 2 of term 2 to etcd-3 (a majority holds it); "
            "etcd-1 crashes before its entry 3 of term 4 reaches etcd-3; etcd-5 is elected by "
            "etcd-3 and etcd-4, then heal and restart every member")


def _figure_8(rules: Any, seed: int) -> str | None:
    """The Raft paper's figure 8 on five members: (a) etcd-1 leads term 2 and its entry 2
    reaches etcd-2 only; (b) etcd-1 crashes, etcd-5 leads term 3 with etcd-3 and etcd-4 and its
    entry 2 reaches nobody; (c) etcd-5 crashes, etcd-1 is back and leads term 4 and replicates
    its entry 2 of term 2 to etcd-3: a majority holds it, but it is not of term 4, so it must
    not be committed by counting; etcd-1 crashes before its entry 3 of term 4 reaches etcd-3;
    (d) etcd-5 is back and is elected with etcd-3 and etcd-4 (its last term, 3, beats theirs).
    Had entry 2 been committed in (c), etcd-5 would now lead without it and overwrite it."""
    n = _Figure8(rules, seed)
    s1, s2, s3, s4, s5 = n.NAMES
    n.campaign(s1)                               # term 1: everyone has its empty entry 1
    n.deliver()
    for name in n.NAMES:
        n.restart(name)
    n.partition((s1, s2, s3), (s4,), (s5,))
    n.campaign(s1)                               # (a) term 2 with etcd-2 and etcd-3's votes...
    n.partition((s1, s2), (s3,), (s4,), (s5,))   # ...then only etcd-2 hears it
    n.deliver()
    n.crash(s1)                                  # (b)
    for name in (s3, s4, s5):
        n.restart(name)
    n.partition((s3, s4, s5), (s1, s2))
    n.campaign(s5)
    n.partition((s3, s4), (s5,), (s1, s2))
    n.deliver()
    n.crash(s5)                                  # (c)
    for name in (s1, s2, s3, s4):
        n.restart(name)
    n.partition((s1, s2, s3), (s4,), (s5,))
    leader = n.members[s1]
    n.campaign(s1)
    n.deliver(until=lambda: leader.progress[s3].match >= 2 and leader.progress[s2].match >= 2)
    n.crash(s1)                                  # before entry 3 reaches etcd-3
    for name in (s2, s3, s4):
        n.restart(name)
    n.restart(s5)                                # (d)
    n.partition((s3, s4, s5), (s1, s2))
    n.campaign(s5)
    n.deliver()
    for name in n.NAMES:                         # then heal and restart every member
        if name not in n.up:
            n.restart(name)
    n.partition(tuple(n.NAMES))
    for _ in range(10):                          # heartbeats: everyone catches up
        for r in n.members.values():
            if r.state == LEADER:
                r.bcast_append()
        n.note()
        n.deliver()
    broken = n.checker.violations + check_log_matching({k: r.log for k, r in n.members.items()})
    if broken:
        return broken[0]
    return None


@check("7.2", points=4, seeds=(1, 2), hint="Figure 8 first: a leader that counts replicas of an "
       "older term's entry commits what the next leader overwrites. Then the failing schedule is the "
       "shortest found: replay it in the notebook with Cluster(etcd_members=...), "
       "c.etcd.set_rules(RaftRules()) and the faults it names, and watch c.etcd.timeline.")
def keeps_raft_safe_under_faults(ctx: CheckContext) -> None:
    rules = ctx.learner()
    broken = _figure_8(rules, ctx.seed)  # the schedule every search starts with
    if broken is not None:
        ctx.fail(f"with 5 members: {FIGURE_8}", expected="Raft's invariants hold: an entry of "
                 "an older term is committed only with one of the leader's term after it",
                 got=broken)
    for length in range(1, 6):  # the shortest schedules first: the first failure is a shortest
        for attempt in range(6):
            members = 5 if attempt % 2 else 3
            rand = random.Random(f"{ctx.seed}-{length}-{attempt}")
            steps = _schedule(rand, members, length)
            done: list[tuple[str, ...]] = []
            broken = _play(ctx, rules, members, steps, done)
            if broken is not None:
                ctx.fail(f"with {members} members: {_describe(done)}",
                         expected="Raft's invariants hold and every acknowledged write survives",
                         got=broken)
            ctx.clusters.clear()  # only a failing schedule's cluster goes into the report
