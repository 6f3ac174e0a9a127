"""Grades as data: per check, per exercise, per submission; as text, JSON and a class CSV.

Much of a report is the submission's own text (its exceptions' messages, what it printed), so
the text report shows it inert: control characters, bidirectional overrides and other
invisible format characters (and lone surrogates) appear as escapes (\\x1b, \\u202e, \\udc80);
a newline starts a new line indented under the check it belongs to, so it cannot pass for
another check's verdict; and each message is cut at MESSAGE_LIMIT (2000) characters, marked
"(cut)" (the grading process cuts them before they reach the grader, too). The CSV is for
spreadsheets: a cell that starts with = + - @, a tab or a carriage return gets a ' in front
(OWASP's advice against CSV injection) and every cell is quoted.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kubelab.grading.exercises import Exercise
from kubelab.grading.remote import cut

__all__ = ["FEEDBACK_DIR", "FEEDBACK_JSON", "FEEDBACK_TEXT", "CheckResult", "ExerciseResult", "Report",
           "feedback_note", "printable", "printable_name",
           "write_class_reports"]


@dataclass
class CheckResult:
    exercise: str
    check: str
    points: int
    max_points: int
    passed: bool
    message: str = ""
    expected: str | None = None
    got: str | None = None
    hint: str = ""
    seed: int = 0
    replay: str = ""     # the command that runs just this check with this seed
    output: str = ""     # the start of what the submission printed, or its traceback
    trace: str = ""      # the end of the cluster's trace when the check failed
    status: str = ""     # "pass", "fail" (the submission's doing) or "error" (the grader's)

    def __post_init__(self) -> None:
        if self.status not in ("pass", "fail", "error"):
            self.status = "pass" if self.passed else "fail"


@dataclass
class ExerciseResult:
    exercise: Exercise
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def points(self) -> int:
        return sum(c.points for c in self.checks)

    @property
    def max_points(self) -> int:
        return sum(c.max_points for c in self.checks)


@dataclass
class Report:
    name: str                # the student (folder name), or the folder graded
    submission: str          # the folder graded
    exercises: list[ExerciseResult] = field(default_factory=list)
    verbose: bool = False    # how str() and a notebook show it: with output and traces
    notes: list[str] = field(default_factory=list)  # about the grading itself (containment)

    @property
    def total(self) -> int:
        return sum(e.points for e in self.exercises)

    @property
    def max_total(self) -> int:
        return sum(e.max_points for e in self.exercises)

    @property
    def passed(self) -> bool:
        return all(c.passed for e in self.exercises for c in e.checks)

    def checks(self) -> list[CheckResult]:
        return [c for e in self.exercises for c in e.checks]

    @property
    def grader_errors(self) -> list[CheckResult]:
        """Checks the grader itself could not run: not the submission's fault, to grade again."""
        return [c for c in self.checks() if c.status == "error"]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "submission": self.submission, "total": self.total,
            "max_total": self.max_total, "notes": list(self.notes),
            "exercises": [{"id": e.exercise.id, "title": e.exercise.title, "points": e.points,
                           "max_points": e.max_points, "checks": [asdict(c) for c in e.checks]}
                          for e in self.exercises],
        }

    def text(self, verbose: bool = False) -> str:
        lines = [f"kubelab grade · {printable(self.submission)} · {self.total}/{self.max_total} "
                 "points", *[f"note: {printable(n)}" for n in self.notes], ""]
        for ex in self.exercises:
            e = ex.exercise
            lines.append(f"{e.id}  {e.title}  [{e.difficulty} · notebook {e.notebook}, "
                         f"{e.section}]  {ex.points}/{ex.max_points}")
            for c in ex.checks:
                mark = c.status.upper()
                lines.append(f"  {mark:<5} {printable(c.check):<48} {c.points}/{c.max_points}")
                if c.passed:
                    continue
                lines.extend(_indent(cut(c.message)))
                if c.expected is not None:
                    lines.extend(_indent(f"expected: {cut(c.expected)}"))
                if c.got is not None:
                    lines.extend(_indent(f"got:      {cut(c.got)}"))
                if c.hint:
                    lines.extend(_indent(f"hint:     {cut(c.hint)}"))
                lines.extend(_indent(f"replay:   {c.replay}"))
                if verbose and c.output:
                    lines.extend(_indent("output:\n" + c.output, 10))
                if verbose and c.trace:
                    lines.extend(_indent("trace (last events):\n" + c.trace, 10))
            lines.append("")
        if self.grader_errors:
            lines.append(f"{len(self.grader_errors)} check(s) could not be graded (ERROR: the "
                         "grader's fault, not yours); they count for nobody until graded again.")
        if not verbose and not self.passed:
            lines.append("Add --verbose (or grade(..., verbose=True)) to see output and the cluster trace.")
        return "\n".join(lines).rstrip() + "\n"

    def __str__(self) -> str:
        return self.text(self.verbose)

    def __repr__(self) -> str:
        return f"<Report {self.name}: {self.total}/{self.max_total}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text(self.verbose))


