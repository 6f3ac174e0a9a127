"""The `kubelab` command.

    kubelab doctor                     check that the course can run here
    kubelab grade [4.1 ...]            grade your exercises/ (all exercises, or the ones named)
    kubelab grade --class DIR --out grades.csv     grade a class: one folder per student
    kubelab release [--check]          write exercises/ from solutions/ (CI: fail if it differs)
    kubelab workshop start|collect|feedback|stop   the course on JupyterHub for a room (as root)
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["doctor", "grade_command", "main", "release_command"]

# (distribution name, what it is for)
PYTHON_PACKAGES = [
    ("kubelab", "this course's package"),
    ("jupyterlab", "runs the notebooks"),
    ("ipywidgets", "failure-injection buttons and live views"),
    ("pyyaml", "reads manifests"),
    ("networkx", "the object-hierarchy graph"),
    ("graphviz", "Python side of the pictures"),
    ("orjson", "the API server's JSON, fast"),
]


def _dist_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _dot_version() -> str | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    try:
        out = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # `dot -V` prints e.g. "dot - graphviz version 2.42.2 (0)" on stderr.
    text = (out.stderr or out.stdout).strip()
    return text.split("version", 1)[-1].strip() or text


def _etcd_version(cmd: str) -> str | None:
    """`etcd --version` / `etcdctl version`: the first line says e.g. "etcd Version: 3.4.23"."""
    path = shutil.which(cmd)
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version" if cmd == "etcd" else "version"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (out.stdout or out.stderr).strip().splitlines()[:1]
    return first[0].split(":", 1)[-1].strip() if first else "unknown version"


# Optional: a real etcd behind the API server (kubelab/etcd/, notebook 07b). Without them only
# that notebook's cells and the real-etcd tests skip, so they do not fail the doctor.
ETCD_TOOLS = [("etcd", "etcd-server"), ("etcdctl", "etcd-client")]


SETUP_LOG = "kubelab-setup.log"  # the Makefile and scripts/ append what they install or set


def _setup_changes(last: int = 10) -> list[str]:
    """The newest lines of the venv's set-up log: what `make` installed or configured."""
    try:
        lines = (Path(sys.prefix) / SETUP_LOG).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [line for line in lines if line.strip()][-last:]


def _git_filter() -> str | None:
    """Whether this clone strips notebook outputs on their way into git (None: not in a clone)."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=10)
        if top.returncode != 0:
            return None
        clean = subprocess.run(["git", "config", "--get", "filter.nbstripout.clean"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if clean.returncode == 0 and "nbstripout" in clean.stdout:
        return "nbstripout (notebook outputs stay out of git)"
    return "not set: outputs would reach git; run `make git-filters`"


def doctor(out: Callable[[str], None] = print) -> int:
    """Print what is installed; return 0 when everything the course needs is there."""
    missing: list[str] = []
    out(f"{'Python':<12} {platform.python_version()}  ({sys.executable})")
    for dist, purpose in PYTHON_PACKAGES:
        found = _dist_version(dist)
        if found is None:
            missing.append(f"{dist} ({purpose}): run `make lab`, or `pip install -e .` in the repo")
        out(f"{dist:<12} {found or 'MISSING'}")
    dot = _dot_version()
    out(f"{'dot':<12} {dot or 'MISSING'}")
    if dot is None:
        missing.append("Graphviz's `dot` (draws every picture): run "
                       "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` "
                       "(macOS) or `conda install -c conda-forge graphviz`")
    for cmd, package in ETCD_TOOLS:
        found = _etcd_version(cmd)
        absent = f"absent (optional, notebook 07b: `sudo apt-get install {package}`, or `make` as root)"
        out(f"{cmd:<12} {found or absent}")
    filters = _git_filter()
    if filters is not None:
        out(f"{'git filter':<12} {filters}")
    changes = _setup_changes()
    if changes:
        out("")
        out(f"What set-up changed here (newest last, from {Path(sys.prefix) / SETUP_LOG}):")
        for line in changes:
            out(f"  - {line}")
    if missing:
        out("")
        out("Missing:")
        for item in missing:
            out(f"  - {item}")
        return 1
    out("")
    out("Everything the course needs is installed. Start it with `make lab`.")
    return 0


def _course_root() -> Path:
    """The repository: the nearest folder above the current one holding solutions/ or
    exercises/, else the one the kubelab package sits in."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "solutions").is_dir() or (folder / "exercises").is_dir():
            return folder
    return Path(__file__).resolve().parent.parent


