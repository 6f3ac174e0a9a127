"""`kubelab grade`: run the checks, one grading process per exercise per submission, and score.

The grader reads each submission file once (source.py: no symlinks, nothing outside the
submission folder, at most MAX_SOURCE bytes), starts the grading processes (jobs.py), and keeps
from what each sends back only lines that carry the job's random nonce and name a check it
asked for, once each; the points come from the grader's own registry, never from the process.
A check without a verdict (the process crashed or ran out of time) scores zero with the reason.
The class gradebook is written once, at the end, from these verdicts alone (report.py).

The clusters the checks build run on virtual time, seeded, so the same submission gets the same
grade.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kubelab.grading.contain import containment, sealing
from kubelab.grading.exercises import EXERCISES, Check, Exercise, checks_for, load_checks
from kubelab.grading.jobs import Job, run_jobs
from kubelab.grading.prune import plan
from kubelab.grading.report import (
    CheckResult,
    ExerciseResult,
    Report,
    feedback_note,
    printable_name,
    write_class_reports,
)
from kubelab.grading.runner import DEFAULT_OUTPUT_LIMIT, DEFAULT_TIMEOUT
from kubelab.grading.source import Source, find_module, read_source

__all__ = ["find_exercises_dir", "grade", "grade_class", "select_exercises"]


def find_exercises_dir(start: Path | None = None) -> Path:
    """The learner's exercises/ folder: in the current directory or one above it (notebooks/
    sits next to exercises/), else next to the kubelab package."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "exercises").is_dir():
            return folder / "exercises"
    return Path(__file__).resolve().parents[2] / "exercises"


def select_exercises(ids: Iterable[str]) -> list[Exercise]:
    """["4.1", "1"] -> exercise 4.1 and every exercise of notebook 01, in course order.
    Nothing selected means every exercise that has checks."""
    wanted = [str(i) for i in ids]
    chosen = []
    for ex in EXERCISES.values():
        if not checks_for(ex.id):
            continue
        notebook = ex.id.split(".")[0]
        if not wanted or ex.id in wanted or notebook in wanted or notebook.zfill(2) in wanted:
            chosen.append(ex)
    known = {e.id for e in EXERCISES.values()} | {e.id.split(".")[0] for e in EXERCISES.values()}
    unknown = [w for w in wanted if w not in known and w.lstrip("0") not in known]
    if unknown:
        raise ValueError(f"no exercise {', '.join(unknown)}; exercises: {', '.join(EXERCISES)}")
    return chosen


def grade(exercises: str | Iterable[str] = (), *, submission: str | Path | None = None,
          check: str | None = None, seed: int | None = None, checks_dirs: Iterable[str | Path] = (),
          jobs: int | None = None, timeout: float = DEFAULT_TIMEOUT,
          output_limit: int = DEFAULT_OUTPUT_LIMIT, verbose: bool = False) -> Report:
    """Grade exercises ("4.1", "4", or a list; default: all) of one submission folder (default:
    your exercises/). Returns a Report, which a notebook shows as text (verbose: with what your
    code printed and the end of the cluster's trace for every failed check)."""
    folder = Path(submission) if submission is not None else find_exercises_dir()
    ids = [exercises] if isinstance(exercises, str) else list(exercises)
    reports = _grade_many([(folder.name, folder)], ids, check=check, seed=seed,
                          checks_dirs=list(checks_dirs), jobs=jobs, timeout=timeout,
                          output_limit=output_limit, default_submission=submission is None)
    reports[0].verbose = verbose
    note = feedback_note(folder) if submission is None else None
    if note:  # `kubelab workshop feedback` returned the instructor's report next to exercises/
        reports[0].notes.append(note)
    return reports[0]


