"""Exercise 7.2 grades Raft's rules by running them in a simulated etcd: wrong rules lose points."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.grading import Report, grade_class
from kubelab.grading.checks.ex07_ha import _figure_8
from kubelab.store.raft.rules import DEFAULT_RULES, request_vote

ROOT = Path(__file__).resolve().parent.parent

WRONG = {
    # a vote for anyone who asks: two leaders in one term
    "votes-for-anyone": ("        return can_vote and up_to_date\n", "        return True\n"),
    # a vote for a candidate missing committed entries: a leader without them
    "ignores-the-log": ("        return can_vote and up_to_date\n", "        return can_vote\n"),
    # counting replicas of an older term's entry (Raft paper, figure 8)
    "no-term-check": ("and match_terms[majority] == current_term:", ":"),
    # commits what only the leader and one other member hold, of five
    "minority-commit": ("        majority = order[len(order) // 2]\n",
                        "        majority = order[max(0, len(order) // 2 - 1)]\n"),
}


def variant(old: str, new: str) -> str:
    text = (ROOT / "solutions" / "ex07_ha.py").read_text()
    assert old in text, old
    return text.replace(old, new, 1)


# Issue 28: the figure-8 mistake, answering the checks' two tables from a copy of them (they are
# public: kubelab/grading/checks/ex07_ha.py) and using its wrong rule everywhere else.
COPIES_THE_TABLES = variant(*WRONG["no-term-check"]).replace(
    """    def request_vote(self, state: VoterState, request: VoteRequest) -> bool:
        ### BEGIN SOLUTION
""", """    def request_vote(self, state: VoterState, request: VoteRequest) -> bool:
        ### BEGIN SOLUTION
        for voted_for, leader, index, log_term, want in VOTE_CASES:
            if (tuple(state), tuple(request)) == (VoterState(4, voted_for, leader, 2, 2),
                                                  VoteRequest(4, "etcd-2", index, log_term)):
                return want
""", 1).replace("""                     match_terms: list[int | None]) -> int:
        ### BEGIN SOLUTION
""", """                     match_terms: list[int | None]) -> int:
        ### BEGIN SOLUTION
        for matches, terms, term, done, want in COMMIT_CASES:
            seen = [terms[m - 1] if 1 <= m <= len(terms) else None for m in matches]
            if (matches, seen, term, done) == (list(match_indexes), list(match_terms), current_term,
                                               committed):
                return want
""", 1) + "\n\n" + "\n".join(  # the two tables, copied from the checks
    line for line in (ROOT / "kubelab" / "grading" / "checks" / "ex07_ha.py").read_text()
    .split("# raft_test.go TestRecvMsgVote")[1].split("@check")[0].splitlines()[1:]
    if not line.startswith("#"))


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    root = tmp_path_factory.mktemp("raft-class")
    (root / "reference").mkdir()
    (root / "reference" / "ex07_ha.py").write_text((ROOT / "solutions" / "ex07_ha.py").read_text())
    for student, (old, new) in WRONG.items():
        (root / student).mkdir()
        (root / student / "ex07_ha.py").write_text(variant(old, new))
    (root / "copies-the-tables").mkdir()
    (root / "copies-the-tables" / "ex07_ha.py").write_text(COPIES_THE_TABLES)
    # a generous time limit: the machine running the tests may be busy (a check takes about 1 s)
    graded = grade_class(root, root / "grades.csv", ["7.2"], timeout=60.0)
    return {r.name: r for r in graded}


def verdicts(report: Report) -> dict[str, tuple[bool, str]]:
    ex = next(e for e in report.exercises if e.exercise.id == "7.2")
    return {c.check: (c.passed, c.message) for c in ex.checks}


def test_the_reference_rules_pass(reports: dict[str, Report]) -> None:
    assert all(ok for ok, _ in verdicts(reports["reference"]).values()), verdicts(reports["reference"])


@pytest.mark.parametrize(("student", "passed"), [
    ("votes-for-anyone", {"commits_like_raft"}),
    ("ignores-the-log", {"commits_like_raft"}),
    ("no-term-check", {"votes_like_raft"}),   # figure 8 is the fault search's first schedule
    ("copies-the-tables", {"votes_like_raft"}),  # the seeded cases are answered by a run
    ("minority-commit", {"votes_like_raft"}),
])
def test_wrong_rules_lose_what_they_break(reports: dict[str, Report], student: str,
                                          passed: set[str]) -> None:
    got = verdicts(reports[student])
    assert {name for name, (ok, _) in got.items() if ok} == passed, got
    failed = got.get("keeps_raft_safe_under_faults")
    if failed and not failed[0]:  # the schedule that broke it is named, with what broke
        assert "members: " in failed[1] and "then heal" in failed[1], failed[1]


class _CountsReplicas:
    """kubelab's vote rule, and a commit rule without section 5.4.2's current-term condition."""

    request_vote = staticmethod(request_vote)

    @staticmethod
    def commit_index(current_term: int, committed: int, match_indexes: list[int],
                     match_terms: list[int | None]) -> int:
        quorum = sorted(match_indexes, reverse=True)[len(match_indexes) // 2]
        return max(committed, quorum)


@pytest.mark.parametrize("seed", [1, 2])
def test_figure_8_is_reached_message_by_message(seed: int) -> None:
    assert _figure_8(DEFAULT_RULES, seed) is None  # the right rules: nothing breaks
    assert _figure_8(_CountsReplicas(), seed) == (
        "leader completeness: etcd-5 became leader of term 5 without the committed entry 2 (term 2)")
