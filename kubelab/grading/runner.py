"""One grading process: the checks of one exercise against one submission.

The grader (grader.py) starts it as `python -P -c contain.BOOT FD HOME`, inside its own
namespaces (contain.py): it makes itself non-dumpable before anything else, seals its
filesystem, and answers on the socket FD with a fresh socket of its own (the handshake). Only
on that fresh socket does the grader send the job:

    {"nonce": "...", "submission": "/path/alice", "exercise": "1.1", "checks": null | [names],
     "seed": null | 7, "checks_dirs": [...], "timeout": 10.0, "output_limit": 1048576,
     "path": "/path/alice/ex01_store.py", "source": "...the file, as the grader read it...",
     "hidden": [...folders no sandbox may hold...], "sandbox": {...prune.Plan...}}

It starts its zygote (confined, when contained), then drops its privileges for good, then
loads the checks.

and read back one JSON line per check, then {"type": "done"}, each with the nonce. This process
runs the clusters and the checks; it never runs submission code. Each check gets a fresh sandbox
(sandbox.py) holding the learner's module, forked from a zygote (zygote.py): a new interpreter
this process starts once it knows the exercise, on the exercise's sandbox kubelab (prune.py) and,
contained, in a filesystem of its own (contain.confine) that holds nothing of the grader's.

A check ends in one of three verdicts: "pass"; "fail", the submission's doing, with what it did
wrong; or "error", the grader's own doing (a check's scenario broke before or without the
learner's code being the cause), which says so and never counts against the learner.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from kubelab.grading.context import CheckContext, CheckFailed
from kubelab.grading.exercises import Check, Exercise, checks_for, exercise, load_checks
from kubelab.grading.launch import EXCERPT, LoadFailed, Sandbox
from kubelab.grading.prune import Plan, plan, write
from kubelab.grading.remote import (
    MESSAGE_LIMIT,
    CallTimeout,
    GraderError,
    NotImplementedYet,
    OutOfTime,
    ProtocolError,
    RemoteError,
    SandboxDied,
    SessionError,
    cut,
)
from kubelab.grading.source import Source, forbidden_name, scan
from kubelab.grading.zygote import Zygote

__all__ = ["CheckTimeout", "main", "run_check"]

DEFAULT_TIMEOUT = 10.0           # wall seconds per check
DEFAULT_OUTPUT_LIMIT = 1 << 20   # bytes a submission may print per check
_MAX_JOB = 8 << 20               # bytes of job: two sources of MAX_SOURCE and some settings


class CheckTimeout(SessionError):
    """The check as a whole ran out of time (the cluster never settled, or the code loops)."""


@dataclass
class _Run:
    """What a verdict may need to say about the check that ended."""

    ex: Exercise
    path: Path
    timeout: float
    sandbox: Sandbox
    hidden: tuple[str, ...] = field(default=())


Verdict = dict[str, Any]


def _load_failed(err: LoadFailed, run: _Run) -> Verdict:
    run.sandbox.conn.remote_errors.clear()  # the import's own exception: the message already
    return {"message": err.message, "output": err.detail[-EXCERPT:]}


def _not_implemented(err: NotImplementedYet, run: _Run) -> Verdict:
    return {"message": f"not implemented yet (NotImplementedError: {err.message})",
            "hint": (f"open {run.path.name} and replace `raise NotImplementedError(...)` in "
                     f"{run.ex.symbol} with your code"),
            "output": err.remote_traceback[-EXCERPT:]}


def _raised(err: RemoteError, run: _Run) -> Verdict:
    run.sandbox.conn.remote_errors.clear()  # this one is the message already
    return {"message": _remote_message(err), "output": err.remote_traceback[-EXCERPT:]}


def _cluster_choked(err: Exception, run: _Run) -> Verdict:
    """kubelab code in the check raised. With the learner's exception passed on, or an answer
    of theirs that broke the cluster, it is theirs; before their code was ever called, ours."""
    errors = run.sandbox.conn.remote_errors
    if errors:
        first = errors[0]
        errors.clear()
        return {"message": f"{_remote_message(first)} (the check stopped: {type(err).__name__}: {err})",
                "output": first.remote_traceback[-EXCERPT:]}
    trace = _format(err, run.hidden)[-EXCERPT:]
    if run.sandbox.conn.calls == 0:
        return _grader_error(GraderError(f"{type(err).__name__}: {err}"), run) | {"output": trace}
    return {"message": f"the check stopped with {type(err).__name__}: {err} (kubelab's code could "
                       "not use what your code returned)", "output": trace}


def _format(err: BaseException, hidden: tuple[str, ...]) -> str:
    """The check's traceback without the frames of hidden checks: the learner reads it, and an
    instructor's hidden check is named nowhere in a report (neither its file nor its lines)."""
    folders = tuple(os.path.join(os.path.realpath(h), "") for h in hidden)
    trace = traceback.TracebackException.from_exception(err)
    seen: set[int] = set()
    todo: list[traceback.TracebackException | None] = [trace]
    while todo:
        te = todo.pop()
        if te is None or id(te) in seen:
            continue
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if not os.path.realpath(f.filename).startswith(folders)])
        todo += [te.__cause__, te.__context__]
    return "".join(trace.format())


