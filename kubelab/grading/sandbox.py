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
import importlib.abc
import os
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


def guard(exercise_id: str, modules: list[str], dirs: list[str]) -> None:
    """Refuse, from here on, what the exercise asks the learner to write: importing one of
    `modules` however the name is spelt (importlib.import_module("kubelab.scheduler." +
    "plugins"), __import__, a finder of one's own) and reading their files or anything under
    `dirs` (the reference solutions, an instructor's hidden checks) by any path. An audit hook
    (PEP 578) cannot be removed by Python code; the loaded modules are dropped from sys.modules
    and their parents first. It stops shortcuts, not a determined cheat with ctypes: see the
    threat model in kubelab/grading/__init__.py."""
    banned = tuple(modules)
    hidden = [os.path.realpath(d) for d in dirs]
    for name in sorted(sys.modules, reverse=True):
        if name in banned or name.startswith(tuple(b + "." for b in banned)):
            module = sys.modules.pop(name)
            hidden += [os.path.realpath(p) for p in getattr(module, "__path__", [])]
            file = getattr(module, "__file__", None)
            if file and not hasattr(module, "__path__"):
                hidden.append(os.path.realpath(file))
            parent, _, child = name.rpartition(".")
            with contextlib.suppress(AttributeError, KeyError):
                delattr(sys.modules[parent], child)
    refused = tuple(hidden)
    words = f"exercise {exercise_id} asks you to write this yourself"

    def refuse_import(name: str) -> None:
        if name in banned or name.startswith(tuple(b + "." for b in banned)):
            raise ImportError(f"{words}: {name} is not available while grading")

    class Refuse(importlib.abc.MetaPathFinder):  # the import system's own way, with its words
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
            refuse_import(fullname)

    sys.meta_path.insert(0, Refuse())

    def hook(event: str, args: tuple[Any, ...]) -> None:  # and what no Python code can undo
        if event == "import" and isinstance(args[0], str):
            refuse_import(args[0])
        elif event == "open" and isinstance(args[0], (str, bytes)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if any(path == h or path.startswith(h + os.sep) for h in refused):
                raise PermissionError(f"{words}: {path} is not readable while grading")
        elif event in _CLOSED_EVENTS:
            raise RuntimeError(f"{event} is not available while grading")

    sys.addaudithook(hook)


# Ways around the guard from Python: other programs (which cat a file), raw memory.
_CLOSED_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                            "os.spawn", "ctypes.dlopen", "gc.get_objects", "gc.get_referrers",
                            "gc.get_referents"})


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
        guard(str(refuse["exercise"]), list(refuse["modules"]), list(refuse["dirs"]))
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


if __name__ == "__main__":
    sys.stdin = open(os.devnull)  # noqa: SIM115 - the sandbox reads nothing from stdin
    sys.exit(main(sys.argv[1:]))
