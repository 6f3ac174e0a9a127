"""The learners of a workshop: system users, their homes, and files read and written in them.

Each learner is a system user (`useradd --create-home --user-group`) whose home has mode 0700
and holds their own clone of the course (`~/kubelab`), so no learner can read another's files;
the hub starts their JupyterLab as that user. collect() and feedback() run as root, in homes
the learners control: every path below a home is opened one component at a time without
following symbolic links (O_NOFOLLOW) and must belong to the learner, so a link or a hard link
a learner planted (to /etc/shadow, to another learner's exercises) is refused, not followed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubelab.grading.report import FEEDBACK_DIR, FEEDBACK_JSON, FEEDBACK_TEXT, printable_name
from kubelab.grading.source import MAX_SOURCE

__all__ = ["COURSE", "LAB_SETTINGS", "NAME", "Learner", "collect", "feedback", "feedback_text",
           "lookup", "provision", "read_exercises"]

COURSE = "kubelab"  # the learner's clone of the course, in their home
# useradd's portable names, lowercase (JupyterHub lowercases the names people type at login).
NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
EXERCISES = ("exercises",)

# JupyterLab's first-run questions, answered in each learner's settings (as scripts/lab_server.py
# does for the browser test): no news feed, no update check, the notebook's own kernel started
# without a "Select Kernel" dialog, every cell kept in the page (no windowing: the course's
# notebooks are short, and a grade cell's report is then in the page wherever it is).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
        {"autoStartDefaultKernel": True, "windowingMode": "none"},
}


@dataclass(frozen=True)
class Learner:
    name: str
    uid: int
    gid: int
    home: Path

    @property
    def course(self) -> Path:
        return self.home / COURSE


def lookup(name: str) -> Learner | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return Learner(name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise ValueError(f"learner name {name!r}: use lowercase letters, digits and '-', starting "
                         "with a letter, at most 31 characters")
    return name


def _as(learner: Learner, *args: str, cwd: Path | None = None, **extra: str) -> None:
    """Run a command as the learner (their uid, gid and no other group), in their home."""
    env = {"HOME": str(learner.home), "USER": learner.name, "LOGNAME": learner.name,
           "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", **extra}
    done = subprocess.run(list(args), cwd=cwd or learner.home, env=env, user=learner.uid,
                          group=learner.gid, extra_groups=[], capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"{' '.join(args[:3])} as {learner.name} failed: {done.stderr.strip()[-500:]}")


def provision(name: str, repo: Path, python: str) -> tuple[Learner, list[str]]:
    """The learner's user, home (0700), clone of `repo`, git filter and Lab settings: what is
    missing is made, what is there is kept (a restarted workshop keeps the learners' work)."""
    said: list[str] = []
    learner = lookup(check_name(name))
    if learner is None:
        subprocess.run(["useradd", "--create-home", "--user-group", "--shell", "/bin/bash",
                        "--comment", "kubelab workshop learner", name], check=True,
                       capture_output=True)
        learner = lookup(name)
        assert learner is not None
        said.append(f"created the user {name} (home {learner.home})")
    if not learner.home.is_dir():
        raise ValueError(f"the user {name} has no home directory ({learner.home})")
    os.chmod(learner.home, 0o700)  # nobody else reads it: not the other learners
    if not learner.course.exists():
        # The instructor's repository is not the learner's, and git refuses to read a repository
        # of "dubious ownership" unless a global setting says it is safe: one for this clone only.
        with tempfile.TemporaryDirectory() as scratch:
            os.chmod(scratch, 0o755)
            safe = Path(scratch) / "gitconfig"
            safe.write_text("[safe]\n\tdirectory = *\n", encoding="utf-8")
            _as(learner, "git", "clone", "--quiet", "--no-hardlinks", str(repo), str(learner.course),
                GIT_CONFIG_GLOBAL=str(safe))
        said.append(f"cloned the course into {learner.course}")
    for key, value in _git_filter(repo, python).items():
        _as(learner, "git", "-C", str(learner.course), "config", "--local", key, value)
    settings = learner.home / ".jupyter" / "lab" / "user-settings"
    for relative, values in LAB_SETTINGS.items():
        target = settings / relative
        if not target.exists():
            _as(learner, "mkdir", "-p", str(target.parent))
            _as(learner, python, "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])",
                str(target), json.dumps(values))
    return learner, said


def _git_filter(repo: Path, python: str) -> dict[str, str]:
    """The course's nbstripout filter entries (scripts/git_filters.py) for this interpreter."""
    spec = importlib.util.spec_from_file_location("kubelab_git_filters", repo / "scripts" / "git_filters.py")
    if spec is None or spec.loader is None:
        return {}
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entries: dict[str, str] = module.wanted(python)
    return entries


@contextlib.contextmanager
def _owned_dir(learner: Learner, parts: Iterable[str], create: bool = False) -> Iterator[int]:
    """A descriptor of home/parts..., opened without following links, each a directory the
    learner owns (the last made, as theirs, when `create`)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(learner.home, flags)
    try:
        parts = list(parts)
        for index, part in enumerate(["", *parts]):
            if part:
                if create and index == len(parts):
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o700, dir_fd=fd)
                        os.chown(part, learner.uid, learner.gid, dir_fd=fd, follow_symlinks=False)
                try:
                    inner = os.open(part, flags, dir_fd=fd)
                except OSError as err:
                    raise ValueError(f"{learner.name}: ~/{'/'.join(parts)} cannot be opened as a "
                                     f"directory without following a link ({err.strerror})") from err
                os.close(fd)
                fd = inner
            if os.fstat(fd).st_uid != learner.uid:
                raise ValueError(f"{learner.name}: ~/{'/'.join(parts)} does not belong to {learner.name}")
        yield fd
    finally:
        os.close(fd)


def read_exercises(learner: Learner) -> tuple[dict[str, bytes], list[str]]:
    """The learner's exercises/*.py as bytes, and what was refused (a link, a file of someone
    else, a file too big to be an exercise)."""
    files: dict[str, bytes] = {}
    refused: list[str] = []
    with _owned_dir(learner, (COURSE, *EXERCISES)) as folder:
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py") or name.startswith("."):
                continue
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
            except OSError as err:
                refused.append(f"{name}: {err.strerror} (a symbolic link is not collected)")
                continue
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_uid != learner.uid or info.st_nlink != 1:
                    refused.append(f"{name}: not a regular file of {learner.name}'s own")
                    continue
                data = handle.read(MAX_SOURCE + 1)
            if len(data) > MAX_SOURCE:
                refused.append(f"{name}: larger than {MAX_SOURCE} bytes")
                continue
            files[name] = data
    return files, refused


def collect(learners: Iterable[Learner], into: Path) -> list[str]:
    """Copy every learner's exercises into `into`/<name>/ (a fresh copy each time), the folder
    `kubelab grade --class` grades. `into` is the instructor's: mode 0700."""
    into.mkdir(parents=True, exist_ok=True)
    os.chmod(into, 0o700)
    lines = []
    for learner in learners:
        target = into / learner.name
        try:
            files, refused = read_exercises(learner)
        except (OSError, ValueError) as err:
            lines.append(f"{learner.name}: nothing collected: {err}")
            continue
        if target.is_symlink() or target.is_file():
            target.unlink()
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(mode=0o700)
        for name, data in files.items():
            (target / name).write_bytes(data)
        lines.append(f"{learner.name}: {len(files)} file(s) into {target}"
                     + "".join(f"\n  refused {printable_name(r)}" for r in refused))
    return lines


