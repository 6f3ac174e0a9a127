"""Leader election on a Lease, on the simulated clock (client-go tools/leaderelection/
leaderelection.go, Kubernetes 1.34).

Several replicas of a component run at once; one holds the Lease and acts, the others wait to take
over. Nothing fences the old leader: safety rests on time. A candidate never trusts the
timestamps in the record (another machine's clock wrote them). It notes the local time at which
it last saw the record *change* (observed_time) and counts the lease as expired only when
LeaseDuration has passed since then without a change. The leader renews every RetryPeriod and
gives up when it could not renew for RenewDeadline, which is shorter than LeaseDuration: so it
stops acting before any other candidate can decide that its lease has expired.

The loops are upstream's Run, acquire and renew, in that order, written as generators that one
Task (kubelab/sim/tasks.py) runs on the simulated clock, so they read as sequentially as the Go
(`yield 2.0` is a sleep):

- acquire: try_acquire_or_renew now, then again after a jittered RetryPeriod (wait.JitterUntil,
  JitterFactor 1.2), until it succeeds; then on_started_leading.
- renew: every RetryPeriod, retry try_acquire_or_renew (every RetryPeriod) until it succeeds; a
  round that has not succeeded after RenewDeadline ends the leadership: on_stopped_leading.
- a request's latency (the lock's elapsed seconds) delays what follows it.

Departures: on_started_leading runs inline, not in a goroutine of its own; cancel() (the context
being cancelled) runs the end of Run at once (release if ReleaseOnCancel, "stopped leading",
on_stopped_leading) instead of waiting for the sleeping loop to notice.

Upstream's kube-scheduler and kube-controller-manager exit the process when they lose the lease
(klog.FlushAndExit in OnStoppedLeading) and are restarted by the kubelet. kubelab's components
stop their loops instead and stay stopped: the replica no longer acts, and c.faults.restart
brings it back as a new candidate.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kubelab.api.errors import ApiError
from kubelab.client.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock
from kubelab.sim.clock import Clock
from kubelab.sim.tasks import Step, Task
from kubelab.sim.trace import Trace

__all__ = ["JITTER_FACTOR", "LeaderCallbacks", "LeaderElectionConfig", "LeaderElector",
           "new_leader_elector"]

JITTER_FACTOR = 1.2


@dataclass
class LeaderCallbacks:
    """on_started_leading and on_stopped_leading are required; on_new_leader gets the identity of
    each new leader this candidate observes (its own included)."""

    on_started_leading: Callable[[], None] | None = None
    on_stopped_leading: Callable[[], None] | None = None
    on_new_leader: Callable[[str], None] | None = None


@dataclass
class LeaderElectionConfig:
    """LeaderElectionConfig, in seconds. The defaults are the core components' (component-base
    LeaderElectionConfiguration: 15 s, 10 s, 2 s)."""

    lock: LeaseLock
    callbacks: LeaderCallbacks = field(default_factory=LeaderCallbacks)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = False
    name: str = ""


def new_leader_elector(config: LeaderElectionConfig, clock: Clock, rand: random.Random, *,
                       trace: Trace | None = None) -> LeaderElector:
    """NewLeaderElector: refuse a configuration that could let two leaders act at once."""
    if config.lease_duration <= config.renew_deadline:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if config.renew_deadline <= JITTER_FACTOR * config.retry_period:
        raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
    if config.lease_duration < 1e-9:
        raise ValueError("leaseDuration must be greater than zero")
    if config.renew_deadline < 1e-9:
        raise ValueError("renewDeadline must be greater than zero")
    if config.retry_period < 1e-9:
        raise ValueError("retryPeriod must be greater than zero")
    if config.callbacks.on_started_leading is None:
        raise ValueError("OnStartedLeading callback must not be nil")
    if config.callbacks.on_stopped_leading is None:
        raise ValueError("OnStoppedLeading callback must not be nil")
    if config.lock is None:
        raise ValueError("Lock must not be nil.")
    if not config.lock.identity():
        raise ValueError("Lock identity is empty")
    return LeaderElector(config, clock, rand, trace=trace)


class LeaderElector:
    """A leader election client; build it with new_leader_elector, then run() it."""

    def __init__(self, config: LeaderElectionConfig, clock: Clock, rand: random.Random, *,
                 trace: Trace | None = None) -> None:
        self.config, self.clock, self.rand, self.trace = config, clock, rand, trace
        self.observed_record = LeaderElectionRecord()
        self.observed_raw_record = b""
        self.observed_time = 0.0
        self.reported_leader = ""
        self.leading = False   # between on_started_leading and on_stopped_leading
        self.done = False      # the context is cancelled (or the process died)
        self._task: Task | None = None  # run()'s loops: acquire, then renew

    # ------------------------------------------------------------------ state

    def get_leader(self) -> str:
        """The identity of the last observed leader ("" before any)."""
        return self.observed_record.holder_identity

    def is_leader(self) -> bool:
        return self.observed_record.holder_identity == self.config.lock.identity()

    def is_lease_valid(self, now: float) -> bool:
        """observed_time + the observed record's leaseDurationSeconds is still ahead."""
        return self.observed_time + self.observed_record.lease_duration_seconds > now

    def get_observed_record(self) -> LeaderElectionRecord:
        return replace(self.observed_record)

    def set_observed_record(self, record: LeaderElectionRecord, raw: bytes | None = None) -> None:
        """setObservedRecord: remember the record and the local time we saw it (and, for a record
        just read, its raw form, upstream's observedRawRecord)."""
        self.observed_record = replace(record)
        self.observed_time = self.clock.now
        if raw is not None:
            self.observed_raw_record = raw

    # ------------------------------------------------------------------ one attempt

    def try_acquire_or_renew(self) -> bool:
        """tryAcquireOrRenew: acquire the lease if it is free or expired, renew it if ours."""
        lock, now = self.config.lock, self.clock.now
        record = LeaderElectionRecord(lock.identity(), int(self.config.lease_duration), now, now)
        # 1. The leader's fast path: update the record it last wrote, without reading first.
        if self.is_leader() and self.is_lease_valid(now):
            old = self.observed_record
            record.acquire_time, record.leader_transitions = old.acquire_time, old.leader_transitions
            try:
                lock.update(record)
                self.set_observed_record(record)
                return True
            except ApiError:
                pass  # "falling back to slow path"
        # 2. Obtain or create the record.
        try:
            old, raw = lock.get()
        except ApiError as err:
            if err.code != 404:
                return False
            try:
                lock.create(record)
            except ApiError:
                return False
            self.set_observed_record(record)
            return True
        # 3. The record changed since we last looked: restart our count of its lease.
        if raw != self.observed_raw_record:
            self.set_observed_record(old, raw)
        if old.holder_identity and self.is_lease_valid(now) and not self.is_leader():
            return False  # held by another, and not yet expired
        # 4. Take it over (a transition) or renew it.
        if self.is_leader():
            record.acquire_time, record.leader_transitions = old.acquire_time, old.leader_transitions
        else:
            record.leader_transitions = old.leader_transitions + 1
        try:
            lock.update(record)
        except ApiError:
            return False
        self.set_observed_record(record)
        return True

    # ------------------------------------------------------------------ the loops

    def run(self) -> None:
        """Run: acquire, then renew until that fails or cancel(); then on_stopped_leading."""
        self._trace("attempting-to-acquire")
        self._task = Task(self.clock, self._run(), alive=lambda: not self.done, background=True)

    def _run(self) -> Step:
        yield from self.acquire()  # returns once it holds the lease (cancel() closes it before)
        self.leading = True
        self._trace("started-leading")
        assert self.config.callbacks.on_started_leading is not None
        self.config.callbacks.on_started_leading()
        if self.done:
            return  # the callback cancelled the elector
        yield from self.renew()
        self.done = True
        self._end()

    def acquire(self) -> Step:
        """acquire: try_acquire_or_renew now, then again a jittered RetryPeriod after each failed
        attempt ended (wait.JitterUntil, sliding), until it succeeds. Returns True."""
        retry = self.config.retry_period
        while True:
            succeeded, elapsed = self._attempt()
            if elapsed > 0:
                yield elapsed  # the request's latency
            self.maybe_report_transition()
            if succeeded:
                self.config.lock.record_event("became leader")
                return True
            yield retry + self.rand.random() * JITTER_FACTOR * retry  # wait.Jitter(RetryPeriod, 1.2)

    def renew(self) -> Step:
        """renew: wait.Until(round, RetryPeriod), each round a PollUntilContextTimeout of
        try_acquire_or_renew every RetryPeriod for at most RenewDeadline. Returns when a round
        failed: "failed to renew lease"."""
        while True:
            renewed = yield from self._poll_renew(self.clock.now + self.config.renew_deadline)
            self.maybe_report_transition()
            if not renewed:
                self._trace("failed-to-renew", lock=self.config.lock.describe())
                return
            yield self.config.retry_period

    def _poll_renew(self, deadline: float) -> Step:
        """One round: PollUntilContextTimeout(ctx, RetryPeriod, RenewDeadline, immediate=true).
        The next try starts one RetryPeriod after the last one began (or when it ended, if it
        took longer); the round's context ends at the deadline, a request under way included."""
        while True:
            started = self.clock.now
            succeeded, elapsed = self._attempt()
            if started + elapsed >= deadline:
                yield deadline - started
                return False
            if succeeded:
                if elapsed > 0:
                    yield elapsed
                return True
            next_at = max(started + self.config.retry_period, started + elapsed)
            yield min(next_at, deadline) - started
            if next_at >= deadline:
                return False

    def _attempt(self) -> tuple[bool, float]:
        """One try_acquire_or_renew, and how long its requests took (the lock's elapsed)."""
        self.config.lock.elapsed = 0.0
        succeeded = self.try_acquire_or_renew()
        return succeeded, self.config.lock.elapsed

    def _end(self) -> None:
        """What follows the loops: release if ReleaseOnCancel, the "stopped leading" event (renew's
        deferred RecordEvent), then Run's deferred on_stopped_leading."""
        if self.config.release_on_cancel:
            self.release()
        if self.leading:
            self.config.lock.record_event("stopped leading")
        self.leading = False
        self._trace("stopped-leading")
        assert self.config.callbacks.on_stopped_leading is not None
        self.config.callbacks.on_stopped_leading()

    def release(self) -> bool:
        """release: give the lease up if we hold it: holder "", leaseDurationSeconds 1, the
        transitions of the record last observed. No read first: the update goes over the Lease
        as last read or written, and a conflict means someone else has it now."""
        if not self.is_leader():
            return True
        lock, now = self.config.lock, self.clock.now
        lock.elapsed = 0.0
        record = LeaderElectionRecord("", 1, now, now, self.observed_record.leader_transitions)
        try:
            lock.update(record)
        except ApiError:
            return False
        self.set_observed_record(record)
        return True

    def cancel(self) -> None:
        """The run context is cancelled (a graceful shutdown): the loops end, the lease is
        released if ReleaseOnCancel, and on_stopped_leading runs."""
        if self.done:
            return
        self.done = True
        if self._task is not None:
            self._task.cancel()
        self._end()

    def stop(self) -> None:
        """The process died: the loops end and nothing is written or called back."""
        self.done, self.leading = True, False
        if self._task is not None:
            self._task.cancel()

    def maybe_report_transition(self) -> None:
        if self.observed_record.holder_identity == self.reported_leader:
            return
        self.reported_leader = self.observed_record.holder_identity
        self._trace("new-leader", leader=self.reported_leader)
        if self.config.callbacks.on_new_leader is not None:
            self.config.callbacks.on_new_leader(self.reported_leader)

    def _trace(self, what: str, **detail: object) -> None:
        if self.trace is not None:
            self.trace.record(self.config.name or "leaderelection", what,
                              f"leases/{self.config.lock.describe()}",
                              identity=self.config.lock.identity(), **detail)
