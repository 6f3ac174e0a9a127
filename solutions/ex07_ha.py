"""Exercises for notebook 07 · Failures and high availability: leader election, several API
servers, an etcd Raft quorum.

The grader runs your code inside simulated clusters where replicas crash, candidates race for
the same Lease and the API server answers too slowly, and inside a simulated etcd whose members
crash and get partitioned. Each failed check says what it expected,
what it got, a hint, and the command that replays exactly that scenario.

    kubelab grade 7                                          # every exercise of notebook 07
    from kubelab.grading import grade; grade("7.1")

Do not import kubelab.client.leaderelection.leaderelection (7.1) or kubelab.store.raft.rules
(7.2) here: writing them is the exercise.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.client.leaderelection.resourcelock import LeaderElectionRecord
from kubelab.store.raft.messages import VoteRequest, VoterState


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
    ### BEGIN SOLUTION
    lock, now = le.config.lock, le.clock.now
    record = LeaderElectionRecord(lock.identity(), int(le.config.lease_duration), now, now)
    if le.is_leader() and le.is_lease_valid(now):
        observed = le.get_observed_record()
        record.acquire_time = observed.acquire_time
        record.leader_transitions = observed.leader_transitions
        try:
            lock.update(record)
            le.set_observed_record(record)
            return True
        except ApiError:
            pass
    try:
        old, raw = lock.get()
    except ApiError as err:
        if err.code != 404:
            return False
        try:
            lock.create(record)
        except ApiError:
            return False
        le.set_observed_record(record)
        return True
    if raw != le.observed_raw_record:
        le.set_observed_record(old, raw)
    if old.holder_identity and le.is_lease_valid(now) and not le.is_leader():
        return False
    if le.is_leader():
        record.acquire_time, record.leader_transitions = old.acquire_time, old.leader_transitions
    else:
        record.leader_transitions = old.leader_transitions + 1
    try:
        lock.update(record)
    except ApiError:
        return False
    le.set_observed_record(record)
    return True
    ### END SOLUTION


class RaftRules:
    """Exercise 7.2: Raft's vote and commit rules.

    Notebook 07_failures_ha, section "The etcd quorum". Hard, 10 points.

    The two decisions that make Raft safe, which every member of kubelab's simulated etcd calls
    (kubelab/store/raft/raft.py's step and maybe_commit follow etcd-io/raft raft.go). The grader
    runs your rules inside every member of a simulated etcd while it crashes and partitions
    members (starting with the Raft paper's figure 8, played message by message), and checks
    Raft's invariants: at most one leader per term, leaders that hold every
    committed entry, no two members committing different entries at one index, and no
    acknowledged write lost once the faults heal.

    - request_vote(state, request) -> bool: a MsgVote arrives from request.candidate. The member
      has already stepped up to the candidate's term, so state.term == request.term; it ignores
      older terms itself. state: term, voted_for (None: no vote yet this term), leader (None: no
      leader known this term), last_log_index, last_log_term. request: term, candidate,
      last_log_index, last_log_term. Grant the vote only if the member can vote for this
      candidate (it voted for it already, or it has voted for nobody and follows no leader) and
      the candidate's log is at least as up to date as its own: a higher last term, or the same
      last term and a last index at least as high (Raft paper, section 5.4.1).
    - commit_index(current_term, committed, match_indexes, match_terms) -> int: the leader's new
      commit index. match_indexes holds every voter's match index, the leader's own included;
      match_terms[i] is the term of the leader's entry at match_indexes[i] (None when it is
      compacted). The highest index stored on a majority becomes the commit index only if it is
      above `committed` and its entry is of current_term (section 5.4.2: an entry of an older
      term is never committed by counting replicas). Otherwise return committed.
    """

    def request_vote(self, state: VoterState, request: VoteRequest) -> bool:
        ### BEGIN SOLUTION
        can_vote = state.voted_for == request.candidate or (
            state.voted_for is None and state.leader is None)
        up_to_date = request.last_log_term > state.last_log_term or (
            request.last_log_term == state.last_log_term
            and request.last_log_index >= state.last_log_index)
        return can_vote and up_to_date
        ### END SOLUTION

    def commit_index(self, current_term: int, committed: int, match_indexes: list[int],
                     match_terms: list[int | None]) -> int:
        ### BEGIN SOLUTION
        order = sorted(range(len(match_indexes)), key=lambda i: match_indexes[i], reverse=True)
        majority = order[len(order) // 2]
        if match_indexes[majority] > committed and match_terms[majority] == current_term:
            return match_indexes[majority]
        return committed
        ### END SOLUTION