def _indent(text: str, width: int = 8) -> list[str]:
    """text made printable, each of its lines indented: only a newline starts a line."""
    return [" " * width + line for line in printable(text).rstrip("\n").split("\n")]


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# Control characters (all but the newline), format characters (the bidirectional overrides
# and isolates, zero-width ones), line and paragraph separators, surrogates and private use.
_HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def printable(text: str) -> str:
    """text with every character a terminal would act on, or that reorders or hides what
    follows it, written as a Python escape (\\x1b, \\u202e); newlines stay."""
    if text.isprintable() and text.isascii():
        return text
    return "".join(_escape(ch) if ch != "\n" and unicodedata.category(ch) in _HIDDEN else ch
                   for ch in text)


def printable_name(name: str) -> str:
    """A file name as text that can be shown anywhere: bytes that are not UTF-8 (os.fsdecode's
    surrogate escapes) as \\xff, then printable()."""
    return printable(os.fsencode(name).decode("utf-8", "backslashreplace")).replace("\n", "\\n")


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula (OWASP)."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def write_class_reports(reports: Iterable[Report], out: Path, exercise_ids: list[str]) -> None:
    """grades.csv: one row per student, one column per exercise, a total, the maximum and the
    checks the grader could not run; and grades/<student>.json next to it with every check's
    verdict. Each file is written whole under a temporary name and renamed into place, after
    every grading process has ended: a reader sees the old gradebook or the new one."""
    reports = list(reports)
    out.parent.mkdir(parents=True, exist_ok=True)
    per_student = out.with_suffix("")
    per_student.mkdir(parents=True, exist_ok=True)
    for report in reports:
        _replace(per_student / f"{report.name}.json",
                 json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n")
    table = io.StringIO(newline="")
    writer = csv.writer(table, quoting=csv.QUOTE_ALL)
    writer.writerow([_cell(v) for v in ("student", *exercise_ids, "total", "max", "grader_errors")])
    for report in reports:
        points = {e.exercise.id: e.points for e in report.exercises}
        writer.writerow([_cell(v) for v in (
            report.name, *[points.get(i, 0) for i in exercise_ids], report.total, report.max_total,
            " ".join(f"{c.exercise}:{c.check}" for c in report.grader_errors))])
    _replace(out, table.getvalue())


def _replace(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# Where `kubelab workshop feedback` puts a learner's report from the instructor's grading: the
# folder feedback/ next to their exercises/ (the course's .gitignore keeps it out of git).
FEEDBACK_DIR = "feedback"
FEEDBACK_JSON = "report.json"
FEEDBACK_TEXT = "report.txt"


def feedback_note(exercises: Path) -> str | None:
    """The note a learner's grade cell shows when their instructor returned a report: its
    points, and where the whole report is. None without one (or with one that is not a report)."""
    path = exercises.parent / FEEDBACK_DIR / FEEDBACK_JSON
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        total, maximum = int(report["total"]), int(report["max_total"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (f"your instructor graded this course: {total}/{maximum} points over every exercise; "
            f"their report is in {path.parent / FEEDBACK_TEXT}")
