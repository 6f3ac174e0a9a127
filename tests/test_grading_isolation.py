"""A sandbox holds no reference code, no check and no solution: not in memory, not on disk
(issue 28). A submission that walks everything it can reach finds only its own marker; the
attacks that read the reference through a directory fd, through libc with ctypes, or through
`fork` + `execv("/bin/cat")` score nothing; a hidden check is named in no message.

The walkers and attackers are students of one class, graded once, beside an honest student.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from kubelab.grading import EXERCISES, Report, checks_for, grade, grade_class, load_checks
from kubelab.grading import exercises as registry
from kubelab.grading.contain import containment, sealing
from kubelab.grading.prune import plan

ROOT = Path(__file__).resolve().parent.parent
KUBELAB = ROOT / "kubelab"
MARKER = "student-marker-4f1c9e"  # the walker's own: the control that the probe works
TOKEN = "hidden-token-93b2a7"     # only in the hidden check's file

pytestmark = pytest.mark.skipif(bool(containment()[1] or sealing()),
                                reason=containment()[1] or sealing() or "contained")


def _reference_files(exercise_ids: list[str]) -> list[Path]:
    """What no sandbox of these exercises may hold: the checks and the rest of the grader, the
    solutions, and every module of kubelab its sandbox kubelab leaves out (the reference)."""
    files = sorted((ROOT / "solutions").glob("*.py")) + sorted((KUBELAB / "grading").rglob("*.py"))
    for ex in exercise_ids:
        layout = plan(EXERCISES[ex].forbidden_imports)
        kept = set(layout.copy) | set(layout.rewrite)
        files += [f for f in KUBELAB.rglob("*.py") if str(f.relative_to(ROOT)) not in kept]
    return sorted(set(files) - {KUBELAB / "grading" / n for n in
                                ("sandbox.py", "zygote.py", "rpc.py", "remote.py", "pipe.py", "__init__.py")})


def _fingerprints(files: list[Path], kept: list[Path]) -> dict[str, list[str]]:
    """Each file's hash, and its longest lines that no kept file has (to find it copied into
    another file, or loaded)."""
    kept_text = "\n".join(f.read_text() for f in kept)
    hashes, lines = [], []
    for f in files:
        data = f.read_bytes()
        hashes.append(hashlib.sha256(data).hexdigest())
        own = sorted({line.strip() for line in data.decode().splitlines()
                      if len(line.strip()) >= 40 and line.strip() not in kept_text}, key=len)
        lines += own[-2:]
    return {"hashes": hashes, "lines": lines}


# Walks gc's objects, sys.modules and every file it can open, and reports what it finds as the
# message of the exception its import raises (so in every check's failure message).
WALKER = '''
import base64, gc, hashlib, json, os, sys, types

# (base64: the module names would otherwise read as imports of them to the grader's static look)
FINGERPRINTS = json.loads(base64.b64decode("{fingerprints}"))
NAMES = json.loads(base64.b64decode("{names}"))
READ_RUNTIME = {read_runtime}
MARKER = "{marker}"


def own_marker():
    return "{marker}"


def walk():
    found, own = [], {{"memory": False, "file": False}}
    lines = [line.encode() for line in FINGERPRINTS["lines"]]
    hashes = set(FINGERPRINTS["hashes"])
    seen = set()
    objects = list(gc.get_objects()) + list(sys.modules.values())
    for module in list(sys.modules.values()):
        objects += list(getattr(module, "__dict__", {{}}).values())
    for obj in objects:
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        code = getattr(obj, "__code__", None) if not isinstance(obj, types.CodeType) else obj
        name = getattr(obj, "__module__", None) if not isinstance(obj, types.ModuleType) else obj.__name__
        if isinstance(name, str) and any(name == n or name.startswith(n + ".") for n in NAMES):
            found.append(f"object of {{name}}: {{type(obj).__name__}}")
        if isinstance(code, types.CodeType):
            if any(f in code.co_filename for f in ("/grading/checks/", "/solutions/")):
                found.append(f"code from {{code.co_filename}}")
            if MARKER in code.co_consts:
                own["memory"] = True
    # (sys.path: the submission's folder, its kubelab, then the Python runtime's)
    runtime = [p for p in sys.path[2:] if p] + [sys.base_prefix, "/usr/lib", "/lib"]
    for top, dirs, files in os.walk("/"):
        if not READ_RUNTIME and any(top.startswith(r) for r in runtime):
            continue
        for name in files:
            path = os.path.join(top, name)
            try:
                with open(path, "rb") as f:
                    data = f.read(8 << 20)
            except OSError:
                continue
            if top == sys.path[0]:  # the student's own folder (these walkers hold the lines)
                pass
            elif hashlib.sha256(data).hexdigest() in hashes:
                found.append(f"a copy of a reference file: {{path}}")
            elif any(line in data for line in lines):
                found.append(f"reference text in {{path}}")
            if path.endswith(".py") and MARKER.encode() in data and "{marker_file}" in path:
                own["file"] = True
    return found, own


_found, _own = walk()
raise RuntimeError("WALK " + json.dumps({{"found": _found[:20], "own": _own}}))
'''

# Reads a file it may not see by the three ways around a path guard; returns it or "".
READER = '''
import ctypes, os


def via_dir_fd(folder, name):
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    inner = os.open(name, os.O_RDONLY, dir_fd=fd)
    return os.read(inner, 1 << 20).decode()


def via_libc(folder, name):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(os.path.join(folder, name).encode(), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "open")
    buffer = ctypes.create_string_buffer(1 << 20)
    size = libc.read(fd, buffer, 1 << 20)
    return buffer.raw[:max(size, 0)].decode()


def via_cat(folder, name):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 1)
        try:
            os.execv("/bin/cat", ["cat", os.path.join(folder, name)])
        finally:
            os._exit(1)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.waitpid(pid, 0)
    return data.decode()


def steal(folder, name):
    for way in (via_dir_fd, via_libc, via_cat):
        try:
            text = way(folder, name)
        except (OSError, RuntimeError, UnicodeError):
            continue
        if text:
            print(f"{{way.__name__}} read {{name}}")
            return text
    return ""
'''

# 5.1 and 5.2 from the reference solution, if any way reads it; else nothing.
STEALS_SOLUTIONS = READER + '''
scope = {{"__name__": "copied"}}
exec(steal("{root}", "solutions/ex05_controllers.py") or "sync_replica_set = rolling_update_step = None",
     scope)
sync_replica_set, rolling_update_step = scope["sync_replica_set"], scope["rolling_update_step"]
'''

# 1.1's hidden check wants the token written in the check's file.
STEALS_HIDDEN = READER + '''
import re


def cas_update(store, key, mutate):
    found = re.findall(r"hidden-token-[0-9a-f]+", steal("{hidden}", "secret_checks.py"))
    return found[0] if found else None
'''

HIDDEN_CHECKS = f'''
from kubelab.grading import check


@check("1.1", points=5)
def knows_the_token(ctx):
    if ctx.learner(None, "what is the token?", None) != "{TOKEN}":
        ctx.fail("that is not the token")


@check("1.1", points=1)
def breaks_after_calling(ctx):
    ctx.learner(None, "k", None)
    raise ValueError("the hidden check broke")
'''

# Which exercise each walker module is graded for (one each: a module's sandbox kubelab is its
# exercise's). The one that also reads the Python runtime's every file runs alone (one check).
WALKED = {"ex05_controllers": "5.2", "ex04_scheduler": "4.1", "ex07_ha": "7.2", "ex01_store": "1.2"}
READS_ALL = ("ex10_scale", "10.1")
GRADING = [f"kubelab.grading.{n}" for n in ("checks", "exercises", "grader", "runner", "shared",
                                            "context", "jobs", "launch", "prune", "contain")]


def _walker(module: str, exercise: str, *, read_runtime: bool) -> str:
    files = _reference_files([exercise])
    kept = [ROOT / p for p in plan(EXERCISES[exercise].forbidden_imports).copy
            if not p.startswith("kubelab/grading/")]
    def b64(value: object) -> str:
        return base64.b64encode(json.dumps(value).encode()).decode()

    return WALKER.format(fingerprints=b64(_fingerprints(files, kept)),
                         names=b64([*GRADING, *EXERCISES[exercise].forbidden_imports]),
                         marker=MARKER, marker_file=f"/{module}.py", read_runtime=read_runtime)


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("instructor") / "checks"
    folder.mkdir()
    (folder / "secret_checks.py").write_text(HIDDEN_CHECKS)
    return folder


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, hidden: Path) -> dict[str, Report]:
    klass = tmp_path_factory.mktemp("isolation")
    students = {
        "walker": {f"{module}.py": _walker(module, ex, read_runtime=False) for module, ex in WALKED.items()},
        "steals-solutions": {"ex05_controllers.py": STEALS_SOLUTIONS.format(root=ROOT)},
        "steals-hidden-checks": {"ex01_store.py": STEALS_HIDDEN.format(hidden=hidden)},
        "honest": {f"{m}.py": (ROOT / "solutions" / f"{m}.py").read_text()
                   for m in ("ex01_store", "ex05_controllers")},
    }
    for student, texts in students.items():
        (klass / student).mkdir()
        for name, text in texts.items():
            (klass / student / name).write_text(text)
    exercises = sorted({*WALKED.values(), "1.1", "5.1"})
    load_checks()
    saved = {e: list(c) for e, c in registry._CHECKS.items()}  # the hidden checks register for good:
    try:                                                        # not for the tests after these
        graded = grade_class(klass, klass / "grades.csv", exercises, checks_dirs=[hidden], timeout=60)
    finally:
        registry._CHECKS.clear()
        registry._CHECKS.update(saved)
        registry._LOADED_DIRS.discard(str(hidden.resolve()))
    return {r.name: r for r in graded}


@pytest.fixture(scope="module")
def reads_all(tmp_path_factory: pytest.TempPathFactory) -> Report:
    folder = tmp_path_factory.mktemp("reads-everything")
    module, exercise = READS_ALL
    (folder / f"{module}.py").write_text(_walker(module, exercise, read_runtime=True))
    load_checks()
    first = checks_for(exercise)[0].name
    return grade(exercise, submission=folder, check=first, timeout=300)


def _walks(report: Report, exercise: str) -> list[dict[str, object]]:
    said = [c.message for c in report.checks() if c.exercise == exercise]
    walks = [json.loads(m.split("WALK ", 1)[1]) for m in said if "WALK " in m]
    assert walks and len(walks) == len(said), said
    return walks


@pytest.mark.parametrize("exercise", sorted({*WALKED.values(), "1.1", "5.1"}))
def test_a_walk_through_the_sandbox_finds_only_the_students_own_code(reports: dict[str, Report],
                                                                    exercise: str) -> None:
    for walk in _walks(reports["walker"], exercise):
        assert walk["own"] == {"memory": True, "file": True}  # the probe sees what is there...
        assert walk["found"] == []                            # ...and nothing of the grader's


def test_every_file_of_the_sandbox_read_holds_no_reference(reads_all: Report) -> None:
    walks = _walks(reads_all, READS_ALL[1])
    assert len(walks) == 1 and walks[0] == {"found": [], "own": {"memory": True, "file": True}}


def test_reading_the_solutions_around_a_path_guard_scores_nothing(reports: dict[str, Report]) -> None:
    thief = reports["steals-solutions"]
    checks = [c for c in thief.checks() if c.exercise in ("5.1", "5.2")]
    assert checks and not [c.check for c in checks if c.passed or c.points]
    assert not [c.output for c in checks if " read solutions/" in c.output]
    honest = reports["honest"]
    full = {e: EXERCISES[e].points for e in ("1.1", "5.1", "5.2")}
    got = {e.exercise.id: sum(c.points for c in e.checks if c.check not in ("knows_the_token",
                                                                            "breaks_after_calling"))
           for e in honest.exercises if e.exercise.id in full}
    assert got == full


def test_a_hidden_check_never_enters_the_sandbox_and_is_named_nowhere(reports: dict[str, Report],
                                                                      hidden: Path) -> None:
    thief = reports["steals-hidden-checks"]
    token = next(c for c in thief.checks() if c.check == "knows_the_token")
    assert not token.passed and token.points == 0
    assert not [c.check for c in thief.checks() if c.passed]
    broke = next(c for r in reports.values() for c in r.checks() if c.check == "breaks_after_calling"
                 and r.name == "steals-hidden-checks")
    assert broke.status in ("fail", "error") and "the hidden check broke" in broke.message + broke.output
    for report in reports.values():  # (the replay command, for whoever runs the course, has --checks)
        said = json.dumps([[c.message, c.output, c.trace, c.hint, c.expected, c.got]
                           for c in report.checks()])
        assert str(hidden) not in said and "secret_checks" not in said, report.name
        assert TOKEN not in said
