"""Exercise 10.2 (the HPA replica calculation) is graded like the others: the solution scores
every point, and plausible mistakes lose the checks that name them, on seeded cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.grading import Report, grade

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = (ROOT / "solutions" / "ex10_scale.py").read_text()
MISTAKES = {
    "solution": [],
    # no tolerance: every change, however small, rescales
    "no-tolerance": [("        if abs(1.0 - ratio) <= tolerance:\n            return current_replicas, "
                      "utilization\n", "")],
    # pods without a metric are simply left out, in both directions
    "drops-missing-pods": [("    if not (unready and ratio > 1.0) and not missing:",
                            "    if not (unready and ratio > 1.0):")],
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    out = {}
    for name, edits in MISTAKES.items():
        text = SOLUTION
        for old, new in edits:
            assert old in text, old
            text = text.replace(old, new, 1)
        folder = tmp_path_factory.mktemp(name)
        (folder / "ex10_scale.py").write_text(text)
        out[name] = grade("10.2", submission=folder, jobs=1, timeout=30)
    return out


def verdicts(report: Report) -> dict[str, bool]:
    return {c.check: c.passed for e in report.exercises for c in e.checks}


def test_the_solution_scores_every_point(reports: dict[str, Report]) -> None:
    assert all(verdicts(reports["solution"]).values()), verdicts(reports["solution"])
    assert reports["solution"].exercises[0].points == 10


@pytest.mark.parametrize(("student", "failed"), [
    ("no-tolerance", {"matches_upstreams_table", "keeps_the_count_within_the_tolerance"}),
    ("drops-missing-pods", {"matches_upstreams_table", "counts_pods_without_metrics_against_the_change"}),
])
def test_a_plausible_mistake_loses_the_checks_that_name_it(reports: dict[str, Report], student: str,
                                                           failed: set[str]) -> None:
    got = verdicts(reports[student])
    assert {name for name, ok in got.items() if not ok} >= failed
    assert reports[student].exercises[0].points < 10
