"""A zygote: a clean, warmed-up process that forks sandboxes.

Starting a fresh Python for every check and importing kubelab in it costs about a third of a
second; a grading run starts dozens of sandboxes. So the grading process forks this zygote right
after importing kubelab and *before* it reads its job (the nonce, the submission, an
instructor's hidden checks): the zygote holds nothing a submission could use. For each check it
forks a child that becomes the sandbox: stdout and stderr to the capped output file, stdin from
/dev/null, an empty working directory, a minimal environment, no other file descriptors, no
inherited search path, then the limits of sandbox.main().

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

__all__ = ["Zygote"]

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
    def __init__(self, close: list[int] | None = None) -> None:
        """close: the grading process's descriptors the zygote must not keep (its channel to
        the grader)."""
        ours, theirs = socket.socketpair()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the zygote
            ours.close()
            for fd in close or ():
                os.close(fd)
            try:
                _serve(theirs)
            finally:
                os._exit(0)
        theirs.close()
        self.pid = pid
        self.sock = ours

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
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            _send(self.sock, message, fds)
            reply, _ = _recv(self.sock)
            return reply
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def close(self) -> None:
        self.sock.close()


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
        sys.path[:] = [p for p in sys.path if p]  # the grader runs with -P: no working directory
        sys.dont_write_bytecode = True             # leave no __pycache__ in a student's folder
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
