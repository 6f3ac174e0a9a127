"""kubelab.client.leaderelection against client-go's leaderelection_test.go: the table of
TestTryAcquireOrRenew on a fake lock, NewLeaderElector's validation, and the loops on a real
simulated cluster (renewal, conflicts, takeover timing, a slow API server, release)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError, conflict, not_found
from kubelab.api.meta import micro_time
from kubelab.client.leaderelection import (
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    new_leader_elector,
)
from kubelab.client.leaderelection.resourcelock import lease_spec_to_record, record_to_lease_spec
from kubelab.sim import Clock

FUTURE, PAST = 1000 * 3600.0, -1000 * 3600.0


class FakeLock:
    """A lock whose Get answers from a script, like the fake clientset's reactors."""

    def __init__(self, lease: LeaderElectionRecord | None, identity: str = "baz") -> None:
        self.record, self._identity = lease, identity
        self.actions: list[str] = []
        self.initialized = False  # LeaseLock.lease: set by a get or a create
        self.elapsed = 0.0
        self.conflicts = 0  # the next updates that get 409

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        self.actions.append("get")
        if self.record is None:
            raise not_found("leases", "bar", "coordination.k8s.io")
        self.initialized = True
        return self.record, json.dumps(asdict(self.record), sort_keys=True).encode()

    def create(self, record: LeaderElectionRecord) -> None:
        self.actions.append("create")
        self.record, self.initialized = record, True

    def update(self, record: LeaderElectionRecord) -> None:
        if not self.initialized:
            raise ApiError(0, "", "lease not initialized, call get or create first")
        self.actions.append("update")
        if self.conflicts:
            self.conflicts -= 1
            raise conflict("leases", "bar", group="coordination.k8s.io")
        self.record = record

    def record_event(self, message: str) -> None:
        pass

    def describe(self) -> str:
        return "foo/bar"

    def identity(self) -> str:
        return self._identity


def elector(lock: Any, clock: Clock, *, observed: LeaderElectionRecord | None = None,
            observed_time: float = 0.0, lease_duration: float = 10.0,
            reported: list[str] | None = None) -> LeaderElector:
    callbacks = LeaderCallbacks(lambda: None, lambda: None,
                                (reported.append if reported is not None else None))
    le = LeaderElector(LeaderElectionConfig(lock, callbacks, lease_duration=lease_duration),
                       clock, random.Random(1))
    if observed is not None:
        le.observed_record = observed
        le.observed_raw_record = json.dumps(asdict(observed), sort_keys=True).encode()
    le.observed_time = observed_time
    return le


# name, the Lease's record (None: no Lease), observed record, observed time, wait and retry,
# expect success, transition, holder, API actions.
CASES = [
    ("acquire from no object", None, None, 0.0, 0.0, True, False, "baz", ["get", "create"]),
    ("acquire from object without a record", LeaderElectionRecord(), None, 0.0, 0.0,
     True, True, "baz", ["get", "update"]),
    ("acquire from led object with the lease duration seconds",
     LeaderElectionRecord("bing", 3), None, 0.0, 3.0, True, True, "baz", ["get", "get", "update"]),
    ("acquire from led, unacked object", LeaderElectionRecord("bing"),
     LeaderElectionRecord("bing"), PAST, 0.0, True, True, "baz", ["get", "update"]),
    ("acquire from empty led, acked object", LeaderElectionRecord(""), None, FUTURE, 0.0,
     True, True, "baz", ["get", "update"]),
    # (upstream's record has leaseDurationSeconds 0 and passes because the wall clock moves
    # between `now` and observing the record; virtual time does not, so the lease lasts 10 s)
    ("don't acquire from led, acked object", LeaderElectionRecord("bing", 10), None, FUTURE, 0.0,
     False, False, "bing", ["get"]),
    ("renew already acquired object", LeaderElectionRecord("baz"), LeaderElectionRecord("baz"),
     FUTURE, 0.0, True, False, "baz", ["get", "update"]),
]


