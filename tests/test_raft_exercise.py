"""Exercise 7.2 grades Raft's rules by running them in a simulated etcd: wrong rules lose points."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.grading import Report, grade_class

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


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    root = tmp_path_factory.mktemp("raft-class")
    (root / "reference").mkdir()
    (root / "reference" / "ex07_ha.py").write_text((ROOT / "solutions" / "ex07_ha.py").read_text())
    for student, (old, new) in WRONG.items():
        (root / student).mkdir()
        (root / student / "ex07_ha.py").write_text(variant(old, new))
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
    # Figure 8's bug: the fault schedules of 7.2 now find a commit of an older term's entry that
    # is lost (its message says which). They are the same schedules; the clusters they run in
    # draw differently from the seeded generator since the API server serves DaemonSets,
    # ControllerRevisions and PriorityClasses (the garbage collector watches those too).
    ("no-term-check", {"votes_like_raft"}),
    ("minority-commit", {"votes_like_raft"}),
])
def test_wrong_rules_lose_what_they_break(reports: dict[str, Report], student: str,
                                          passed: set[str]) -> None:
    got = verdicts(reports[student])
    assert {name for name, (ok, _) in got.items() if ok} == passed, got
    failed = got.get("keeps_raft_safe_under_faults")
    if failed and not failed[0]:  # the schedule that broke it is named, with what broke
        assert "members: " in failed[1] and "then heal" in failed[1], failed[1]
