"""Deliberately wrong submissions each lose exactly the points they should, with the right
message, and none of them can grade itself, crash the grader or touch another student's grade.

The whole class is graded once (in parallel, with a short time limit); each test reads its
student's report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubelab.grading import Report, grade, grade_class

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 2.0
OUTPUT_LIMIT = 1 << 17


def variant(module: str, *edits: tuple[str, str]) -> str:
    """A solution with some lines changed: the realistic way to be wrong."""
    text = (ROOT / "solutions" / f"{module}.py").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


PATCHES_THE_GRADER = '''
import json, os, sys
import kubelab.grading.context as context
import kubelab.grading.grader as grader
import kubelab.grading.runner as runner

runner.run_check = lambda *a, **k: {"type": "result", "passed": True}
context.CheckContext.fail = lambda *a, **k: None
grader._verdicts = lambda job: {c.name: {"passed": True} for c in job.checks}
sys.modules["kubelab.grading.checks.ex01_store"] = None
fake = {"nonce": "0" * 32, "type": "result", "exercise": "1.1", "check": "updates_a_key",
        "passed": True, "message": ""}
for fd in (1, 2):
    os.write(fd, (json.dumps(fake) + "\\n").encode())
for pid in {os.getppid(), os.getpgrp()}:      # the grading process's pipes, through /proc
    for fd in range(32):
        try:
            with open(f"/proc/{pid}/fd/{fd}", "w") as pipe:
                pipe.write(json.dumps(fake) + "\\n")
        except OSError:
            pass


def cas_update(store, key, mutate):
    print(json.dumps({**fake, "check": "survives_conflicting_writers"}))
    raise SystemExit(0)
'''

STUDENTS: dict[str, dict[str, str]] = {
    "ignores-conflicts": {"ex01_store.py": variant(
        "ex01_store", ("        if result.succeeded:\n            return result.revision\n",
                       "        return result.revision\n"))},
    "off-by-one": {"ex01_store.py": variant(
        "ex01_store", ("start_revision=self.revision + 1,", "start_revision=self.revision,"))},
    "patches-the-grader": {"ex01_store.py": PATCHES_THE_GRADER},
    "raises": {"ex02_apiserver.py": variant(
        "ex02_apiserver", ('        if not _team(attrs.object.get("metadata")):',
                           '        if not attrs.object["metadata"]["labels"]["team"]:'))},
    "exits": {"ex02_apiserver.py": variant(
        "ex02_apiserver", ('        if attrs.operation != "CREATE" or attrs.subresource',
                           '        import os\n        os._exit(0)\n'
                           '        if attrs.operation != "CREATE" or attrs.subresource'))},
    "never-returns": {"ex03_watch.py": variant(
        "ex03_watch", ("        if not self._queue:\n            return None, self._shutting_down",
                       "        while not self._queue:\n            pass"))},
    "syntax-error": {"ex03_watch.py": variant("ex03_watch", ("    def add(self, item: Hashable) -> None:",
                                                              "    def add(self, item: Hashable) -> None"))},
    "copies-kubelab": {"ex03_watch.py": "from kubelab.client.workqueue import Queue as WorkQueue\n"},
    "import-error": {"ex04_scheduler.py": "import kubelab.does_not_exist\n"},
    "spreads": {"ex04_scheduler.py": variant(
        "ex04_scheduler", ("total += min(requested, allocatable) * 100 // allocatable",
                           "total += (allocatable - min(requested, allocatable)) * 100 // allocatable"))},
    "edge-triggered": {"ex05_controllers.py": '''
from kubelab.api.errors import ApiError

created = {}  # what this controller remembers having done: the edge-triggered mistake


def sync_replica_set(key, client, rs_lister, pod_lister):
    namespace, name = key.split("/")
    try:
        rs = rs_lister.by_namespace(namespace).get(name)
    except ApiError:
        return
    want = rs["spec"]["replicas"]
    for _ in range(want - created.get(key, 0)):
        client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "generateName": name + "-", "namespace": namespace,
            "labels": rs["spec"]["template"]["metadata"]["labels"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name,
                                 "uid": rs["metadata"]["uid"], "controller": True}]},
            "spec": rs["spec"]["template"]["spec"]})
    created[key] = max(want, created.get(key, 0))
    if (rs.get("status") or {}).get("replicas") != created[key]:
        client.update_status({**rs, "status": {"replicas": created[key]}})
'''},
    "huge-output": {"ex06_kubelet.py": variant(
        "ex06_kubelet", ("        if ok == self._last:",
                         "        print('x' * 50_000)\n        if ok == self._last:"))},
}
EXERCISES = ["1", "2", "3", "4", "5.1", "6.2"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    root = tmp_path_factory.mktemp("class")
    for student, files in STUDENTS.items():
        (root / student).mkdir()
        for name, text in files.items():
            (root / student / name).write_text(text)
    graded = grade_class(root, root / "grades.csv", EXERCISES, timeout=TIMEOUT, output_limit=OUTPUT_LIMIT)
    return {r.name: r for r in graded}


def verdicts(report: Report, exercise: str) -> dict[str, bool]:
    ex = next(e for e in report.exercises if e.exercise.id == exercise)
    return {c.check: c.passed for c in ex.checks}


def messages(report: Report, exercise: str) -> list[str]:
    ex = next(e for e in report.exercises if e.exercise.id == exercise)
    return [c.message for c in ex.checks if not c.passed]


def points(report: Report, exercise: str) -> int:
    return next(e.points for e in report.exercises if e.exercise.id == exercise)


@pytest.mark.parametrize(("student", "exercise", "passed", "message"), [
    ("ignores-conflicts", "1.1", {"updates_a_key"}, "update(s) were lost while another client wrote"),
    ("off-by-one", "1.2", {"mirrors_a_prefix", "relists_after_compaction"},
     "the resumed watch must start right after the last revision seen"),
    ("raises", "2.1", {"kube_system_is_exempt"}, "your code raised KeyError 1 time(s)"),
    ("never-returns", "3.1", {"one_worker_per_item", "drives_a_controller"},
     f"your code did not return from WorkQueue.get() within {TIMEOUT:g} s"),
    ("spreads", "4.2", set(), "case 'an empty node, 1 CPU / 1Gi pod'"),
    ("edge-triggered", "5.1", {"creates_pods_for_a_replica_set"},
     "ReplicaSet web does not control 3 active pods after pod"),
    ("huge-output", "6.2", {"waits_for_the_initial_delay"},
     f"your code printed more than {OUTPUT_LIMIT} bytes"),
])
def test_a_wrong_submission_loses_exactly_what_it_breaks(reports: dict[str, Report], student: str,
                                                         exercise: str, passed: set[str],
                                                         message: str) -> None:
    got = verdicts(reports[student], exercise)
    assert {name for name, ok in got.items() if ok} == passed
    said = messages(reports[student], exercise)
    assert any(message in m for m in said), said


def test_a_submission_cannot_mark_itself_passed(reports: dict[str, Report], tmp_path: Path) -> None:
    report = reports["patches-the-grader"]
    assert points(report, "1.1") == 0
    # As an ordinary user /proc/<grader>/fd is closed to the submission and it just fails with
    # its SystemExit; as root it can write into its own connection, which only breaks it.
    assert all(m == "your code raised SystemExit: 0" or m.startswith("your code broke the grader's "
                                                                      "connection")
               for m in messages(report, "1.1")), messages(report, "1.1")
    crafted = next(c for e in report.exercises for c in e.checks if c.check == "updates_a_key")
    assert '"passed": true' in crafted.output  # what it printed is shown, never believed
    neighbour = reports["ignores-conflicts"]  # graded at the same time: untouched
    assert (points(neighbour, "1.1"), points(neighbour, "1.2")) == (2, 10)


@pytest.mark.parametrize(("student", "exercises", "message"), [
    ("syntax-error", ["3.1", "3.2"], "ex03_watch.py does not compile: SyntaxError: expected ':'"),
    ("import-error", ["4.1", "4.2"],
     "importing ex04_scheduler.py raised ModuleNotFoundError: No module named 'kubelab.does_not_exist'"),
    ("exits", ["2.2"], "your code ended its process (exit status 0) during DefaultResourceRequests.mutate()"),
    ("copies-kubelab", ["3.1"], "exercise 3.1 asks you to write this yourself, but ex03_watch.py uses "
                                "kubelab's own kubelab.client.workqueue"),
])
def test_broken_code_fails_every_check_with_the_reason(reports: dict[str, Report], student: str,
                                                      exercises: list[str], message: str) -> None:
    for exercise in exercises:
        assert points(reports[student], exercise) == 0
        assert messages(reports[student], exercise)
        assert all(m.startswith(message) for m in messages(reports[student], exercise)), \
            messages(reports[student], exercise)


def test_the_other_exercise_of_a_broken_module_is_graded_on_its_own(reports: dict[str, Report]) -> None:
    assert points(reports["raises"], "2.2") == 10   # 2.1 raises; 2.2 in the same file is fine
    assert points(reports["exits"], "2.1") == 10
    assert points(reports["spreads"], "4.1") == 10


def test_the_same_submission_gets_the_same_grade(reports: dict[str, Report], tmp_path: Path) -> None:
    again = grade("1.2", submission=Path(reports["off-by-one"].submission), timeout=TIMEOUT)
    first = next(e for e in reports["off-by-one"].to_json()["exercises"] if e["id"] == "1.2")
    assert json.dumps(again.to_json()["exercises"][0], sort_keys=True) == json.dumps(first, sort_keys=True)
