"""One grading process: the checks of one exercise against one submission.

The grader (grader.py) starts `python -m kubelab.grading.runner` in a new session and writes one
job to its stdin:

    {"nonce": "...", "submission": "/path/alice", "exercise": "1.1", "checks": null | [names],
     "seed": null | 7, "checks_dirs": [...], "timeout": 10.0, "output_limit": 1048576}

and reads one JSON line per check from its stdout, then {"type": "done"}, each with the nonce.
This process runs the clusters and the checks; it never runs submission code. Each check gets a
fresh sandbox process (sandbox.py) holding the learner's module, and talks to it through
rpc.Connection. Sandboxes are forked from a zygote started before the job is read; then the
process makes itself non-dumpable, so a sandbox (same user, not root) can neither read its
memory nor open its pipes through /proc.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

from kubelab.grading.context import CheckContext, CheckFailed
from kubelab.grading.exercises import Check, Exercise, checks_for, exercise, load_checks
from kubelab.grading.launch import EXCERPT, LoadFailed, Sandbox
from kubelab.grading.remote import (
    CallTimeout,
    NotImplementedYet,
    OutOfTime,
    ProtocolError,
    RemoteError,
    SandboxDied,
    SessionError,
)
from kubelab.grading.zygote import Zygote

__all__ = ["CheckTimeout", "find_module", "main", "make_undumpable", "run_check"]

DEFAULT_TIMEOUT = 10.0           # wall seconds per check
DEFAULT_OUTPUT_LIMIT = 1 << 20   # bytes a submission may print per check
_EXCERPT = EXCERPT               # characters of output and trace kept for the report
_PR_SET_DUMPABLE = 4


class CheckTimeout(SessionError):
    """The check as a whole ran out of time (the cluster never settled, or the code loops)."""


def make_undumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): other processes of this user cannot ptrace us or open our
    /proc/<pid>/fd and /proc/<pid>/mem (Linux; elsewhere a no-op)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def find_module(submission: Path, module: str) -> Path | None:
    """A submission folder holds ex01_store.py either at its top or in an exercises/ folder."""
    for candidate in (submission / f"{module}.py", submission / "exercises" / f"{module}.py"):
        if candidate.is_file():
            return candidate
    return None


def forbidden_import(path: Path, ex: Exercise) -> str | None:
    """The first import of kubelab's own implementation the exercise asks the learner to write."""
    if not ex.forbidden_imports:
        return None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return None  # loading will report it
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        for name in names:
            for banned in ex.forbidden_imports:
                if name == banned or name.startswith(banned + "."):
                    return banned
    return None