def _grader_error(err: GraderError, run: _Run) -> Verdict:
    return {"status": "error",
            "message": (f"grader error, not your code: the check itself failed ({err}). "
                        "This check scores nothing either way; please report it to whoever runs "
                        "the course."), "hint": ""}


# Which exception ends a check with which verdict: the first entry the exception is an
# instance of. Everything is "fail" (the submission's doing) except GraderError.
_VERDICTS: tuple[tuple[type[BaseException], Callable[[Any, _Run], Verdict]], ...] = (
    (CheckFailed, lambda e, r: {"message": e.message, "expected": e.expected, "got": e.got}
     | ({"hint": e.hint} if e.hint else {})),
    (LoadFailed, _load_failed),
    (GraderError, _grader_error),
    (NotImplementedYet, _not_implemented),
    (RemoteError, _raised),
    (CheckTimeout, lambda e, r: _timed_out(r)),
    (OutOfTime, lambda e, r: _timed_out(r)),
    (CallTimeout, lambda e, r: {"timed_out": True, "message": (
        f"your code did not return from {e.during or e} within {r.timeout:g} s (an infinite loop?)")}),
    (SandboxDied, lambda e, r: {"message": (f"your code ended its process ({r.sandbox.exit_status()}) "
                                            f"during {e.during or 'the check'}")}),
    (ProtocolError, lambda e, r: {"message": f"your code broke the grader's connection: {e}"}),
    (Exception, _cluster_choked),
)


def _timed_out(run: _Run) -> Verdict:
    # (How many calls were made depends on the machine's speed: not in the report.)
    return {"timed_out": True, "message": (f"the check did not finish within {run.timeout:g} s (an "
                                           "infinite loop, or code that keeps making new work?)")}


def _verdict(err: BaseException, run: _Run) -> Verdict:
    for kind, make in _VERDICTS:
        if isinstance(err, kind):
            return make(err, run)
    raise err  # KeyboardInterrupt and the like: not a verdict


def run_check(ex: Exercise, chk: Check, source: Source, *, names: list[str] | None = None,
              seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
              output_limit: int = DEFAULT_OUTPUT_LIMIT, hidden: tuple[str, ...] = ()) -> Verdict:
    """Run one check (every seed, or just `seed`) in a fresh sandbox; return its result.
    names: what scan() found in the source (None: it did not parse; the sandbox will say why).
    hidden: an instructor's hidden checks' folders, never named in what the learner reads."""
    seeds = (seed,) if seed is not None else chk.seeds
    result: Verdict = {"type": "result", "exercise": ex.id, "check": chk.name, "status": "fail",
                       "passed": False, "message": "", "expected": None, "got": None,
                       "hint": chk.hint, "seed": seeds[0], "output": "", "trace": ""}
    if source.refused:
        return result | {"message": source.refused}
    banned = forbidden_name(names or [], ex.forbidden_imports)
    if banned is not None:
        return result | {"message": f"exercise {ex.id} asks you to write this yourself, but "
                                    f"{source.path.name} uses kubelab's own {banned}"}
    sandbox = Sandbox(source, ex, deadline=time.monotonic() + timeout, output_limit=output_limit,
                      cpu_seconds=int(timeout) + 5)
    run = _Run(ex, source.path, timeout, sandbox, hidden)
    ctx: CheckContext | None = None
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout + 0.5)
    try:
        root = sandbox.start()
        for s in seeds:
            result["seed"] = s
            ctx = CheckContext(ex, chk, s, root)
            chk.fn(ctx)
        result.update(status="pass", passed=True)
    except (Exception, SessionError) as err:
        result.update(_verdict(err, run))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        output, flooded = sandbox.close()
        _sweep()
    if result.pop("timed_out", False):  # how far it got depends on the machine: no output, no trace
        return result
    return _explain(result, sandbox, ctx, output, flooded, output_limit)


