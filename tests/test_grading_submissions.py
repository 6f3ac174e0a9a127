"""Deliberately wrong submissions each lose exactly the points they should, with the right
message, and none of them can grade itself, crash the grader or touch another student's grade.

The whole class is graded once (in parallel, with a short time limit); each test reads its
student's report. The attacks of issue 15 are students of this class too: each scores 0, and
the honest students graded beside them keep every point.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import re
from pathlib import Path

import pytest

from kubelab.grading import EXERCISES as ALL_EXERCISES
from kubelab.grading import Report, grade, grade_class
from kubelab.grading.contain import containment, sealing
from kubelab.grading.source import MAX_SOURCE

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
try:  # (the sandbox's kubelab has no grader to patch: issue 28)
    import kubelab.grading.context as context
    import kubelab.grading.grader as grader
    import kubelab.grading.runner as runner

    runner.run_check = lambda *a, **k: {"type": "result", "passed": True}
    context.CheckContext.fail = lambda *a, **k: None
    grader._verdicts = lambda job: {c.name: {"passed": True} for c in job.checks}
except ImportError as err:
    print("nothing to patch:", err, flush=True)
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

def do_nothing(module: str) -> str:
    """The honest stub with every `raise NotImplementedError(...)` made a `return None`."""
    lines = (ROOT / "exercises" / f"{module}.py").read_text().splitlines()
    return "\n".join(line.split("raise NotImplementedError")[0] + "return None"
                     if "raise NotImplementedError(" in line else line for line in lines) + "\n"


MODULES = ("ex01_store", "ex02_apiserver", "ex03_watch", "ex04_scheduler", "ex05_controllers",
           "ex06_kubelet")

# A process that outlives its check (double fork, setsid) and, if it could, would rewrite the
# gradebook after the grader wrote it. It holds a lock (taken before the fork, on a file opened
# read-only: the filesystem is read-only to a contained sandbox) for as long as it lives.
DAEMON = '''
import fcntl, os, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
lock = open(HERE / "alive.lock")
fcntl.flock(lock, fcntl.LOCK_EX)
print("a daemon holds alive.lock", flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        end = time.monotonic() + 120
        while time.monotonic() < end:
            for path in [HERE.parent / "grades.csv", *HERE.parent.glob("grades/*.json")]:
                try:
                    path.write_text("student,total\\nescapes-the-check,120\\n")
                except OSError:
                    pass
            time.sleep(0.05)
    os._exit(0)
os.wait()
lock.close()  # (the daemon's copy of the descriptor keeps the lock)
'''

# What won 110/120 before: a background process that reads every job it can find through
# /proc/PID/fd and writes PASS lines with its nonce into every pipe it can open.
FORGER = '''
import json, os, re, time

def forge():
    end = time.monotonic() + 30
    nonces = set()
    while time.monotonic() < end:
        for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
            for fd in range(12):
                path = f"/proc/{pid}/fd/{fd}"
                try:
                    with open(path, "rb", buffering=0) as pipe:
                        os.set_blocking(pipe.fileno(), False)
                        nonces.update(re.findall(rb'"nonce": "([0-9a-f]{32})"', pipe.read(1 << 16) or b""))
                except OSError:
                    pass
                for nonce in nonces or {b"0" * 32}:
                    for ex, check in (("1.1", "updates_a_key"), ("1.1", "survives_conflicting_writers"),
                                      ("1.2", "mirrors_a_prefix"), ("3.1", "dedupes_waiting_items")):
                        line = {"nonce": nonce.decode(), "type": "result", "exercise": ex,
                                "check": check, "status": "pass", "passed": True, "message": ""}
                        try:
                            with open(path, "w") as pipe:
                                pipe.write(json.dumps(line) + "\\n")
                        except OSError:
                            pass
        time.sleep(0.01)

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        forge()
    os._exit(0)
os.wait()
'''

DYNAMIC_IMPORT = '''
import importlib

plugins = importlib.import_module("kubelab.scheduler." + "plugins")
TaintFilter = BinPackingScore = None
'''

DUNDER_IMPORT = '''
WorkQueue = getattr(__import__("kubelab.client." + "work" + "queue", fromlist=["Queue"]), "Queue")
Reflector = None
'''

READS_SOLUTIONS = '''
from pathlib import Path
import kubelab

reference = Path(kubelab.__file__).resolve().parents[1] / "solutions" / "ex04_scheduler.py"
scope = {"__name__": "copied"}
exec(compile(reference.read_text(), str(reference), "exec"), scope)
TaintFilter, BinPackingScore = scope["TaintFilter"], scope["BinPackingScore"]
'''

MIRROR_READS_ON_DEMAND = variant("ex01_store", ("""    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store
        self.prefix = prefix
        self.items: dict[str, bytes] = {}""", """    @property
    def items(self):
        return {kv.key: kv.value for kv in self.store.range(self.prefix, prefix=True).kvs}

    @items.setter
    def items(self, value):
        pass

    @property
    def revision(self):
        return self.store.revision

    @revision.setter
    def revision(self, value):
        pass

    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store
        self.prefix = prefix"""))

# Issue 28: never applies a watch event; reads the store through a txn whenever items is looked
# at (no store.range to count), so items are always "right" and revision follows the watch.
MIRROR_NEVER_APPLIES_EVENTS = variant("ex01_store", ("""        for event in response.events:
            if event.type == "PUT":
                self.items[event.kv.key] = event.kv.value
            else:
                self.items.pop(event.kv.key, None)
        self.revision = response.header_revision""", """        self.revision = response.header_revision"""),
    ("""    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store""", """    @property
    def items(self) -> dict[str, bytes]:
        read = self.store.txn([], [RangeRequest(self.prefix, prefix=True)], [])
        return {kv.key: kv.value for kv in read.responses[0].kvs}

    @items.setter
    def items(self, value: dict[str, bytes]) -> None:
        pass

    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store"""))

# An exception message that tries to take over the terminal the report is printed on: clear
# the screen, reverse the text, end the line early and forge a verdict, carry a NUL and a lone
# surrogate (which cannot be encoded at all).
HOSTILE = ("\x1b[2J\x1b[32mclean\u202eslap\u2066 \x00 \udc80\n  PASS  forged_one"
           + " " * 40 + "10/10\r  PASS  forged_two" + " " * 40 + "10/10\u2028  PASS  forged_three 1/1")
# Folder names a spreadsheet would run as formulas: each is a student (with nothing handed in).
FORMULAS = ("=1+2", "+SUM(A1)", "-2", "@cmd", "\tTab", "\rReturn")
SKIPPED: list[str] = []  # what grade_class said it did not grade

STUDENTS: dict[str, dict[str, str]] = {
    "honest": {f"{m}.py": (ROOT / "solutions" / f"{m}.py").read_text()
               for m in ("ex01_store", "ex04_scheduler")},
    "does-nothing": {f"{m}.py": do_nothing(m) for m in MODULES},
    "escapes-the-check": {"ex01_store.py": do_nothing("ex01_store") + DAEMON},
    "forges-verdicts": {"ex01_store.py": do_nothing("ex01_store") + FORGER,
                        "ex03_watch.py": do_nothing("ex03_watch") + FORGER},
    "imports-dynamically": {"ex04_scheduler.py": DYNAMIC_IMPORT, "ex03_watch.py": DUNDER_IMPORT},
    "reads-solutions": {"ex04_scheduler.py": READS_SOLUTIONS},
    "imports-the-checks": {"ex05_controllers.py": (  # the checks hold the expected answers
        "from kubelab.grading.checks.ex05_controllers import reference_step as rolling_update_step\n"
        "sync_replica_set = rolling_update_step\n")},
    "mirror-reads-on-demand": {"ex01_store.py": MIRROR_READS_ON_DEMAND},
    "mirror-never-applies-events": {"ex01_store.py": MIRROR_NEVER_APPLIES_EVENTS},
    "no-current-term-check": {"ex07_ha.py": variant(  # commits an older term's entry by counting
        "ex07_ha", ("and match_terms[majority] == current_term:", ":"))},
    "no-idle-reset": {"ex10_scale.py": variant(  # an idle queue keeps its old virtual start
        "ex10_scale", ("""        if not queue.waiting and not queue.executing:
            queue.virtual_start = max(queue.virtual_start, self.virtual_time)
