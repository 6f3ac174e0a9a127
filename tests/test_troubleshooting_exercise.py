"""Exercise 6.3 (diagnose a broken cluster) is graded like the others: the solution names every
seeded cause, and plausible half-diagnoses lose the checks that name them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.grading import Report, grade

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = (ROOT / "solutions" / "ex06b_troubleshooting.py").read_text()
CONTAINERS, WORKLOADS = "finds_why_a_container_does_not_run", "finds_what_a_workload_is_missing"
# Each mistake, the check it is graded on (None: all three, to keep the test cheap), its edits.
MISTAKES: dict[str, tuple[str | None, list[tuple[str, str]]]] = {
    "solution": (None, []),
    # reads the STATUS column only: an OOMKilled container shows CrashLoopBackOff between kills
    "ignores-last-state": (CONTAINERS, [('            if last.get("reason") == "OOMKilled" or',
                                         "            if False and")]),
    # never looks at the nodes: a dead node's pods still say Running for five minutes
    "skips-the-nodes": (WORKLOADS, [('        if ready.get("status") != "True":', "        if False:")]),
    # names the ReplicaSet (what the event is on) instead of the Deployment to fix
    "names-the-replicaset": (WORKLOADS, [
        ('            return "FailedCreate", owners.get(e["involvedObject"]["name"], "")',
         '            return "FailedCreate", e["involvedObject"]["name"]')]),
    # returns a bare string
    "just-a-word": (None, [("def diagnose(c: Any) -> tuple[str, str]:\n",
                            "def diagnose(c: Any) -> tuple[str, str]:\n    return 'CrashLoopBackOff'\n")]),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    out = {}
    for name, (only, edits) in MISTAKES.items():
        text = SOLUTION
        for old, new in edits:
            assert old in text, old
            text = text.replace(old, new, 1)
        folder = tmp_path_factory.mktemp(name)
        (folder / "ex06b_troubleshooting.py").write_text(text)
        out[name] = grade("6.3", submission=folder, check=only, jobs=1, timeout=120)
    return out


def verdicts(report: Report) -> dict[str, bool]:
    return {c.check: c.passed for e in report.exercises for c in e.checks}


def test_the_solution_scores_every_point(reports: dict[str, Report]) -> None:
    assert all(verdicts(reports["solution"]).values()), verdicts(reports["solution"])
    assert reports["solution"].exercises[0].points == 10


@pytest.mark.parametrize(("student", "failed"), [
    ("ignores-last-state", {CONTAINERS}),
    ("skips-the-nodes", {WORKLOADS}),
    ("names-the-replicaset", {WORKLOADS}),
    ("just-a-word", {"finds_why_a_pod_is_pending", CONTAINERS, WORKLOADS}),
])
def test_a_plausible_mistake_loses_the_checks_that_name_it(reports: dict[str, Report], student: str,
                                                           failed: set[str]) -> None:
    got = verdicts(reports[student])
    assert {name for name, ok in got.items() if not ok} == failed, got
    assert reports[student].total < 10


def test_a_wrong_shape_is_reported_in_the_contracts_words(reports: dict[str, Report]) -> None:
    messages = {c.message for e in reports["just-a-word"].exercises for c in e.checks}
    assert messages == {"diagnose(c) must return (cause, name): two strings"}, messages
