"""The sandbox: the process a submission's code runs in, and where nothing else runs.

The zygote (zygote.py) forks it and calls main([RFD, WFD, CPU_SECONDS, MEMORY_BYTES,
OUTPUT_BYTES]) with the two pipe ends of its Connection, stdout and stderr going to one capped
file, and an empty working directory. It runs on the sandbox's kubelab (prune.py), which has
no checks and no reference of what the learner writes. It limits itself (CPU seconds, address
space, size of any file it writes) before any submission code runs, loads the learner's module
from the text the grader read, and then only answers the grader's calls until it hangs up.

Nothing here is trusted: the learner's code may patch this module, kubelab or sys.modules, print
anything, exit or loop forever. None of that reaches the grader, which decides from what the
cluster in its own process saw (see kubelab/grading/__init__.py for the threat model).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import signal
import sys
import types
from pathlib import Path
from typing import Any

from kubelab.grading.remote import SessionError
from kubelab.grading.rpc import Connection

__all__ = ["Root", "guard", "main"]

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


def _load(path: Path, module_name: str, text: str) -> Any:
    """The learner's module from the text the grader read (not from the disk again)."""
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    sys.modules[module_name] = module
    exec(compile(text, str(path), "exec", dont_inherit=True), module.__dict__)
    return module


def guard(exercise_id: str, modules: list[str]) -> None:
    """Say, from here on, why importing one of `modules` fails however the name is spelt
    (importlib.import_module("kubelab.scheduler." + "plugins"), __import__): the exercise asks
    the learner to write it. This is a message, not the barrier: those modules do not exist in
    the sandbox's kubelab (prune.py), and nothing of the grader's, no solution and no hidden
    check exists in its filesystem (contain.confine). See kubelab/grading/__init__.py."""
    banned = tuple(modules)
    words = f"exercise {exercise_id} asks you to write this yourself"

    class Refuse(importlib.abc.MetaPathFinder):  # the import system's own way, with its words
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
            if fullname in banned or fullname.startswith(tuple(b + "." for b in banned)):
                raise ImportError(f"{words}: {fullname} is not available while grading")

    sys.meta_path.insert(0, Refuse())


def main(argv: list[str]) -> int:
    rfd, wfd, cpu, memory, output = (int(a) for a in argv[:5])
    _limit(cpu, memory, output)
    conn = Connection(rfd, wfd, policy=None)
    try:
        hello = conn.recv()
        if len(hello) != 7 or hello[0] != "hello":
            return 2
        _, nonce, path_text, module_name, symbol, text, refuse = hello
        path = Path(path_text)
        sys.path.insert(0, str(path.parent))  # the learner's helper modules sit next to it
        sys.argv = [str(path)]
        guard(str(refuse["exercise"]), [str(m) for m in refuse["modules"]])
        try:
            module = _load(path, str(module_name), str(text))
            target = getattr(module, str(symbol))
            if not callable(target):
                raise TypeError(f"{symbol} is {type(target).__name__}, not a function or a class")
        except BaseException as err:  # SyntaxError, ImportError, SystemExit at import time...
            conn.send(["failed", nonce, conn.encode_error(err)])
            return 0
        conn.send(["ready", nonce, conn.encode(Root(target))])
        conn.serve_forever()
    except SessionError:
        return 0  # the grader hung up: the check is over
    return 0