@pytest.mark.parametrize(("name", "lease", "observed", "observed_time", "retry_after", "success",
                          "transition", "holder", "actions"), CASES, ids=[c[0] for c in CASES])
def test_try_acquire_or_renew(name: str, lease: LeaderElectionRecord | None,
                              observed: LeaderElectionRecord | None, observed_time: float,
                              retry_after: float, success: bool, transition: bool, holder: str,
                              actions: list[str]) -> None:
    clock = Clock(start=2000 * 3600.0)
    lock = FakeLock(lease)
    reported: list[str] = []
    le = elector(lock, clock, observed=observed, observed_time=clock.now + observed_time,
                 reported=reported)
    got = le.try_acquire_or_renew()
    if got != success and retry_after:
        clock.run(until=clock.now + retry_after)
        got = le.try_acquire_or_renew()
    assert got == success
    assert le.observed_record.holder_identity == holder
    assert lock.actions == actions  # the fast path of a lock never read makes no request
    assert le.observed_record.leader_transitions == (1 if transition else 0)
    le.maybe_report_transition()
    assert reported == [holder]


def test_the_leader_renews_with_one_update_and_falls_back_on_conflict() -> None:
    clock = Clock()
    lock = FakeLock(None)
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    clock.run(until=2.0)
    lock.actions.clear()
    assert le.try_acquire_or_renew() and lock.actions == ["update"]
    assert lock.record is not None and (lock.record.acquire_time, lock.record.renew_time) == (0.0, 2.0)
    lock.actions.clear()
    lock.conflicts = 1  # someone else wrote the Lease: the optimistic update gets 409
    assert le.try_acquire_or_renew() and lock.actions == ["update", "get", "update"]
    assert lock.record.leader_transitions == 0


