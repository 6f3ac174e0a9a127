"""The grader's grading processes: start them contained, shake hands, send jobs, read verdicts.

Up to `parallel` grading processes (runner.py) run at once, each in its own session and, where
the kernel allows, its own namespaces (contain.py). Each one starts with a socket inherited
across exec, the boot socket; the first thing it does is become non-dumpable and send back,
over it, a socket it created afterwards. The grader believes that second socket only if the
kernel says (SO_PEERCRED) that a process of this runner's session made it; it sends the job on
it and reads verdicts from it, never from the boot socket, from stdout or from a pipe anybody
could open through /proc (a socket cannot be opened there). A runner past its budget is killed
with its whole session, and with it (PID 1 of its namespace) everything it started.

This is the one corner of kubelab that deals in real time and real processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelab.grading.contain import BOOT, containment, sealing
from kubelab.grading.exercises import Check, Exercise

__all__ = ["Job", "run_jobs"]

_CHANNEL_LIMIT = 8 << 20   # bytes of verdicts kept per job
_STDERR_LIMIT = 8 << 10
_STARTUP = 5.0  # seconds a grading process may take to start and import kubelab


@dataclass
class Job:
    name: str
    submission: Path
    exercise: Exercise
    checks: list[Check]
    payload: dict[str, Any]
    nonce: str = field(default_factory=lambda: secrets.token_hex(16))
    refused: str = ""   # the grader will not run this (not handed in, a symlink, too large)
    broken: str = ""    # the runner did not start as it must: no verdict of it is believed
    timed_out: bool = False
    verdicts: bytearray = field(default_factory=bytearray)  # what came back on the channel
    stderr: bytearray = field(default_factory=bytearray)
    proc: subprocess.Popen[bytes] | None = None
    boot: socket.socket | None = None
    channel: socket.socket | None = None
    streams: set[str] = field(default_factory=set)  # still open: "boot", "channel", "stderr"
    deadline: float = 0.0


def run_jobs(jobs: list[Job], parallel: int, timeout: float) -> None:
    """Run the jobs, `parallel` at a time; kill any past its budget."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONHASHSEED"] = "0"  # the simulation iterates sets: fix their order
    selector = selectors.DefaultSelector()
    waiting, running = list(jobs), list[Job]()
    while waiting or running:
        while waiting and len(running) < parallel:
            job = waiting.pop(0)
            _start(job, env, selector, timeout)
            running.append(job)
        wait = max(0.0, min(j.deadline for j in running) - time.monotonic())
        for key, _ in selector.select(timeout=wait):
            _ready(selector, key)
        now = time.monotonic()
        for job in [j for j in running if not j.streams or j.broken or now > j.deadline]:
            _finish(job, selector)
            running.remove(job)
    selector.close()


def _start(job: Job, env: dict[str, str], selector: selectors.BaseSelector, timeout: float) -> None:
    ours, theirs = socket.socketpair()
    prefix, _ = containment()
    home = str(Path(__file__).resolve().parents[2])  # the folder holding this kubelab
    job.proc = subprocess.Popen([*prefix, sys.executable, "-P", "-c", BOOT, str(theirs.fileno()), home,
                                 *(["contained"] if prefix and not sealing() else [])],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env, pass_fds=(theirs.fileno(),),
                                start_new_session=True)
    theirs.close()
    job.boot = ours
    job.deadline = time.monotonic() + _STARTUP + len(job.checks) * (timeout + 2)
    assert job.proc.stderr is not None
    os.set_blocking(job.proc.stderr.fileno(), False)
    selector.register(job.proc.stderr, selectors.EVENT_READ, (job, "stderr"))
    selector.register(ours, selectors.EVENT_READ, (job, "boot"))
    job.streams = {"boot", "stderr"}


def _ready(selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
    job, stream = key.data
    if stream == "boot":
        selector.unregister(key.fileobj)
        job.streams.discard("boot")
        _handshake(job, selector)
        return
    try:
        chunk = os.read(key.fd, 1 << 16)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        chunk = b""
    if not chunk:
        selector.unregister(key.fileobj)
        job.streams.discard(stream)
        return
    buffer = job.stderr if stream == "stderr" else job.verdicts
    buffer.extend(chunk)
    if stream == "stderr" and len(buffer) > _STDERR_LIMIT:  # keep the end of stderr...
        del buffer[: len(buffer) - _STDERR_LIMIT]
    elif len(buffer) > _CHANNEL_LIMIT:                      # ...and the start of the verdicts
        del buffer[_CHANNEL_LIMIT:]


def _handshake(job: Job, selector: selectors.BaseSelector) -> None:
    """Take the runner's own socket from the boot socket, check who made it, send the job."""
    assert job.boot is not None and job.proc is not None
    try:
        message, fds, _, _ = socket.recv_fds(job.boot, 16, 2)
    except OSError as err:
        message, fds = f"{err}".encode(), []
    job.boot.close()
    channel = socket.socket(fileno=fds[0]) if len(fds) == 1 and message == b"ready" else None
    for fd in fds[1:] if channel is not None else fds:
        os.close(fd)
    if channel is None or not _made_by(channel, job.proc.pid):
        job.broken = "the grading process did not start properly (no handshake from it)"
        if channel is not None:
            channel.close()
        return
    try:
        channel.settimeout(max(0.1, job.deadline - time.monotonic()))
        channel.sendall(json.dumps({"nonce": job.nonce, **job.payload}).encode())
        channel.shutdown(socket.SHUT_WR)
        channel.setblocking(False)
    except OSError as err:
        job.broken = f"the grading process did not take its job ({err})"
        channel.close()
        return
    job.channel = channel
    job.streams.add("channel")
    selector.register(channel, selectors.EVENT_READ, (job, "channel"))


def _made_by(channel: socket.socket, session: int) -> bool:
    """SO_PEERCRED of a socketpair: the process that created it, which must be of this runner's
    session (it is the session leader's child inside the namespace, or the leader itself)."""
    try:
        pid, _uid, _gid = struct.unpack("3i", channel.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                 struct.calcsize("3i")))
        return pid > 0 and os.getsid(pid) == session
    except (OSError, AttributeError):  # no SO_PEERCRED (not Linux): the socket alone must do
        return not hasattr(socket, "SO_PEERCRED")


def _finish(job: Job, selector: selectors.BaseSelector) -> None:
    assert job.proc is not None
    if job.streams and not job.broken:  # still talking: out of time
        job.timed_out = True
    for sock in (job.boot, job.channel):
        if sock is not None and sock.fileno() != -1:
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(sock)
            sock.close()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(job.proc.pid, signal.SIGKILL)  # the runner, its zygote, its sandboxes
    job.proc.wait()
    if job.proc.stderr is not None:
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(job.proc.stderr)
        with contextlib.suppress(OSError, TypeError):  # the last words of a runner that died
            job.stderr.extend(job.proc.stderr.read(_STDERR_LIMIT) or b"")
        job.proc.stderr.close()
