"""The grading process's side of a sandbox: start it, say hello, talk, kill it.

A sandbox is forked from the zygote (zygote.py): the grading process's own, made for its
exercise and submission, or, when run_check is used on its own, one started for this sandbox
alone (with the exercise's sandbox kubelab in a temporary folder, and no confinement). It gets
two pipes for rpc.Connection, one capped output file for stdout and stderr, an empty working
directory and a minimal environment; its hello carries the source the grader read (source.py)
and the modules the exercise asks the learner to write (for the import guard's message).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import tempfile
from pathlib import Path
from typing import IO

from kubelab.grading.exercises import Exercise
from kubelab.grading.remote import ProtocolError, Proxy, RemoteError
from kubelab.grading.rpc import Connection
from kubelab.grading.shared import POLICY
from kubelab.grading.source import Source
from kubelab.grading.zygote import Zygote

__all__ = ["EXCERPT", "MEMORY_LIMIT", "LoadFailed", "Sandbox"]

MEMORY_LIMIT = 2 << 30  # bytes of address space for a sandbox
EXCERPT = 2000          # characters of output kept for the report


class LoadFailed(Exception):
    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.message, self.detail = message, detail


class Sandbox:
    """A fresh process holding the learner's module; close() kills it and collects its output.

    Forked from Sandbox.zygote when this process has one (the usual case, see zygote.py),
    else from a zygote of its own."""

    zygote: Zygote | None = None

    def __init__(self, source: Source, ex: Exercise, *, deadline: float, output_limit: int,
                 cpu_seconds: int) -> None:
        self.source, self.path, self.module, self.symbol = source, source.path, ex.module, ex.symbol
        # What the sandbox's import guard names (sandbox.guard): the exercise's forbidden
        # modules and the checks. Neither exists in the sandbox's kubelab (prune.py).
        self.guard = {"exercise": ex.id, "modules": [*ex.forbidden_imports, "kubelab.grading.checks"]}
        self.deadline = deadline
        self.output_limit = output_limit
        self.workdir = tempfile.TemporaryDirectory(prefix="kubelab-sandbox-")
        self.output: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = {"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8",
               "PATH": os.environ.get("PATH", ""), "HOME": self.workdir.name, "LANG": "C.UTF-8"}
        limits = [str(cpu_seconds), str(MEMORY_LIMIT), str(output_limit)]
        self._status: int | None = None
        self._own: tuple[Zygote, str] | None = None
        zygote = self.zygote
        if zygote is None:  # run_check on its own: a zygote for this sandbox alone
            from kubelab.grading.prune import plan, write

            tree = tempfile.mkdtemp(prefix="kubelab-sandbox-lib-")
            write(plan(ex.forbidden_imports), Path(tree))
            zygote = Zygote(tree)
            zygote.ready()
            self._own = (zygote, tree)
        self._zygote = zygote
        self.pid = zygote.spawn(limits, self.workdir.name, env, (to_child_r, from_child_w),
                                self.output.fileno())
        os.close(to_child_r)
        os.close(from_child_w)
        os.set_blocking(to_child_w, False)
        os.set_blocking(from_child_r, False)
        self.conn = Connection(from_child_r, to_child_w, policy=POLICY, deadline=lambda: self.deadline)

    def start(self) -> Proxy:
        nonce = secrets.token_hex(8)
        self.conn.pending.append(f"importing {self.path.name}")
        self.conn.send(["hello", nonce, str(self.path), self.module, self.symbol, self.source.text,
                        self.guard])
        message = self.conn.recv()
        self.conn.pending.pop()
        if len(message) == 3 and message[0] == "ready" and message[1] == nonce:
            root = self.conn.decode(message[2])
            if isinstance(root, Proxy):
                return root
        if len(message) == 3 and message[0] == "failed" and message[1] == nonce:
            err = self.conn.decode_error(message[2])
            raise _load_failure(self.path, self.symbol, err)
        raise ProtocolError("the sandbox did not start properly")

    def wait(self, timeout: float, kill: bool = False) -> int | None:
        """The exit status (negative: killed by that signal), None while it still runs."""
        if self._status is not None:
            return self._status
        self._status = self._zygote.wait(self.pid, timeout, kill)
        return self._status

    def close(self) -> tuple[str, bool]:
        """Kill the sandbox; return (the start of what it printed, whether it hit the limit)."""
        self.wait(1.0, kill=True)
        for fd in (self.conn.rfd, self.conn.wfd):
            with contextlib.suppress(OSError):
                os.close(fd)
        size = os.fstat(self.output.fileno()).st_size
        self.output.seek(0)
        text = self.output.read(EXCERPT).decode("utf-8", "replace")
        self.output.close()
        self.workdir.cleanup()
        if self._own is not None:
            zygote, tree = self._own
            zygote.close()
            shutil.rmtree(tree, ignore_errors=True)
            self._own = None
        return text, size >= self.output_limit

    def exit_status(self) -> str:
        code = self.wait(1.0)
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"


def _load_failure(path: Path, symbol: str, err: BaseException) -> LoadFailed:
    if not isinstance(err, RemoteError):
        return LoadFailed(f"could not load {path.name}: {err}")
    if err.type_name == "AttributeError" and symbol in err.message:
        return LoadFailed(f"{path.name} has no {symbol}: did you rename or delete it?")
    if err.type_name == "TypeError" and err.message.startswith(f"{symbol} is "):
        return LoadFailed(f"{path.name}: {err.message}")
    if err.type_name in ("SyntaxError", "IndentationError", "TabError"):
        return LoadFailed(f"{path.name} does not compile: {err.type_name}: {err.message}",
                          err.remote_traceback)
    return LoadFailed(f"importing {path.name} raised {err.type_name}: {err.message}",
                      err.remote_traceback)