class TimedLock(FakeLock):
    """A FakeLock noting the virtual time of each fast-path update (one per attempt)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(None)
        self.clock, self.updates_at = clock, []  # type: list[float]

    def update(self, record: LeaderElectionRecord) -> None:
        if self.actions[-1:] != ["get"]:
            self.updates_at.append(self.clock.now)
        super().update(record)


def test_a_failing_leader_retries_every_retry_period_until_renew_deadline() -> None:
    """Rounds start RetryPeriod after the last good renewal; within a failing round the
    attempts come every RetryPeriod (PollUntilContextTimeout), and the leader stops leading
    when RenewDeadline has passed since the round began, not before, with no attempt after."""
    clock = Clock()
    lock = TimedLock(clock)
    events: list[tuple[float, str]] = []
    callbacks = LeaderCallbacks(lambda: events.append((clock.now, "started")),
                                lambda: events.append((clock.now, "stopped")))
    le = new_leader_elector(LeaderElectionConfig(lock, callbacks, lease_duration=15.0,
                                                 renew_deadline=10.0, retry_period=2.0),
                            clock, random.Random(1))
    le.run()
    clock.run(until=5.0)
    assert events == [(0.0, "started")] and lock.updates_at == [0.0, 2.0, 4.0]
    lock.conflicts = 10**6  # from now on every update gets 409
    clock.run(until=40.0)
    assert lock.updates_at[3:] == [6.0, 8.0, 10.0, 12.0, 14.0]
    assert events == [(0.0, "started"), (16.0, "stopped")] and le.done


def test_release_writes_over_the_observed_record_without_reading_it_again() -> None:
    clock = Clock()
    lock = FakeLock(None)
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    clock.run(until=3.0)
    lock.actions.clear()
    assert le.release() and lock.actions == ["update"]
    assert lock.record == LeaderElectionRecord("", 1, 3.0, 3.0, 0)
    lock.actions.clear()
    assert le.release() and lock.actions == []  # no longer the leader: nothing to give up


@pytest.mark.parametrize(("overrides", "message"), [
    ({"lease_duration": 10.0}, "leaseDuration must be greater than renewDeadline"),
    ({"retry_period": 9.0}, "renewDeadline must be greater than retryPeriod*JitterFactor"),
    ({"lease_duration": 0.0, "renew_deadline": -1.0, "retry_period": -1.0},
     "leaseDuration must be greater than zero"),
    ({"lease_duration": 1.0, "renew_deadline": 0.0, "retry_period": -1.0},
     "renewDeadline must be greater than zero"),
    ({"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.0},
     "retryPeriod must be greater than zero"),
    ({"callbacks": LeaderCallbacks(None, lambda: None)}, "OnStartedLeading callback must not be nil"),
    ({"callbacks": LeaderCallbacks(lambda: None, None)}, "OnStoppedLeading callback must not be nil"),
])
def test_new_leader_elector_refuses_what_upstream_refuses(overrides: dict[str, Any], message: str) -> None:
    settings: dict[str, Any] = {"callbacks": LeaderCallbacks(lambda: None, lambda: None), **overrides}
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        new_leader_elector(LeaderElectionConfig(FakeLock(None), **settings), Clock(), random.Random())
    with pytest.raises(ValueError, match=r"^Lock identity is empty$"):
        new_leader_elector(LeaderElectionConfig(FakeLock(None, identity=""),
                                                LeaderCallbacks(lambda: None, lambda: None)),
                           Clock(), random.Random())
    assert JITTER_FACTOR == 1.2


def test_the_lease_spec_holds_the_record_in_micro_time() -> None:
    record = LeaderElectionRecord("a_1", 15, 1.5, 3.25, 2)
    spec = record_to_lease_spec(record)
    assert spec == {"holderIdentity": "a_1", "leaseDurationSeconds": 15,
                    "acquireTime": "2025-01-01T00:00:01.500000Z",
                    "renewTime": "2025-01-01T00:00:03.250000Z", "leaseTransitions": 2}
    assert lease_spec_to_record(spec) == record
    assert lease_spec_to_record({}) == LeaderElectionRecord()


# ---------------------------------------------------------------------- on a cluster

class Candidates:
    """Electors on one Lease of a cluster, and who led when."""

    def __init__(self, c: Cluster, **config: Any) -> None:
        self.c, self.config = c, config
        self.electors: dict[str, LeaderElector] = {}
        self.events: list[tuple[float, str, str]] = []

    def add(self, who: str, *, timeout: float = 5.0) -> LeaderElector:
        client = self.c.client_for(who, ["system:masters"])
        lock = LeaseLock(client, "kube-system", "demo", who, timeout=timeout)
        callbacks = LeaderCallbacks(lambda: self.events.append((self.c.clock.now, who, "started")),
                                    lambda: self.events.append((self.c.clock.now, who, "stopped")))
        le = new_leader_elector(LeaderElectionConfig(lock, callbacks, name=who, **self.config),
                                self.c.clock, random.Random(who), trace=self.c.trace)
        self.electors[who] = le
        le.run()
        return le

    def leaders(self) -> list[str]:
        return sorted(w for w, le in self.electors.items() if le.leading)

    def spec(self) -> dict[str, Any]:
        return dict(self.c.get("leases", "demo", namespace="kube-system")["spec"])


def test_a_healthy_leader_renews_every_retry_period_and_the_other_waits() -> None:
    c = Cluster(nodes=0, components=[])
    group = Candidates(c)
    group.add("a")
    group.add("b")
    c.run(0.5)
    assert group.leaders() == ["a"] and group.spec()["acquireTime"] == micro_time(0)
    renewals = []
    for _ in range(5):
        c.run(2.0)
        renewals.append(group.spec()["renewTime"])
    assert renewals == [micro_time(t) for t in (2.0, 4.0, 6.0, 8.0, 10.0)]
    assert group.leaders() == ["a"] and group.spec()["leaseTransitions"] == 0


@pytest.mark.parametrize("seed", range(6))
def test_a_new_leader_takes_over_within_the_lease_after_the_holder_dies(seed: int) -> None:
    c = Cluster(nodes=0, components=[], seed=seed)
    group = Candidates(c)
    for who in ("a", "b", "c"):
        group.add(who)
    c.run(10 + random.Random(seed).uniform(0, 5))
    [holder] = group.leaders()
    group.electors[holder].stop()
    died = c.clock.now
    c.run(30)
    starts = [t - died for t, who, what in group.events if what == "started" and t > died]
    assert starts, "nobody took over"
    assert 15 - 2 <= starts[0] <= 15 + 2 * 2 * (1 + JITTER_FACTOR)
    assert len(group.leaders()) == 1 and group.spec()["leaseTransitions"] == 1


def test_two_candidates_racing_for_an_expired_lease_conflict_and_one_wins() -> None:
    c = Cluster(nodes=0, components=[])
    group = Candidates(c)
    a = group.add("a")
    a.stop()
    c.run(1)
    b = LeaderElector(LeaderElectionConfig(LeaseLock(c.client, "kube-system", "demo", "b")),
                      c.clock, random.Random(2))
    d = LeaderElector(LeaderElectionConfig(LeaseLock(c.client, "kube-system", "demo", "d")),
                      c.clock, random.Random(3))
    assert not b.try_acquire_or_renew() and not d.try_acquire_or_renew()  # just observed
    c.run(16)
    b.config.lock.get()  # both read the expired record ...
    d.config.lock.get()
    assert b.try_acquire_or_renew()  # ... b writes first
    d_lock = d.config.lock
    assert isinstance(d_lock, LeaseLock)
    with pytest.raises(ApiError) as err:  # d's copy is stale: 409, nothing written
        d_lock.update(LeaderElectionRecord("d", 15, c.clock.now, c.clock.now, 1))
    assert err.value.code == 409
    assert group.spec()["holderIdentity"] == "b"
    assert not d.try_acquire_or_renew()  # it sees b's fresh record, held and unexpired


def test_a_slow_api_server_makes_the_leader_give_up_after_renew_deadline() -> None:
    """Answers later than the client's timeout (RenewDeadline / 2) fail on the client: the
    leader stops leading RenewDeadline after its last good renewal round began, though its
    timed-out writes still landed; nobody else leads while the server is slow; after it heals,
    a candidate takes over once the Lease stood still for LeaseDuration."""
    c = Cluster(nodes=0, components=[])
    group = Candidates(c)
    group.add("a")
    group.add("b")
    c.run(3)
    c.faults.slow_apiserver(6.0)
    slow = c.clock.now
    c.run(15)
    stops = [t for t, who, what in group.events if (who, what) == ("a", "stopped")]
    assert len(stops) == 1 and slow < stops[0] <= slow + 2 + 10
    assert group.leaders() == [] and group.spec()["holderIdentity"] == "a"
    c.faults.slow_apiserver(0)
    c.run(15 + 2 * 2 * (1 + JITTER_FACTOR))
    assert group.leaders() == ["b"]


def test_a_too_short_renew_deadline_loses_the_lease_where_the_default_keeps_it() -> None:
    results = {}
    for renew_deadline, retry in ((4.0, 1.0), (10.0, 2.0)):
        c = Cluster(nodes=0, components=[])
        group = Candidates(c, renew_deadline=renew_deadline, retry_period=retry)
        group.add("a", timeout=renew_deadline / 2)
        c.run(3)
        c.faults.slow_apiserver(3.0)  # every answer comes 3 s late
        c.run(30)
        results[renew_deadline] = group.leaders()
    assert results == {4.0: [], 10.0: ["a"]}


def test_release_on_cancel_frees_the_lease_for_the_next_candidate_at_once() -> None:
    c = Cluster(nodes=0, components=[])
    group = Candidates(c, release_on_cancel=True)
    a = group.add("a")
    group.add("b")
    c.run(5)
    a.cancel()
    assert group.spec()["holderIdentity"] == "" and group.spec()["leaseDurationSeconds"] == 1
    assert group.events[-1][1:] == ("a", "stopped")
    c.run(2 * (1 + JITTER_FACTOR) + 0.01)
    assert group.leaders() == ["b"] and group.spec()["leaseTransitions"] == 1