def grade_class(folder: str | Path, out: str | Path | None = None, exercises: Iterable[str] = (),
                *, checks_dirs: Iterable[str | Path] = (), jobs: int | None = None,
                timeout: float = DEFAULT_TIMEOUT, output_limit: int = DEFAULT_OUTPUT_LIMIT,
                skipped: Callable[[str], None] | None = None) -> list[Report]:
    """Grade every student folder in `folder` (sorted by name); write the CSV and JSON reports.

    A folder that is a symbolic link (it may point anywhere: it is not a submission) or whose
    name is not valid UTF-8 (it cannot be written into the gradebook) is not graded: what is
    wrong is passed to `skipped` (default: printed on stderr) and the rest of the class is."""
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"--class {folder}: no such directory")
    say = skipped or (lambda message: print(message, file=sys.stderr))
    students = []
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or not path.is_dir():
            continue
        problem = _not_a_student(path)
        if problem:
            say(f"skipped '{printable_name(path.name)}' in {printable_name(str(root))}: {problem}")
            continue
        students.append((path.name, path))
    reports = _grade_many(students, list(exercises), check=None, seed=None,
                          checks_dirs=list(checks_dirs), jobs=jobs, timeout=timeout,
                          output_limit=output_limit, default_submission=False)
    if out is not None:
        ids = [e.exercise.id for e in reports[0].exercises] if reports else []
        write_class_reports(reports, Path(out), ids)
    return reports


def _not_a_student(path: Path) -> str:
    if path.is_symlink():
        return "it is a symbolic link, not a student's folder (copy the folder itself into the class)"
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8 (rename the folder to grade it)"
    return ""


def _grade_many(students: list[tuple[str, Path]], ids: list[str], *, check: str | None,
                seed: int | None, checks_dirs: list[str | Path], jobs: int | None, timeout: float,
                output_limit: int, default_submission: bool) -> list[Report]:
    if not timeout > 0 or (jobs is not None and jobs < 1) or output_limit < 1024:
        raise ValueError(f"need timeout > 0, jobs >= 1 and output_limit >= 1024; got timeout={timeout}, "
                         f"jobs={jobs}, output_limit={output_limit}")
    load_checks(checks_dirs)
    chosen = select_exercises(ids)
    dirs = [str(Path(d).resolve()) for d in checks_dirs]
    all_jobs: list[Job] = []
    for name, folder in students:
        sources: dict[str, Source] = {}
        for ex in chosen:
            checks = [c for c in checks_for(ex.id) if check is None or c.name == check]
            if not checks:
                continue
            path = find_module(folder, ex.module)
            if path is not None and ex.module not in sources:
                sources[ex.module] = read_source(folder, path)  # once per file, for all its exercises
            source = sources.get(ex.module)
            payload = {"submission": str(folder.resolve()), "exercise": ex.id,
                       "checks": [c.name for c in checks], "seed": seed, "checks_dirs": dirs,
                       "timeout": timeout, "output_limit": output_limit,
                       "path": str(path), "source": source.text if source else "",
                       "hidden": _hidden(folder, dirs),
                       # its sandbox's kubelab, made once per exercise here (prune.py)
                       "sandbox": plan(ex.forbidden_imports).to_json()}
            job = Job(name, folder, ex, checks, payload)
            if source is None:  # nothing to run: say so now
                job.refused = (f"no {ex.module}.py in {folder.name}/ (or {folder.name}/exercises/): "
                               f"exercise {ex.id} was not handed in")
            else:
                job.refused = source.refused
            all_jobs.append(job)
    if check is not None and not all_jobs:
        raise ValueError(f"no check named {check!r} in exercise(s) {', '.join(e.id for e in chosen)}")
    run_jobs([j for j in all_jobs if not j.refused], jobs or os.cpu_count() or 2, timeout)
    notes = [n for n in (containment()[1], sealing()) if n]
    reports = {name: Report(name, str(folder), notes=list(notes)) for name, folder in students}
    for job in all_jobs:
        verdicts = _verdicts(job)
        result = ExerciseResult(job.exercise)
        for chk in job.checks:
            result.checks.append(_score(job, chk, verdicts.get(chk.name), default_submission, dirs))
        reports[job.name].exercises.append(result)
    return [reports[name] for name, _ in students]


