"""The sandbox: the process a submission's code runs in, and where nothing else runs.

The grader starts it as

    python -s -P -m kubelab.grading.sandbox RFD WFD CPU_SECONDS MEMORY_BYTES OUTPUT_BYTES

with the two pipe ends of its Connection, stdout and stderr going to one capped file, and an
empty working directory. It limits itself (CPU seconds, address space, size of any file it
writes) before any submission code runs, loads the learner's module from its file, and then only
answers the grader's calls until the grader hangs up.

Nothing here is trusted: the learner's code may patch this module, kubelab or sys.modules, print
anything, exit or loop forever. None of that reaches the grader, which decides from what the
cluster in its own process saw (see kubelab/grading/__init__.py for the threat model).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import sys
from pathlib import Path
from typing import Any

from kubelab.grading.remote import SessionError
from kubelab.grading.rpc import Connection

__all__ = ["Root", "main"]

_PR_SET_PDEATHSIG = 1


class Root:
    """The first object the grader gets: the learner's exercise, and a way to call it that
    also hands back the arguments as the call left them (admission plugins and score
    normalizers change their arguments in place, and those cross the wire by value)."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def invoke(self, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        result = fn(*args, **kwargs)
        return [result, args]


def _limit(cpu_seconds: int, memory_bytes: int, output_bytes: int) -> None:
    import resource

    for limit, value in ((resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_AS, memory_bytes),
                         (resource.RLIMIT_FSIZE, output_bytes)):
        if value > 0:
            hard = value + 1 if limit == resource.RLIMIT_CPU else value
            with contextlib.suppress(ValueError, OSError):  # a lower limit from outside stays
                resource.setrlimit(limit, (value, hard))
    # Die with the grader: an orphaned sandbox stuck in a loop would burn CPU for nothing.
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _load(path: Path, module_name: str) -> Any:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path.name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    rfd, wfd, cpu, memory, output = (int(a) for a in argv[:5])
    _limit(cpu, memory, output)
    conn = Connection(rfd, wfd, policy=None)
    try:
        hello = conn.recv()
        if len(hello) != 5 or hello[0] != "hello":
            return 2
        _, nonce, path_text, module_name, symbol = hello
        path = Path(path_text)
        sys.path.insert(0, str(path.parent))  # the learner's helper modules sit next to it
        sys.argv = [str(path)]
        try:
            module = _load(path, str(module_name))
            target = getattr(module, str(symbol))
        except BaseException as err:  # SyntaxError, ImportError, SystemExit at import time...
            conn.send(["failed", nonce, conn.encode_error(err)])
            return 0
        conn.send(["ready", nonce, conn.encode(Root(target))])
        conn.serve_forever()
    except SessionError:
        return 0  # the grader hung up: the check is over
    return 0


if __name__ == "__main__":
    sys.stdin = open(os.devnull)  # noqa: SIM115 - the sandbox reads nothing from stdin
    sys.exit(main(sys.argv[1:]))
