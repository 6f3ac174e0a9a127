"""Raft's safety properties (Raft paper, figure 3), checked on the members' real state.

EtcdCluster calls `on_leader` whenever a member becomes leader and `on_commit` whenever a
member's commit index moves; `check_log_matching` compares the logs themselves. Nothing here is
true by construction: a member running broken rules (exercise 7.2) trips these checks.

- Election safety: at most one leader per term.
- Leader completeness: a leader's log holds every entry committed before its term.
- State machine safety: no two members commit different entries at the same index.
- Log matching: if two logs hold an entry with the same index and term, they are identical up
  to that index.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubelab.store.raft.log import RaftLog

__all__ = ["RaftChecker", "check_log_matching"]


class RaftChecker:
    def __init__(self) -> None:
        self.leaders: dict[int, str] = {}         # term -> the member that led it
        self.committed: dict[int, int] = {}       # index -> term of the entry committed there
        self.violations: list[str] = []

    def on_leader(self, name: str, term: int, log: RaftLog) -> None:
        other = self.leaders.get(term)
        if other is not None and other != name:
            self.violations.append(f"election safety: {other} and {name} were both leader of term {term}")
        self.leaders.setdefault(term, name)
        for index, committed_term in self.committed.items():
            if index > log.snapshot_index and log.term(index) != committed_term:
                self.violations.append(
                    f"leader completeness: {name} became leader of term {term} without the committed "
                    f"entry {index} (term {committed_term})")
                break

    def on_commit(self, name: str, log: RaftLog, old: int, new: int) -> None:
        for index in range(max(old, log.snapshot_index) + 1, new + 1):
            term = log.term(index)
            assert term is not None
            seen = self.committed.setdefault(index, term)
            if seen != term:
                self.violations.append(
                    f"state machine safety: {name} committed entry {index} of term {term}, "
                    f"another member committed one of term {seen} there")
                return


def check_log_matching(logs: Mapping[str, RaftLog]) -> list[str]:
    """Every pair of logs agrees on every entry before the last index where their terms match."""
    found = []
    names = sorted(logs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            la, lb = logs[a], logs[b]
            low = max(la.snapshot_index, lb.snapshot_index) + 1
            high = min(la.last_index(), lb.last_index())
            agree = next((ix for ix in range(high, low - 1, -1) if la.term(ix) == lb.term(ix)), 0)
            for ix in range(low, agree + 1):
                if la.entry(ix) != lb.entry(ix):
                    found.append(f"log matching: {a} and {b} agree on entry {agree} but differ at {ix}")
                    break
    return found