def _hidden(submission: Path, checks_dirs: list[str]) -> list[str]:
    """What a submission's filesystem must not hold even inside its own folder, and what no
    message may name: an instructor's hidden checks, and the reference solutions/ next to an
    editable install of kubelab (unless that is what is being graded)."""
    import kubelab

    hidden = list(checks_dirs)
    solutions = Path(kubelab.__file__).resolve().parents[1] / "solutions"
    if solutions.is_dir() and not submission.resolve().is_relative_to(solutions):
        hidden.append(str(solutions))
    return hidden


def _verdicts(job: Job) -> dict[str, dict[str, Any]]:
    """The runner's lines that are really its own: right nonce, a check we asked for, once."""
    verdicts: dict[str, dict[str, Any]] = {}
    asked = {c.name for c in job.checks}
    if job.broken:
        return verdicts
    for line in bytes(job.verdicts).decode("utf-8", "replace").splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or message.get("nonce") != job.nonce:
            continue
        name = message.get("check")
        if (message.get("type") != "result" or message.get("exercise") != job.exercise.id
                or name not in asked or name in verdicts or not isinstance(message.get("passed"), bool)
                or message.get("status") not in ("pass", "fail", "error")
                or (message["status"] == "pass") != message["passed"]):
            continue
        verdicts[str(name)] = message
    return verdicts


def _score(job: Job, chk: Check, verdict: dict[str, Any] | None, default_submission: bool,
           dirs: list[str]) -> CheckResult:
    seed = verdict.get("seed") if verdict else None
    seed = seed if isinstance(seed, int) else (job.payload["seed"] or chk.seeds[0])
    command = ["kubelab", "grade", job.exercise.id, "--check", chk.name, "--seed", str(seed)]
    if not default_submission:
        command += ["--submission", str(job.submission)]
    for n, _folder in enumerate(dirs, 1):  # a report may reach the student: name no folder
        command += ["--checks", f"HIDDEN_CHECKS_{n}" if len(dirs) > 1 else "HIDDEN_CHECKS"]
    replay = shlex.join(command)
    if job.refused:
        return CheckResult(job.exercise.id, chk.name, 0, chk.points, False, job.refused,
                           hint=chk.hint, seed=seed, replay=replay)
    if verdict is None:
        if job.broken:
            tail = bytes(job.stderr).decode("utf-8", "replace").strip().splitlines()[-2:]
            message = f"grader error, not your code: {job.broken} ({'; '.join(tail) or 'no error output'})"
            return CheckResult(job.exercise.id, chk.name, 0, chk.points, False, message, seed=seed,
                               replay=replay, status="error")
        if job.timed_out:
            message = (f"the grading process for exercise {job.exercise.id} was stopped after its "
                       "time limit before this check reported (a check hung)")
        else:
            tail = bytes(job.stderr).decode("utf-8", "replace").strip().splitlines()[-3:]
            message = (f"no verdict: the grading process for exercise {job.exercise.id} ended "
                       f"early ({'; '.join(tail) or 'no error output'})")
        return CheckResult(job.exercise.id, chk.name, 0, chk.points, False, message, hint=chk.hint,
                           seed=seed, replay=replay)

    def text(key: str) -> str:
        value = verdict.get(key) if verdict else None
        return value if isinstance(value, str) else ""

    def optional(key: str) -> str | None:
        value = verdict.get(key) if verdict else None
        return value if isinstance(value, str) else None

    passed = bool(verdict["passed"])
    return CheckResult(job.exercise.id, chk.name, chk.points if passed else 0, chk.points, passed,
                       text("message"), optional("expected"), optional("got"),
                       "" if text("status") == "error" else text("hint") or chk.hint, seed, replay,
                       text("output"), text("trace"), status=text("status"))
