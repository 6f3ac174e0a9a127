"""A zygote: a fresh interpreter, alone in the sandbox's filesystem, that forks sandboxes.

Starting a fresh Python for every check and importing kubelab in it costs about a third of a
second; a grading run starts dozens of sandboxes. So each grading process starts one zygote,
and the zygote forks a sandbox per check. The zygote is not a fork of the grading process (that
one has the checks and all of kubelab loaded): it is a new interpreter, exec'd with `-I -S`
and a search path of only the sandbox's kubelab (prune.py: no checks, no reference of what the
learner writes) and the Python runtime, so nothing of the grader's is in its memory, and
site-packages' editable-install hook (which maps kubelab to the repository) never runs. In a
contained grading process it is exec'd inside a mount namespace of its own (contain.confine)
whose whole filesystem is the Python runtime, that kubelab and the submission's folder, with
no privileges left. For each check it forks a child that becomes the sandbox: stdout and
stderr to the capped output file, stdin from /dev/null, an empty working directory, a minimal
environment, no other file descriptors, then the limits of sandbox.main().

The grading process talks to it over a UNIX socket (JSON plus the pipe ends, SCM_RIGHTS):
spawn, and wait (or kill and wait). The zygote dies with the grading process, and its sandboxes
with it. Waiting polls real time: process control is the one place the grader cannot be virtual.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time
from typing import Any

__all__ = ["Zygote", "serve"]

# The zygote's first lines: its search path is exactly what the grading process gave it.
_BOOT = ("import sys\n"
         "sys.path[:] = sys.argv[2:]\n"
         "from kubelab.grading.zygote import serve\n"
         "serve(int(sys.argv[1]))\n")

_PR_SET_PDEATHSIG = 1


def _send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    payload = len(data).to_bytes(4, "big") + data
    if fds:
        socket.send_fds(sock, [payload], fds)
    else:
        sock.sendall(payload)


def _recv(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 8)
    if not data:
        return None, fds
    size = int.from_bytes(data[:4], "big")
    while len(data) < size + 4:
        more = sock.recv(size + 4 - len(data))
        if not more:
            return None, fds
        data += more
    return json.loads(data[4:size + 4]), fds


class Zygote:
    def __init__(self, kubelab_dir: str, *, folder: str | None = None, hide: tuple[str, ...] = (),
                 confined_in: str | None = None, writable: tuple[str, ...] = ()) -> None:
        """kubelab_dir: the folder holding the sandbox's kubelab (prune.write). confined_in:
        where (on SCRATCH) to build the zygote's own filesystem (contained grading processes
        only: the caller must still hold its privileges); it binds the Python runtime,
        kubelab_dir, the submission's `folder` and `writable` (the sandboxes' working
        directories), with `hide` covered."""
        from kubelab.grading import contain

        binds, search = contain.runtime_paths()
        python = os.path.realpath(sys.executable)
        argv = [python, "-I", "-S", "-c", _BOOT, "", kubelab_dir, *search]
        ours, theirs = socket.socketpair()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the zygote, once it has exec'd
            code = 1
            try:
                fd = theirs.fileno()
                if confined_in is not None:
                    everything = [*binds, kubelab_dir, *([folder] if folder else [])]
                    problem = (contain.confine(confined_in, everything, list(writable), list(hide))
                               or contain.drop_privileges())
                    if problem:
                        raise SystemExit(f"cannot confine the sandboxes: {problem}")
                os.closerange(3, fd)  # nothing of the grading process's but this socket
                os.closerange(fd + 1, 1 << 16)
                os.set_inheritable(fd, True)
                argv[5] = str(fd)
                os.execve(python, argv, {"LANG": "C.UTF-8"})
            except BaseException as err:
                with contextlib.suppress(BaseException):
                    os.write(2, f"kubelab zygote: {err}\n".encode())
            finally:
                os._exit(code)
        theirs.close()
        self.pid = pid
        self.sock = ours
        self._warm = False

    def ready(self) -> bool:
        """Wait until the zygote has imported what sandboxes need (before any check's clock
        starts); False if it is gone."""
        if not self._warm:
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            try:
                self._warm = _recv(self.sock)[0] is not None
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return self._warm

    def spawn(self, argv: list[str], cwd: str, env: dict[str, str], rpc_fds: tuple[int, int],
              output_fd: int) -> int:
        """A sandbox running sandbox.main(argv); returns its pid."""
        reply = self._ask({"op": "spawn", "argv": argv, "cwd": cwd, "env": env}, [*rpc_fds, output_fd])
        if reply is None:
            raise OSError("the zygote is gone")
        return int(reply["pid"])

    def wait(self, pid: int, timeout: float, kill: bool = False) -> int | None:
        """Its exit status as subprocess reports it (negative: the signal), or None if it is
        still running after `timeout` seconds. kill=True kills it first."""
        reply = self._ask({"op": "wait", "pid": pid, "timeout": timeout, "kill": kill})
        return None if reply is None or reply.get("status") is None else int(reply["status"])

    def _ask(self, message: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any] | None:
        # The check's alarm (SIGALRM) waits until the exchange is complete: an exception in the
        # middle of a message would leave the socket out of step for every later check.
        if not self.ready():
            return None
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            _send(self.sock, message, fds)
            reply, _ = _recv(self.sock)
            return reply
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def close(self) -> None:
        self.sock.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def serve(fd: int) -> None:
    """The zygote's main loop, in the fresh interpreter (see _BOOT). It first imports what
    every sandbox needs (the sandbox, the records that cross by value, kubelab's package, which
    imports what of the cluster the sandbox's kubelab has), so that a sandbox starts warm."""
    import importlib

    sys.dont_write_bytecode = True  # leave no __pycache__ in the sandbox's kubelab
    from kubelab.grading import remote, sandbox  # noqa: F401

    for name in ["kubelab", *sorted({v.partition(":")[0] for v in remote.VALUE_TYPES})]:
        with contextlib.suppress(Exception):  # a module this exercise's kubelab leaves out
            importlib.import_module(name)
    sock = socket.socket(fileno=fd)
    _send(sock, {"ready": True})
    _serve(sock)


def _serve(sock: socket.socket) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # never the grading process's result pipe
    while True:
        message, fds = _recv(sock)
        if message is None:
            return
        if message["op"] == "spawn":
            pid = os.fork()
            if pid == 0:
                _become_sandbox(sock, message, fds, devnull)
            for fd in fds:
                os.close(fd)
            _send(sock, {"pid": pid})
        elif message["op"] == "wait":
            _send(sock, {"status": _wait(int(message["pid"]), float(message["timeout"]),
                                         bool(message.get("kill")))})


def _wait(pid: int, timeout: float, kill: bool) -> int | None:
    if kill:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def _become_sandbox(sock: socket.socket, message: dict[str, Any], fds: list[int], devnull: int) -> None:
    code = 1
    try:
        sock.close()
        rpc_r, rpc_w, output = fds
        os.dup2(devnull, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        low, high = sorted((rpc_r, rpc_w))
        os.closerange(3, low)          # nothing of the grading process's stays open
        os.closerange(low + 1, high)
        os.closerange(high + 1, 1 << 16)
        os.chdir(message["cwd"])
        os.environ.clear()
        os.environ.update(message["env"])
        from kubelab.grading import sandbox

        code = sandbox.main([str(rpc_r), str(rpc_w), *message["argv"]])
    except BaseException:
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code)