def run_check(ex: Exercise, chk: Check, submission: Path, *, seed: int | None = None,
              timeout: float = DEFAULT_TIMEOUT, output_limit: int = DEFAULT_OUTPUT_LIMIT
              ) -> dict[str, Any]:
    """Run one check (every seed, or just `seed`) in a fresh sandbox; return its result."""
    seeds = (seed,) if seed is not None else chk.seeds
    result: dict[str, Any] = {"type": "result", "exercise": ex.id, "check": chk.name,
                              "passed": False, "message": "", "expected": None, "got": None,
                              "hint": chk.hint, "seed": seeds[0], "output": "", "trace": ""}
    path = find_module(submission.resolve(), ex.module)
    if path is None:
        result["message"] = f"no {ex.module}.py in {submission.name}/ (or {submission.name}/exercises/)"
        return result
    banned = forbidden_import(path, ex)
    if banned is not None:
        result["message"] = (f"exercise {ex.id} asks you to write this yourself, but {path.name} "
                             f"uses kubelab's own {banned}")
        return result
    start = time.monotonic()
    deadline = start + timeout
    sandbox = Sandbox(path, ex.module, ex.symbol, deadline=deadline, output_limit=output_limit,
                      cpu_seconds=int(timeout) + 5)
    ctx: CheckContext | None = None
    timed_out = False  # then how far it got depends on the machine: report no output or trace
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout + 0.5)
    try:
        root = sandbox.start()
        for s in seeds:
            result["seed"] = s
            ctx = CheckContext(ex, chk, s, root)
            chk.fn(ctx)
        result["passed"] = True
    except CheckFailed as err:
        result.update(message=err.message, expected=err.expected, got=err.got)
        if err.hint:
            result["hint"] = err.hint
    except LoadFailed as err:
        result.update(message=err.message, output=err.detail[-_EXCERPT:])
    except NotImplementedYet as err:
        result["message"] = f"not implemented yet (NotImplementedError: {err.message})"
        result["hint"] = (f"open {path.name} and replace `raise NotImplementedError(...)` in "
                          f"{ex.symbol} with your code")
        result["output"] = err.remote_traceback[-_EXCERPT:]
    except RemoteError as err:
        result["message"] = _remote_message(err)
        result["output"] = err.remote_traceback[-_EXCERPT:]
        sandbox.conn.remote_errors.clear()  # this one is the message already
    except (CheckTimeout, OutOfTime):
        timed_out = True
        # (How many calls were made depends on the machine's speed: not in the report.)
        result["message"] = (f"the check did not finish within {timeout:g} s (an infinite loop, or "
                             "code that keeps making new work?)")
    except CallTimeout as err:
        timed_out = True
        result["message"] = (f"your code did not return from {err.during or err} within {timeout:g} s "
                             "(an infinite loop?)")
    except SandboxDied as err:
        result["message"] = (f"your code ended its process ({sandbox.exit_status()}) during "
                             f"{err.during or 'the check'}")
    except ProtocolError as err:
        result["message"] = f"your code broke the grader's connection: {err}"
    except Exception as err:  # the cluster choked on an answer: say so, with where
        errors = sandbox.conn.remote_errors
        if errors:  # most likely the learner's exception, passed on by kubelab code
            result["message"] = (f"{_remote_message(errors[0])} (the check stopped: "
                                 f"{type(err).__name__}: {err})")
            result["output"] = errors[0].remote_traceback[-_EXCERPT:]
            errors.clear()
        else:
            result["message"] = f"the check stopped with {type(err).__name__}: {err}"
            result["output"] = "".join(traceback.format_exception(err))[-_EXCERPT:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        output, flooded = sandbox.close()
    if timed_out:
        return result
    if not result["passed"] and sandbox.conn.remote_errors and "raised" not in result["message"]:
        first = sandbox.conn.remote_errors[0]
        result["message"] += (f" (your code raised {first.type_name} "
                              f"{len(sandbox.conn.remote_errors)} time(s); first: {first.message})")
        result["output"] = result["output"] or first.remote_traceback[-_EXCERPT:]
    if flooded:
        result.update(passed=False, message=f"your code printed more than {output_limit} bytes "
                      "(the limit per check); the rest was cut off")
    if not result["passed"]:
        result["output"] = result["output"] or output
        if ctx is not None and ctx.clusters:
            # The story's end, without the check's own reads (the admin's gets and lists).
            records = [r for r in ctx.clusters[-1].trace
                       if not (r.verb in ("get", "list") and r.detail.get("user") == "kubernetes-admin")]
            lines = [r.text() for r in records[-25:]]
            while lines and sum(len(line) + 1 for line in lines) > _EXCERPT:
                lines.pop(0)
            result["trace"] = "\n".join(lines)
    return result


def _remote_message(err: RemoteError) -> str:
    return f"your code raised {err.type_name}: {err.message}"


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise CheckTimeout("the check ran out of time")


def main() -> int:
    import kubelab.grading.checks  # noqa: F401 - warm: the zygote forks with all of kubelab loaded
    from kubelab.grading import sandbox  # noqa: F401

    Sandbox.zygote = Zygote()  # before reading the job: the zygote never holds the nonce
    make_undumpable()
    job = json.loads(sys.stdin.read())
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout = sys.stderr  # nothing but results may reach the grader's pipe
    nonce = str(job["nonce"])
    load_checks(job.get("checks_dirs") or ())
    ex = exercise(str(job["exercise"]))
    wanted = job.get("checks")
    for chk in checks_for(ex.id):
        if wanted is not None and chk.name not in wanted:
            continue
        result = run_check(ex, chk, Path(job["submission"]), seed=job.get("seed"),
                           timeout=float(job.get("timeout", DEFAULT_TIMEOUT)),
                           output_limit=int(job.get("output_limit", DEFAULT_OUTPUT_LIMIT)))
        out.write(json.dumps({"nonce": nonce, **result}) + "\n")
        out.flush()
    out.write(json.dumps({"nonce": nonce, "type": "done"}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
