"""The two rules exercise 7.2 asks a learner to write: granting a vote and advancing the commit index.

Both are pure functions of a member's state, so a learner's version can replace ours in every
member (`EtcdCluster(rules=...)`) and be checked against Raft's invariants under faults.

- `request_vote`: raft.go Step, case MsgVote: a member votes for a candidate of its current term
  if it has not voted for someone else this term (and follows no leader), and only if the
  candidate's log is at least as up to date as its own (Raft paper, section 5.4.1). The caller has
  already stepped up to the candidate's term and ignores candidates of older terms.
- `commit_index`: raft.go maybeCommit and tracker.Committed (quorum/majority.go): the highest
  index stored on a majority, but only if that entry is of the leader's current term (section
  5.4.2: an older term's entry is committed indirectly, never by counting replicas).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubelab.store.raft.messages import VoteRequest, VoterState

__all__ = ["DEFAULT_RULES", "Rules", "VoteRequest", "VoterState", "commit_index", "request_vote"]


def request_vote(state: VoterState, request: VoteRequest) -> bool:
    """Grant the vote? (raft.go Step: canVote && raftLog.isUpToDate)"""
    if request.term < state.term:
        return False
    can_vote = state.voted_for == request.candidate or (state.voted_for is None and state.leader is None)
    up_to_date = request.last_log_term > state.last_log_term or (
        request.last_log_term == state.last_log_term and request.last_log_index >= state.last_log_index)
    return can_vote and up_to_date


def commit_index(current_term: int, committed: int, match_indexes: Sequence[int],
                 match_terms: Sequence[int | None]) -> int:
    """The leader's new commit index. match_indexes: every voter's match index, the leader's own
    included; match_terms[i]: the term of the leader's entry at match_indexes[i] (None: compacted)."""
    ordered = sorted(range(len(match_indexes)), key=lambda i: match_indexes[i], reverse=True)
    median = ordered[len(ordered) // 2]   # stored on len//2 + 1 members: a majority
    quorum_index = match_indexes[median]
    if quorum_index > committed and match_terms[median] == current_term:
        return quorum_index
    return committed


class Rules(Protocol):
    """What a member calls; a module with these two functions is one."""

    def request_vote(self, state: VoterState, request: VoteRequest) -> bool: ...

    def commit_index(self, current_term: int, committed: int, match_indexes: Sequence[int],
                     match_terms: Sequence[int | None]) -> int: ...


class _Default:
    request_vote = staticmethod(request_vote)
    commit_index = staticmethod(commit_index)


DEFAULT_RULES: Rules = _Default()