def _explain(result: Verdict, sandbox: Sandbox, ctx: CheckContext | None, output: str,
             flooded: bool, output_limit: int) -> Verdict:
    """Add to a result what the learner needs to see why: their exceptions, their output, the
    end of the cluster's story."""
    errors = sandbox.conn.remote_errors
    if result["status"] == "fail" and errors and "raised" not in result["message"]:
        result["message"] += (f" (your code raised {errors[0].type_name} {len(errors)} time(s); "
                              f"first: {errors[0].message})")
        result["output"] = result["output"] or errors[0].remote_traceback[-EXCERPT:]
    if flooded and result["status"] != "error":
        result.update(status="fail", passed=False, message=f"your code printed more than "
                      f"{output_limit} bytes (the limit per check); the rest was cut off")
    if not result["passed"]:  # what it printed, then its traceback (its end) if any
        half = EXCERPT // 2
        if output and result["output"]:
            result["output"] = output[:half].rstrip("\n") + "\n" + result["output"][-half:]
        result["output"] = result["output"] or output
        if ctx is not None and ctx.clusters:
            # The story's end, without the check's own reads (the admin's gets and lists).
            records = [r for r in ctx.clusters[-1].trace
                       if not (r.verb in ("get", "list") and r.detail.get("user") == "kubernetes-admin")]
            lines = [r.text() for r in records[-25:]]
            while lines and sum(len(line) + 1 for line in lines) > EXCERPT:
                lines.pop(0)
            result["trace"] = "\n".join(lines)
    return result


def _bounded(result: Verdict) -> Verdict:
    """The verdict with each text cut to its limit before it leaves this process: the grader
    keeps at most so many bytes of verdicts per job, and one runaway message must not take the
    exercise's other verdicts with it."""
    limits = {"message": MESSAGE_LIMIT, "expected": MESSAGE_LIMIT, "got": MESSAGE_LIMIT,
              "hint": MESSAGE_LIMIT, "output": 2 * EXCERPT, "trace": 2 * EXCERPT}
    return {key: cut(value, limits[key]) if key in limits and isinstance(value, str) else value
            for key, value in result.items()}


def _sweep() -> None:
    """As PID 1 of its own namespace (contain.py), end whatever the check's sandbox left behind
    (a double-forked daemon was reparented to us) before the next check starts, and reap it.
    Elsewhere a no-op: the grader's kill of the session is all there is."""
    if os.getpid() != 1:
        return
    keep = {1} | ({Sandbox.zygote.pid} if Sandbox.zygote is not None else set())
    for _ in range(10):
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]
        for pid in others:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if not others:
            return
        time.sleep(0.01)


def _remote_message(err: RemoteError) -> str:
    return f"your code raised {err.type_name}: {err.message}"


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise CheckTimeout("the check ran out of time")


