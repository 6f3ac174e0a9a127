"""A submission's file, read once and looked at once: size, symlinks, a bounded parse.

The grader reads each exercise file of a submission exactly once (read_source), refuses what is
not a plain file inside the submission folder (a symbolic link, a file that resolves elsewhere,
something bigger than MAX_SOURCE), and hands that text to the grading process, which parses it
once (scan, in a child process with a CPU and memory limit) and gives the same text to every
sandbox: what was checked is what runs, even if the file changes on disk meanwhile.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import select
import signal
import stat
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_SOURCE", "PARSE_SECONDS", "Source", "find_module", "forbidden_name", "read_source",
           "scan"]

MAX_SOURCE = 512 << 10  # bytes; an exercise file is a few KiB
PARSE_SECONDS = 5       # CPU seconds the parse of one file may take
_PARSE_MEMORY = 1 << 30


@dataclass(frozen=True)
class Source:
    path: Path     # the file, inside the submission folder
    text: str      # what the sandbox runs (empty when refused)
    refused: str = ""  # why the grader will not run it: every check fails with this


def find_module(submission: Path, module: str) -> Path | None:
    """A submission folder holds ex01_store.py either at its top or in an exercises/ folder."""
    for candidate in (submission / f"{module}.py", submission / "exercises" / f"{module}.py"):
        if os.path.lexists(candidate):
            return candidate
    return None


def read_source(submission: Path, path: Path) -> Source:
    """Read one submission file, or say why not (Source.refused)."""
    name = path.name
    try:
        if path.is_symlink() or path.parent.is_symlink():
            return Source(path, "", f"{name} is a symbolic link: hand in the file itself")
        if not path.resolve().is_relative_to(submission.resolve()):
            return Source(path, "", f"{name} resolves outside the submission folder {submission.name}/")
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        return Source(path, "", f"cannot read {name}: {err.strerror or err}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Source(path, "", f"{name} is not a regular file")
        if info.st_size > MAX_SOURCE:
            return Source(path, "", _too_large(name, info.st_size))
        data = os.read(fd, MAX_SOURCE + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SOURCE:
        return Source(path, "", _too_large(name, len(data)))
    try:
        return Source(path, data.decode("utf-8"))
    except UnicodeDecodeError as err:
        return Source(path, "", f"{name} is not UTF-8 text (byte {err.start})")


def _too_large(name: str, size: int) -> str:
    return (f"{name} is too large to grade: {size} bytes, the limit is {MAX_SOURCE} bytes "
            f"({MAX_SOURCE >> 10} KiB)")


def scan(source: Source) -> tuple[list[str] | None, str]:
    """Every module name the file imports and every string constant in it, from one parse in a
    child process (PARSE_SECONDS of CPU, 1 GiB): (names, "") or (None, why it could not be
    parsed). A SyntaxError is not a refusal: the sandbox reports it with its line."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, answer, exit (never returns into the caller)
        code = 0
        try:
            os.close(read_end)
            _parse_limits()
            with os.fdopen(write_end, "w") as out:
                json.dump(_names(source.text), out)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_end)
    data, deadline = b"", time.monotonic() + PARSE_SECONDS + 2
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    try:
        answer = json.loads(data)
    except ValueError:
        return None, (f"{source.path.name} could not be parsed within {PARSE_SECONDS} s of CPU and "
                      f"{_PARSE_MEMORY >> 30} GiB of memory")
    return (None, "") if answer is None else ([str(n) for n in answer], "")


def _parse_limits() -> None:
    import resource

    for limit, value in ((resource.RLIMIT_CPU, PARSE_SECONDS), (resource.RLIMIT_AS, _PARSE_MEMORY)):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(limit, (value, value))


def _names(text: str) -> list[str] | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None  # loading will report it, with its line
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            names.append(node.value)
    return names


def forbidden_name(names: list[str], forbidden: tuple[str, ...]) -> str | None:
    """The first forbidden module a literal import (or a string naming it) names. What a static
    look cannot see (a name built at run time) the sandbox's import guard refuses."""
    for name in names:
        for banned in forbidden:
            if name == banned or name.startswith(banned + "."):
                return banned
    return None