""", ""))},
    "rejects-with-seats-free": {"ex10_scale.py": variant(  # a full queue refuses, seats free or not
        "ex10_scale", ("""        if self.seats_in_use >= self.concurrency_limit and \\
                len(queue.waiting) >= self.queue_length_limit:""",
                       """        if len(queue.waiting) >= self.queue_length_limit:"""))},
    "too-large": {"ex06_kubelet.py": variant("ex06_kubelet") + "#" * MAX_SOURCE + "\n"},
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
    "hostile-messages": {"ex02_apiserver.py": variant(
        "ex02_apiserver", ('            raise admission_forbidden(attrs, \'missing required label "team"\')',
                           '            raise ValueError(HOSTILE)')) + f"\nHOSTILE = {HOSTILE!r}\n"},
    "huge-message": {"ex02_apiserver.py": variant(  # 15 MiB, but only when a pod is created
        "ex02_apiserver", ('            raise admission_forbidden(attrs, \'missing required label "team"\')',
                           '            if attrs.resource == "pods" and attrs.operation == "CREATE":\n'
                           '                raise ValueError("x" * (15 << 20))\n'
                           '            raise admission_forbidden(\n'
                           '                attrs, \'missing required label "team"\')'))},
    "huge-output": {"ex06_kubelet.py": variant(
        "ex06_kubelet", ("        if ok == self._last:",
                         "        print('x' * 50_000)\n        if ok == self._last:"))},
}
EXERCISES: list[str] = []  # all of them


@pytest.fixture(scope="module")
def klass(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("class")
    for student, files in STUDENTS.items():
        (root / student).mkdir()
        for name, text in files.items():
            (root / student / name).write_text(text)
    (root / "escapes-the-check" / "alive.lock").write_text("")
    (root / "symlinked").mkdir()  # a link to the reference solution is not a submission
    (root / "symlinked" / "ex01_store.py").symlink_to(ROOT / "solutions" / "ex01_store.py")
    (root / "links-outside").mkdir()
    (root / "links-outside" / "exercises").symlink_to(ROOT / "solutions")
    for name in FORMULAS:
        (root / name).mkdir()
    outside = tmp_path_factory.mktemp("outside") / "elsewhere"  # a student folder that is a link
    outside.mkdir()
    (outside / "ex01_store.py").write_text((ROOT / "solutions" / "ex01_store.py").read_text())
    (root / "linked-folder").symlink_to(outside)
    (root / os.fsdecode(b"not-utf8-\xff")).mkdir()  # a name the gradebook cannot hold
    (root / os.fsdecode(b"not-utf8-\xff") / "ex01_store.py").write_text("")
    return root


@pytest.fixture(scope="module")
def reports(klass: Path) -> dict[str, Report]:
    graded = grade_class(klass, klass / "grades.csv", EXERCISES, timeout=TIMEOUT, output_limit=OUTPUT_LIMIT,
                         skipped=SKIPPED.append)
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
    ("mirror-never-applies-events", "1.2", set(),
     "items changed as soon as the store changed, before any watch event told the mirror: items "
     "must come from the watch events, not from reading the store when looked at"),
])
def test_a_wrong_submission_loses_exactly_what_it_breaks(reports: dict[str, Report], student: str,
                                                         exercise: str, passed: set[str],
                                                         message: str) -> None:
    got = verdicts(reports[student], exercise)
    assert {name for name, ok in got.items() if ok} == passed
    said = messages(reports[student], exercise)
    assert any(message in m for m in said), said


# Issue 28: plausible mistakes that used to score 10/10 (7.2: 7/10). Each gets 0 on the check
# whose name and message say what is wrong. (Their other checks are compared exactly in
# test_apf_exercise.py and test_raft_exercise.py, with time limits that suit the longer replays;
# here, at 2 s a check, a long replay may run out of time.)
@pytest.mark.parametrize(("student", "exercise", "check", "message"), [
    ("mirror-never-applies-events", "1.2", "mirrors_a_prefix",
     "before any watch event told the mirror: items must come from the watch events"),
    ("no-current-term-check", "7.2", "keeps_raft_safe_under_faults",
     "with 5 members: the Raft paper's figure 8, message by message"),
    ("no-current-term-check", "7.2", "commits_like_raft", "commit index = 1 (entry 1 is of term 1: "
     "an entry of an older term is never committed by counting replicas)"),
    ("no-idle-reset", "10.1", "an_idle_queue_gets_no_credit",
     "the idle queue was credited for its idle time"),
    ("rejects-with-seats-free", "10.1", "rejects_only_when_every_seat_is_busy",
     "arrive while seats are free, so a full queue is no reason to refuse them"),
])
def test_a_plausible_mistake_scores_zero_on_the_check_that_names_it(
        reports: dict[str, Report], student: str, exercise: str, check: str, message: str) -> None:
    ex = next(e for e in reports[student].exercises if e.exercise.id == exercise)
    named = next(c for c in ex.checks if c.check == check)
    assert (named.passed, named.points, named.status) == (False, 0, "fail")
    assert message in named.message + " " + (named.got or ""), (named.message, named.got)
    assert ex.points < ex.exercise.points


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
    assert "nothing to patch: No module named 'kubelab.grading.context'" in crafted.output
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


FULL = {e.id: e.points for e in ALL_EXERCISES.values()}


@pytest.mark.parametrize(("student", "exercise"), [
    ("does-nothing", None), ("escapes-the-check", None), ("forges-verdicts", None),
    ("imports-dynamically", None), ("reads-solutions", None), ("imports-the-checks", None),
    ("mirror-reads-on-demand", "1.2"),
    ("too-large", None), ("symlinked", None), ("links-outside", None)])
def test_every_attack_scores_zero(reports: dict[str, Report], student: str, exercise: str | None) -> None:
    checks = [c for c in reports[student].checks() if exercise in (None, c.exercise)]
    assert checks and not [(c.exercise, c.check) for c in checks if c.points or c.passed]
    assert not [c.message for c in checks if c.status == "error"]


def test_the_honest_students_beside_the_attacks_keep_every_point(reports: dict[str, Report],
                                                                  klass: Path) -> None:
    honest = reports["honest"]
    assert {e.exercise.id: e.points for e in honest.exercises if e.points} == \
        {i: FULL[i] for i in ("1.1", "1.2", "4.1", "4.2")}
    neighbour = reports["ignores-conflicts"]
    assert (points(neighbour, "1.1"), points(neighbour, "1.2")) == (2, 10)
    # The gradebook on disk is the grader's, whatever a submission's processes tried to write.
    rows = {r["student"]: r for r in csv.DictReader((klass / "grades.csv").open(newline=""))}
    cell = {name: "'" + name if name in FORMULAS else name for name in reports}
    assert set(rows) == set(cell.values())
    assert all(int(rows[cell[name]]["total"]) == r.total for name, r in reports.items())
    saved = json.loads((klass / "grades" / "honest.json").read_text())
    assert saved["total"] == honest.total == 40


def test_no_process_of_a_check_outlives_it(reports: dict[str, Report], klass: Path) -> None:
    outputs = [c.output for c in reports["escapes-the-check"].checks() if c.exercise == "1.1"]
    assert outputs and all("a daemon holds alive.lock" in o for o in outputs)  # it did start...
    if containment()[1]:
        pytest.skip(containment()[1])
    with (klass / "escapes-the-check" / "alive.lock").open() as lock:  # ...and nobody holds it now
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_contained_submission_writes_nothing_on_disk(reports: dict[str, Report], klass: Path) -> None:
    if containment()[1] or sealing():
        pytest.skip(containment()[1] or sealing())
    assert not (klass / "grades" / "escapes-the-check.json").read_text().startswith("student,total")
    assert sorted(p.name for p in (klass / "escapes-the-check").iterdir()) == ["alive.lock", "ex01_store.py"]


def test_what_the_attacks_are_told(reports: dict[str, Report]) -> None:
    said = {(name, ex): messages(reports[name], ex) for name, ex in (
        ("imports-dynamically", "4.1"), ("imports-dynamically", "3.1"), ("reads-solutions", "4.2"),
        ("too-large", "6.1"), ("symlinked", "1.1"), ("links-outside", "1.2"),
        ("mirror-reads-on-demand", "1.2"), ("imports-the-checks", "5.2"))}
    assert all("exercise 4.1 asks you to write this yourself: kubelab.scheduler.plugins is not "
               "available while grading" in m for m in said["imports-dynamically", "4.1"])
    assert all("exercise 3.1 asks you to write this yourself: kubelab.client.workqueue" in m
               for m in said["imports-dynamically", "3.1"])
    # No solutions/ beside the sandbox's kubelab: its filesystem has none at all.
    assert all("FileNotFoundError" in m and "solutions/ex04_scheduler.py" in m
               for m in said["reads-solutions", "4.2"]), said["reads-solutions", "4.2"]
    size = os.path.getsize(Path(reports["too-large"].submission) / "ex06_kubelet.py")
    assert all(m == f"ex06_kubelet.py is too large to grade: {size} bytes, the limit is {MAX_SOURCE} "
               "bytes (512 KiB)" for m in said["too-large", "6.1"])
    assert all("exercise 5.2 asks you to write this yourself: kubelab.grading.checks "
               "is not available while grading" in m for m in said["imports-the-checks", "5.2"])
    linked = "ex01_store.py is a symbolic link: hand in the file itself"
    assert all(m == linked for m in said["symlinked", "1.1"] + said["links-outside", "1.2"])
    assert any("before any watch event told the mirror: items must come from the watch events" in m
               for m in said["mirror-reads-on-demand", "1.2"])


def test_a_bad_student_folder_is_skipped_and_the_class_is_graded(reports: dict[str, Report],
                                                                  klass: Path) -> None:
    assert "linked-folder" not in reports and not [n for n in reports if n.startswith("not-utf8")]
    assert sorted(SKIPPED) == [
        f"skipped 'linked-folder' in {klass}: it is a symbolic link, not a student's folder (copy "
        "the folder itself into the class)",
        f"skipped 'not-utf8-\\xff' in {klass}: its name is not valid UTF-8 (rename the folder to "
        "grade it)"]
    rows = list(csv.reader((klass / "grades.csv").open(newline="", encoding="utf-8")))
    assert len(rows) == 1 + len(reports) and rows[1:] == sorted(rows[1:], key=lambda r: r[0].lstrip("'"))
    assert "linked-folder" not in {r[0] for r in rows} and reports["honest"].total == 40
    assert not (klass / "grades" / "linked-folder.json").exists()


def test_a_folder_name_is_never_a_formula_in_the_gradebook(reports: dict[str, Report], klass: Path) -> None:
    text = (klass / "grades.csv").open(newline="", encoding="utf-8").read()
    rows = {r[0]: r for r in csv.reader(io.StringIO(text, newline=""))}
    for name in FORMULAS:
        assert rows["'" + name][-3:-1] == ["0", str(reports[name].max_total)]
        assert f'"\'{name}",' in text
        assert json.loads((klass / "grades" / f"{name}.json").read_text())["name"] == name
    assert all(line.startswith('"') for line in text.split("\r\n") if line)  # every cell quoted


def test_hostile_messages_are_shown_inert(reports: dict[str, Report]) -> None:
    report = reports["hostile-messages"]
    said = messages(report, "2.1")
    assert len(said) == 4 and all(m.endswith(f"first: {HOSTILE})") for m in said), said  # kept as data
    text = report.text(verbose=True)
    text.encode("utf-8")  # no lone surrogate left
    assert not set(text) & {"\x1b", "\u202e", "\u2066", "\x00", "\udc80", "\r", "\u2028"}
    assert "\\x1b[2J\\x1b[32mclean\\u202eslap\\u2066 \\x00 \\udc80" in text
    marks = [line.split()[1] for line in text.splitlines() if re.match(r"  (PASS|FAIL|ERROR) ", line)]
    assert marks == [c.check for c in report.checks()]  # the forged ones are not verdict lines...
    forged = [line for line in text.splitlines()  # (the trace shows a repr(): inert already)
              if "forged_one" in line and "RemoteError(" not in line]
    assert forged and all(re.match(r" {10,}PASS  forged_one .*10/10\\x0d  PASS  forged_two .*"
                                   r"10/10\\u2028  PASS  forged_three", line) for line in forged), forged


def test_a_huge_message_is_cut_and_the_other_verdicts_stay(reports: dict[str, Report]) -> None:
    report = reports["huge-message"]  # its 15 MiB message is cut in the sandbox, before the wire
    assert {n for n, ok in verdicts(report, "2.1").items() if ok} == \
        {"covers_updates_but_not_status_or_delete", "deployments_and_their_templates"}
    said = messages(report, "2.1")
    assert len(said) == 2 and all("your code raised ValueError 1 time(s); first: xxx" in m and
                                  m.endswith("x (cut)") and len(m) == 2000 + len(" (cut)") for m in said), \
        [m[:200] for m in said]
    failed = [c for c in report.checks() if c.exercise == "2.1" and not c.passed]
    assert all(c.got and c.got.endswith(" (cut)") and len(c.got) <= 2006 for c in failed)
    assert "xxx (cut)\n" in report.text()