def grade_command(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """`kubelab grade`: 0 when every check passed (or the class was graded), 1 otherwise."""
    from kubelab.grading import grade, grade_class
    from kubelab.grading.contain import make_undumpable
    from kubelab.grading.report import printable_name

    options = {"checks_dirs": args.checks, "jobs": args.jobs, "timeout": args.timeout}
    if args.klass is not None:
        if args.check or args.seed is not None or args.submission:
            raise ValueError("--class grades whole folders: drop --check, --seed and --submission")
        make_undumpable()  # submissions are other people's code: keep them out of our memory
        output = Path(args.out or "grades.csv")
        reports = grade_class(args.klass, output, args.exercises, **options)
        names = {r.name: printable_name(r.name) for r in reports}
        width = max([len(n) for n in names.values()] + [7])
        for report in reports:
            out(f"{names[report.name]:<{width}}  {report.total:>4}/{report.max_total}")
        out(f"wrote {output} and {output.with_suffix('')}/<student>.json for {len(reports)} student(s)")
        return 0
    if args.out:
        raise ValueError("--out goes with --class")
    report = grade(args.exercises, submission=args.submission, check=args.check, seed=args.seed,
                   **options)
    if args.json:
        out(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        out(report.text(verbose=args.verbose).rstrip("\n"))
    return 0 if report.passed else 1


def release_command(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    from kubelab.grading import release

    root = _course_root()
    solutions = Path(args.solutions) if args.solutions else root / "solutions"
    exercises = Path(args.exercises) if args.exercises else root / "exercises"
    lines = release(solutions, exercises, check=args.check, force=args.force)
    for line in lines:
        out(line)
    if args.check:
        if lines:
            return 1
        out(f"{exercises} matches {solutions}")
    elif not lines:
        out(f"{exercises} is up to date")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kubelab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check Python, JupyterLab, ipywidgets and Graphviz")
    g = sub.add_parser("grade", help="grade exercises: yours, or a whole class")
    g.add_argument("exercises", nargs="*", metavar="EXERCISE",
                   help="exercise ids (4.1) or notebooks (4); default: all")
    g.add_argument("--submission", metavar="DIR", help="the folder to grade (default: exercises/)")
    g.add_argument("--class", dest="klass", metavar="DIR", help="grade every student folder in DIR")
    g.add_argument("--out", metavar="CSV", help="with --class: where to write the CSV (grades.csv)")
    g.add_argument("--checks", metavar="DIR", action="append", default=[],
                   help="also run the instructor's checks in DIR (repeatable)")
    g.add_argument("--check", metavar="NAME", help="run only this check")
    g.add_argument("--seed", type=int, help="run the checks with this seed only (to replay one)")
    g.add_argument("--jobs", type=int, help="grading processes at once (default: CPU count)")
    g.add_argument("--timeout", type=float, default=10.0, help="seconds per check (default 10)")
    g.add_argument("--verbose", "-v", action="store_true", help="show output and cluster traces")
    g.add_argument("--json", action="store_true", help="print the report as JSON")
    r = sub.add_parser("release", help="write exercises/ from solutions/")
    r.add_argument("--check", action="store_true", help="fail if exercises/ differs (for CI)")
    r.add_argument("--force", action="store_true", help="overwrite exercise files you have edited")
    r.add_argument("--solutions", metavar="DIR", help="default: solutions/ of this repository")
    r.add_argument("--exercises", metavar="DIR", help="default: exercises/ of this repository")
    from kubelab.serve import command as serve_command  # tornado and TLS only when asked for

    serve_command.add_parser(sub)
    from kubelab.workshop import command as workshop_command

    workshop_command.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve_command.serve_command(args)
    try:
        if args.command == "doctor":
            return doctor()
        if args.command == "grade":
            return grade_command(args)
        if args.command == "release":
            return release_command(args)
        if args.command == "workshop":
            return workshop_command.workshop_command(args, _course_root())
    except ValueError as err:  # bad ids, folders, markers: say so, no traceback
        print(f"kubelab {args.command}: {err}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command}")  # argparse exits; keeps mypy happy
    return 2