def _handshake(boot_fd: int, contained: bool) -> socket.socket:
    """Seal the filesystem (contained) and hand the grader a socket made now, after this
    process became non-dumpable: whatever reached the boot socket before (it was inherited
    across exec) never carries the job. (Privileges go once the zygote is confined: main.)"""
    from kubelab.grading.contain import SCRATCH, seal_filesystem, traced

    if traced():
        raise SystemExit("a debugger is attached to the grading process: refusing to grade")
    problem = seal_filesystem() if contained else ""
    if problem:
        raise SystemExit(f"cannot make the filesystem read-only for the sandboxes: {problem}")
    if contained:
        tempfile.tempdir = os.path.join(SCRATCH, "work")  # sandboxes' working dirs and output
        os.mkdir(tempfile.tempdir, 0o700)
    with socket.socket(fileno=boot_fd) as boot:
        ours, theirs = socket.socketpair()
        socket.send_fds(boot, [b"ready"], [theirs.fileno()])
        theirs.close()
    return ours


def _read_job(channel: socket.socket) -> dict[str, Any]:
    data = bytearray()
    while chunk := channel.recv(1 << 16):
        data += chunk
        if len(data) > _MAX_JOB:
            raise SystemExit("the job is too large")
    job = json.loads(data)
    if not isinstance(job, dict):
        raise SystemExit("the job is not a JSON object")
    return job


def _zygote(job: dict[str, Any], ex: Exercise, contained: bool) -> Zygote:
    """The zygote for this job: on the exercise's sandbox kubelab and, contained, confined to
    a filesystem of the Python runtime, that kubelab and the submission's folder (with the
    reference solutions, the hidden checks and any kubelab install inside it covered)."""
    import atexit
    import shutil

    import kubelab
    from kubelab.grading.contain import SCRATCH, runtime_paths

    layout = Plan.from_json(job["sandbox"]) if job.get("sandbox") else plan(ex.forbidden_imports)
    tree = tempfile.mkdtemp(prefix="kubelab-sandbox-lib-", dir=SCRATCH if contained else None)
    if not contained:
        atexit.register(shutil.rmtree, tree, True)
    write(layout, Path(tree))
    folder = os.path.dirname(str(job.get("path") or ""))
    hide = [str(h) for h in job.get("hidden") or ()] + [str(Path(kubelab.__file__).resolve().parent)]
    for place in runtime_paths()[0]:
        if os.path.isdir(place) and place.endswith("-packages"):
            hide += [os.path.join(place, n) for n in os.listdir(place)
                     if n.startswith("kubelab") or (n.startswith("__editable__") and "kubelab" in n)]
    return Zygote(tree, folder=folder if os.path.isdir(folder) else None, hide=tuple(hide),
                  confined_in=os.path.join(SCRATCH, "root") if contained else None,
                  writable=(str(tempfile.tempdir),) if contained else ())


def main(boot_fd: int, contained: bool = False) -> int:
    from kubelab.grading.contain import drop_privileges

    channel = _handshake(boot_fd, contained)
    job = _read_job(channel)
    sys.stdout = sys.stderr  # nothing but results may reach the grader
    nonce = str(job["nonce"])
    ex = exercise(str(job["exercise"]))
    # A new interpreter (it holds nothing of this one's, the nonce included), started while this
    # process may still mount: it confines itself, then drops its privileges for good.
    Sandbox.zygote = _zygote(job, ex, contained)
    problem = drop_privileges()
    if problem:
        raise SystemExit(f"cannot drop the grading process's privileges: {problem}")
    load_checks(job.get("checks_dirs") or ())
    Sandbox.zygote.ready()  # (warm before the first check's clock starts)
    source = Source(Path(job["path"]), str(job["source"]), str(job.get("refused") or ""))
    names, unparsable = (None, "") if source.refused else scan(source)
    if unparsable:
        source = Source(source.path, "", unparsable)
    hidden = tuple(str(h) for h in job.get("hidden") or ())
    wanted = job.get("checks")
    for chk in checks_for(ex.id):
        if wanted is not None and chk.name not in wanted:
            continue
        result = run_check(ex, chk, source, names=names, seed=job.get("seed"),
                           timeout=float(job.get("timeout", DEFAULT_TIMEOUT)),
                           output_limit=int(job.get("output_limit", DEFAULT_OUTPUT_LIMIT)),
                           hidden=hidden)
        channel.sendall((json.dumps({"nonce": nonce, **_bounded(result)}) + "\n").encode())
    channel.sendall((json.dumps({"nonce": nonce, "type": "done"}) + "\n").encode())
    channel.close()
    return 0
