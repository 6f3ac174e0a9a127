# Generated from solutions/ex07_ha.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: ce2ebbb401be669f
"""Exercises for notebook 07 · Failures and high availability: leader election, several API
servers, an etcd Raft quorum.

The grader runs your code inside simulated clusters where replicas crash, candidates race for
the same Lease and the API server answers too slowly. Each failed check says what it expected,
what it got, a hint, and the command that replays exactly that scenario.

    kubelab grade 7                                          # every exercise of notebook 07
    from kubelab.grading import grade; grade("7.1")

Do not import kubelab.client.leaderelection.leaderelection here: writing it is the exercise.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.client.leaderelection.resourcelock import LeaderElectionRecord


def try_acquire_or_renew(le: Any) -> bool:
    """Exercise 7.1: Acquire or renew a leader Lease.

    Notebook 07_failures_ha, section "Leader election". Hard, 10 points.

    One attempt of client-go's LeaderElector (tools/leaderelection/leaderelection.go
    tryAcquireOrRenew). Return True when this candidate holds the Lease afterwards (acquired or
    renewed), False otherwise. kubelab's elector calls it every RetryPeriod and does the rest
    (the loops, RenewDeadline, the callbacks). What `le` offers:

    - le.config.lock: get() -> (LeaderElectionRecord, raw bytes), create(record),
      update(record), identity(). Each raises ApiError (get: code 404 when there is no Lease;
      update: 409 Conflict when the Lease changed since the lock last read or wrote it; a
      timeout when the API server is too slow).
    - le.config.lease_duration (seconds), le.clock.now (virtual seconds).
    - le.get_observed_record(), le.observed_raw_record, le.is_leader() (the observed record's
      holder is le.config.lock.identity()), le.is_lease_valid(now) (the local time at which
      the record was last seen to change, observed_time, plus its leaseDurationSeconds, is
      still ahead of now), le.set_observed_record(record, raw=None) (remember the record, and
      the raw bytes when given, and set observed_time to now).

    The steps, in upstream's order (now = le.clock.now):

    1. The record to write: LeaderElectionRecord(holder_identity=<our identity>,
       lease_duration_seconds=int(lease_duration), acquire_time=now, renew_time=now).
    2. Fast path: if we lead and our lease is valid, keep the observed record's acquire_time and
       leader_transitions and update() at once (no get). On success observe the record you wrote
       and return True; on any ApiError go on to the slow path.
    3. get(). On 404: create() the record (observe it, True; an ApiError: False). On any other
       ApiError: False.
    4. If raw differs from le.observed_raw_record, observe the record read (with its raw): the
       countdown of its lease starts again now. Never judge expiry by the record's renew_time,
       which another machine's clock wrote.
    5. If someone else holds it (holder_identity not empty) and the lease is valid: False.
    6. If we lead, keep the old acquire_time and leader_transitions; otherwise leader_transitions
       is the old one + 1. update() (an ApiError: False), observe what you wrote, True.
    """
    raise NotImplementedError("exercise 7.1: Acquire or renew a leader Lease")
