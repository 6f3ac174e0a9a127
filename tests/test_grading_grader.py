"""The grader end to end: solutions score full points, stubs score zero, the CLI, class grading
with an instructor's hidden checks, and the CSV and JSON it writes."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubelab.grading import EXERCISES, grade

ROOT = Path(__file__).resolve().parent.parent

HIDDEN = '''
from kubelab.grading import CheckContext, check


@check("1.1", points=3, hint="Two updates in a row: two revisions.")
def hidden_two_updates(ctx: CheckContext) -> None:
    c = ctx.cluster(nodes=0, components=[])
    c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}, "data": {"v": "a"}})
    key = "/registry/configmaps/default/n"
    first = ctx.learner(c.store, key, lambda v: v.replace(b'"a"', b'"b"'))
    second = ctx.learner(c.store, key, lambda v: v)
    ctx.expect_equal(second, first + 1, "the second update's revision")


@check("1.1", points=2)
def hidden_always_fails(ctx: CheckContext) -> None:
    ctx.fail("an instructor's check that nobody passes", expected="x", got="y")
'''


def kubelab(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubelab", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_every_solution_scores_full_points() -> None:
    report = grade(submission=ROOT / "solutions")
    failed = [f"{c.exercise} {c.check}: {c.message}" for c in report.checks() if not c.passed]
    assert not failed, "\n".join(failed)
    assert [e.exercise.id for e in report.exercises] == list(EXERCISES)
    assert report.total == report.max_total == sum(e.points for e in EXERCISES.values())


def test_every_stub_scores_zero_and_says_it_is_not_implemented() -> None:
    report = grade(submission=ROOT / "exercises")
    assert report.total == 0 and report.max_total == sum(e.points for e in EXERCISES.values())
    for c in report.checks():
        assert c.message == f"not implemented yet (NotImplementedError: exercise {c.exercise}: " \
                            f"{EXERCISES[c.exercise].title})", c
        assert "replace `raise NotImplementedError(...)`" in c.hint
        assert c.replay.startswith(f"kubelab grade {c.exercise} --check {c.check} --seed ")


def test_the_command_line(tmp_path: Path) -> None:
    ok = kubelab("grade", "1.1", "--submission", "solutions", "--json")
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert (data["total"], data["max_total"]) == (10, 10)
    assert [c["check"] for c in data["exercises"][0]["checks"]][:2] == ["updates_a_key",
                                                                        "survives_conflicting_writers"]
    stub = kubelab("grade", "3.1", "--check", "dedupes_waiting_items")  # the learner's exercises/
    assert stub.returncode == 1
    assert "FAIL  dedupes_waiting_items" in stub.stdout and "0/2 points" in stub.stdout
    assert "replay:   kubelab grade 3.1 --check dedupes_waiting_items --seed 1" in stub.stdout
    from_notebooks = kubelab("grade", "3.1", "--check", "dedupes_waiting_items", cwd=ROOT / "notebooks")
    assert from_notebooks.stdout == stub.stdout  # exercises/ is found from notebooks/ too
    bad = kubelab("grade", "9.9")
    assert bad.returncode == 2 and "no exercise 9.9" in bad.stderr and "Traceback" not in bad.stderr
    bad = kubelab("grade", "1.1", "--check", "nope", "--submission", "solutions")
    assert bad.returncode == 2 and "no check named 'nope'" in bad.stderr


def test_class_grading_with_hidden_checks_writes_csv_and_json(tmp_path: Path) -> None:
    submissions, hidden = tmp_path / "submissions", tmp_path / "instructor"
    for student, source in (("alice", "solutions"), ("bob", "exercises")):
        (submissions / student).mkdir(parents=True)
        text = (ROOT / source / "ex01_store.py").read_text()
        (submissions / student / "ex01_store.py").write_text(text)
    (submissions / "carol" / "exercises").mkdir(parents=True)  # an exercises/ folder also works
    (submissions / "carol" / "exercises" / "ex01_store.py").write_text(
        (ROOT / "solutions" / "ex01_store.py").read_text().replace(
            "        if result.succeeded:\n            return result.revision\n",
            "        return result.revision\n"))
    hidden.mkdir()
    (hidden / "more_checks.py").write_text(HIDDEN)
    out = tmp_path / "grades.csv"
    result = kubelab("grade", "1.1", "--class", str(submissions), "--out", str(out),
                     "--checks", str(hidden))
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(out.open()))
    assert [r["student"] for r in rows] == ["alice", "bob", "carol"]
    assert [(r["1.1"], r["total"], r["max"]) for r in rows] == \
        [("13", "13", "15"), ("0", "0", "15"), ("5", "5", "15")]
    alice = json.loads((tmp_path / "grades" / "alice.json").read_text())
    checks = {c["check"]: c for c in alice["exercises"][0]["checks"]}
    assert checks["hidden_two_updates"]["passed"] and checks["hidden_two_updates"]["points"] == 3
    failed = checks["hidden_always_fails"]
    assert (failed["passed"], failed["expected"], failed["got"]) == (False, "x", "y")
    # the replay line says where hidden checks go without naming the folder: reports reach students
    assert "--checks HIDDEN_CHECKS" in failed["replay"] and str(hidden) not in json.dumps(alice)
    assert "alice" in result.stdout and "13/15" in result.stdout


def test_the_rival_writer_deletes_once_and_its_own_failures_are_the_graders() -> None:
    from types import SimpleNamespace

    from kubelab.cluster import Cluster
    from kubelab.grading.checks.common import configmap
    from kubelab.grading.checks.ex01_store import KEY, Rival
    from kubelab.grading.remote import GraderError

    c = Cluster(nodes=0, components=[], seed=1)
    c.apply(configmap("counter", {"count": "0"}))
    deleter = Rival(SimpleNamespace(seed=1), c, chance=1.0, streak=1, delete=True)
    for _ in range(4):  # it used to delete again on its third chance, and got a 404 (issue 16)
        deleter.after_read(KEY)
    assert not c.store.range(KEY).kvs
    writer = Rival(SimpleNamespace(seed=1), c, chance=1.0)
    with pytest.raises(GraderError, match=r'rival writer got 404 NotFound: configmaps "counter" not found'):
        writer.after_read(KEY)


def test_a_check_that_breaks_is_the_graders_error_not_the_learners(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(
        "from kubelab.grading import check\n\n\n@check('1.1', points=2)\n"
        "def hidden_check_with_a_bug(ctx):\n    {}['oops']  # before the learner's code is used\n"
        "    ctx.learner()\n")
    # (through the command line: --checks would register the check in this process for good)
    args = ("grade", "1.1", "--check", "hidden_check_with_a_bug", "--checks", str(tmp_path),
            "--submission", "solutions")
    data = json.loads(kubelab(*args, "--json").stdout)
    [result] = data["exercises"][0]["checks"]
    assert (result["status"], result["points"], result["passed"]) == ("error", 0, False)
    assert result["message"].startswith("grader error, not your code: the check itself failed "
                                        "(KeyError: 'oops')")
    text = kubelab(*args).stdout
    assert "  ERROR hidden_check_with_a_bug" in text
    assert "1 check(s) could not be graded (ERROR: the grader's fault, not yours)" in text


def test_bad_arguments_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no exercise 7\.7"):
        grade("7.7", submission=ROOT / "solutions")
    missing = kubelab("grade", "--class", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such directory" in missing.stderr
    nothing = grade("1.1", submission=tmp_path)
    assert nothing.total == 0
    assert all("ex01_store.py" in c.message and "was not handed in" in c.message for c in nothing.checks())


def test_the_public_surface() -> None:
    import kubelab.grading as grading

    assert set(grading.__all__) == {
        "EXERCISES", "Check", "CheckContext", "CheckFailed", "CheckResult", "Exercise",
        "ExerciseResult", "ReleaseError", "Report", "check", "checks_for", "find_exercises_dir",
        "grade", "grade_class", "load_checks", "release"}
    assert all(hasattr(grading, name) for name in grading.__all__)


def test_class_grading_skips_what_is_not_a_student_and_writes_the_rest(tmp_path: Path) -> None:
    import os

    submissions, elsewhere = tmp_path / "submissions", tmp_path / "elsewhere"
    for name in ("alice", "=HYPERLINK(1)", os.fsdecode(b"b\xffd")):
        (submissions / name).mkdir(parents=True)
    elsewhere.mkdir()
    (submissions / "linked").symlink_to(elsewhere)
    out = tmp_path / "grades.csv"
    result = kubelab("grade", "1.1", "--class", str(submissions), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"skipped 'b\\xffd' in {submissions}: its name is not valid UTF-8 (rename the folder to grade it)",
        f"skipped 'linked' in {submissions}: it is a symbolic link, not a student's folder (copy the "
        "folder itself into the class)"]
    assert out.read_text().splitlines()[1:] == ['"\'=HYPERLINK(1)","0","0","10",""',
                                                '"alice","0","0","10",""']
    assert sorted(p.name for p in (tmp_path / "grades").iterdir()) == ["=HYPERLINK(1).json", "alice.json"]
    assert "'=HYPERLINK(1)" not in result.stdout and "=HYPERLINK(1)" in result.stdout