def feedback_text(report: dict[str, Any]) -> str:
    """A learner's report from the JSON `kubelab grade --class` writes (grades/<name>.json)."""
    lines = [f"kubelab workshop feedback · {report['name']} · {report['total']}/{report['max_total']} points",
             ""]
    for ex in report["exercises"]:
        lines.append(f"{ex['id']}  {ex['title']}  {ex['points']}/{ex['max_points']}")
        for check in ex["checks"]:
            lines.append(f"  {check['status'].upper():<5} {check['check']:<48} "
                         f"{check['points']}/{check['max_points']}")
            if check["status"] != "pass":
                for key in ("message", "hint"):
                    if check.get(key):
                        lines.append(f"        {key + ': ' if key != 'message' else ''}{check[key]}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _write_owned(learner: Learner, folder: int, name: str, text: str) -> None:
    """Write `name` in the directory `folder` as a new file (never through a link), the
    learner's, mode 0600, renamed over the old one."""
    temporary = f".{name}.{os.getpid()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            os.fchown(out.fileno(), learner.uid, learner.gid)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def feedback(learners: Iterable[Learner], grades: Path) -> list[str]:
    """Put each learner's report (grades/<name>.json, next to the CSV `kubelab grade --class`
    wrote) into ~/kubelab/feedback/, where their notebooks' grade cell shows it."""
    lines = []
    for learner in learners:
        source = grades / f"{learner.name}.json"
        try:
            report = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            lines.append(f"{learner.name}: no report ({source}: {err})")
            continue
        try:
            with _owned_dir(learner, (COURSE, FEEDBACK_DIR), create=True) as folder:
                _write_owned(learner, folder, FEEDBACK_JSON,
                             json.dumps(report, indent=2, sort_keys=True) + "\n")
                _write_owned(learner, folder, FEEDBACK_TEXT, feedback_text(report))
        except (OSError, ValueError) as err:
            lines.append(f"{learner.name}: feedback not written: {err}")
            continue
        lines.append(f"{learner.name}: {report['total']}/{report['max_total']} points into "
                     f"{learner.course / FEEDBACK_DIR}")
    return lines
