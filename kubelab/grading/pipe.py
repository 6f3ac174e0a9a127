"""Framed JSON messages over a pair of pipes, with a deadline: the transport under rpc.py.

Each message is a 4-byte big-endian length and that many bytes of JSON (a list). On the
grader's side every wait has the check's deadline, so a sandbox that stops reading or writing
(an infinite loop, a deadlock) ends the check with CallTimeout instead of hanging the grader;
the sandbox's side waits as long as it takes.
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Callable
from typing import Any

from kubelab.grading.remote import CallTimeout, OutOfTime, ProtocolError, SandboxDied, SessionError

__all__ = ["MAX_MESSAGE", "Pipe"]

MAX_MESSAGE = 16 << 20  # bytes; a bigger message means a runaway value, not a real answer


class Pipe:
    def __init__(self, rfd: int, wfd: int, deadline: Callable[[], float | None] | None = None) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.deadline = deadline or (lambda: None)
        self.pending: list[str] = []  # calls waiting for an answer, outermost first
        self.dead: SessionError | None = None

    def _fail(self, err: SessionError) -> SessionError:
        self.dead = err
        return err

    # ------------------------------------------------------------------ the pipes

    def send(self, message: list[Any]) -> None:
        try:
            payload = json.dumps(message, separators=(",", ":")).encode()
        except (TypeError, ValueError) as err:
            raise self._fail(ProtocolError(f"cannot send {err}")) from None
        if len(payload) > MAX_MESSAGE:
            raise self._fail(ProtocolError(f"a value of {len(payload)} bytes is too big to send"))
        data = memoryview(len(payload).to_bytes(4, "big") + payload)
        while data:
            self._wait(self.wfd, select.POLLOUT)
            try:
                written = os.write(self.wfd, data)
            except BlockingIOError:
                continue
            except OSError:
                raise self._fail(SandboxDied("the other side closed the pipe")) from None
            data = data[written:]

    def recv(self) -> list[Any]:
        size = int.from_bytes(self._read(4), "big")
        if size > MAX_MESSAGE:
            raise self._fail(ProtocolError(f"a message of {size} bytes is too big"))
        try:
            message = json.loads(self._read(size))
        except (ValueError, RecursionError):
            raise self._fail(ProtocolError("a message that is not JSON")) from None
        if not isinstance(message, list):
            raise self._fail(ProtocolError("a message that is not a list"))
        return message

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            self._wait(self.rfd, select.POLLIN)
            try:
                chunk = os.read(self.rfd, min(left, 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise self._fail(SandboxDied("the other side closed the pipe"))
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _wait(self, fd: int, event: int) -> None:
        deadline = self.deadline()
        if deadline is None:
            return
        if time.monotonic() >= deadline:
            raise self._fail(OutOfTime("the check's time was up"))
        poller = select.poll()
        poller.register(fd, event)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                what = self.pending[-1] if self.pending else "the sandbox"
                raise self._fail(CallTimeout(what))
            if poller.poll(left * 1000):
                return
