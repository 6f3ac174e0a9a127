"""exec, attach and port-forward over SPDY/3.1: what the streams carry, on either transport.

kubectl falls back to SPDY as a plain HTTP upgrade when the WebSocket upgrade is refused, or
when told to (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false, KUBECTL_PORT_FORWARD_WEBSOCKETS=false):
a POST with `Connection: Upgrade`, `Upgrade: SPDY/3.1` and the stream protocols it speaks in
`X-Stream-Protocol-Version` (exec and attach: v4.channel.k8s.io, v3, v2, channel.k8s.io;
port-forward: portforward.k8s.io). The server picks the first the client lists that it speaks
(apimachinery pkg/util/httpstream/httpstream.go Handshake; none: 403 `unable to upgrade: unable
to negotiate protocol: client supports [...], server supports [...]`), answers `101 Switching
Protocols` with the same Upgrade headers and the protocol chosen (pkg/util/httpstream/spdy/
upgrade.go), and from then on the connection carries SPDY frames (spdy.py). SPDY inside
kubectl's WebSocket tunnel (streams.py) carries the same port-forward streams.

- remotecommand (pkg/kubelet/cri/streaming/remotecommand/httpstream.go): the client opens one
  stream per `streamtype`: error, then stdin, stdout, stderr (not with a tty), resize (with a
  tty, v3 on); the server waits for all it expects, then copies the process's output to
  stdout and stderr, stdin's data into the process (its FIN is the end of input), resize's
  JSON TerminalSizes to the terminal. At the end the error stream carries, from v4 on, the
  metav1.Status (v4WriteStatusFunc: Success, or NonZeroExitCode with the ExitCode cause), for
  older protocols the error's text; then every stream and the connection close.
- port-forward (pkg/kubelet/cri/streaming/portforward/httpstream.go): for each local connection
  an error stream, then a data stream, with headers streamtype, port and requestid; the data
  stream is copied to and from the CRI's connection into the pod, and what failed is written
  on the error stream.

Both sessions are sans-IO as spdy.Session is: feed() them bytes, they send() bytes, run() polls
the simulated session every POLL real seconds until it ends, then close() ends the transport.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubelab.serve import spdy

if TYPE_CHECKING:
    from kubelab.apiserver.endpoints.portforward import PortStream
    from kubelab.apiserver.endpoints.subresources import ExecSession

__all__ = ["EXEC_PROTOCOLS", "PORTFORWARD_PROTOCOL", "PortForwardSession", "RemoteCommandSession",
           "negotiate"]

POLL = 0.02
V4, V3, V2, V1 = "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"
EXEC_PROTOCOLS = [V4, V3, V2, V1]
PORTFORWARD_PROTOCOL = "portforward.k8s.io"


def negotiate(client: list[str], server: list[str]) -> tuple[str, str]:
    """(protocol chosen, error): the first protocol the client lists that the server speaks
    (none listed: "", the legacy protocol); error says why none fits."""
    if not client:
        return "", ""
    for protocol in client:
        if protocol in server:
            return protocol, ""
    return "", (f"unable to upgrade: unable to negotiate protocol: client supports "
                f"[{' '.join(client)}], server supports [{' '.join(server)}]")


class PortForwardSession:
    """portforward/httpstream.go: one connection into the pod per data stream the client opens."""

    def __init__(self, answer: dict[str, Any], send: Callable[[bytes], None],
                 close: Callable[[], None]) -> None:
        self.answer, self.close = answer, close
        self.spdy = spdy.Session(send, self._stream)
        self._error_streams: dict[str, spdy.Stream] = {}
        self._connections: list[tuple[spdy.Stream, str, PortStream]] = []

    def feed(self, data: bytes) -> None:
        self.spdy.feed(data)

    def _stream(self, stream: spdy.Stream) -> None:
        """A stream the client opened: accept it; a data stream is a connection into the pod
        (its error stream, opened just before with the same requestid, says what failed)."""
        self.spdy.reply(stream)
        request = stream.headers.get("requestid", "")
        if stream.headers.get("streamtype") == "error":
            self._error_streams[request] = stream
            return
        port = stream.headers.get("port", "")
        conn = self.answer["forward"](self.answer["uid"], int(port)) if port.isdigit() else \
            f'invalid port header "{port}"'
        if isinstance(conn, str):
            self._end(stream, request, conn)
        else:
            self._connections.append((stream, request, conn))

    def _end(self, stream: spdy.Stream, request: str, error: str) -> None:
        errors = self._error_streams.pop(request, None)
        if errors is not None:
            self.spdy.data(errors, error.encode(), fin=True)
        self.spdy.data(stream, b"", fin=True)

    async def run(self) -> None:
        """Copy each data stream to and from its connection in the pod, until the session ends."""
        while not self.spdy.gone:
            for entry in list(self._connections):
                stream, request, conn = entry
                if stream.received:
                    conn.write(bytes(stream.received))
                    stream.received.clear()
                if stream.remote_closed and not conn.closed:
                    conn.close_write()
                out = conn.read()
                if out:
                    self.spdy.data(stream, out)
                if conn.closed:
                    self._connections.remove(entry)
                    self._end(stream, request, conn.error)
            await asyncio.sleep(POLL)
        self.close()

    def closed(self) -> None:
        """The client went away: its connections into the pod are closed."""
        for _, _, conn in self._connections:
            conn.close_write()


class RemoteCommandSession:
    """remotecommand/httpstream.go: exec or attach over the client's SPDY streams."""

    def __init__(self, answer: dict[str, Any], opts: dict[str, Any], protocol: str,
                 send: Callable[[bytes], None], close: Callable[[], None],
                 status: Callable[[int], dict[str, Any]]) -> None:
        self.session: ExecSession = answer["session"]
        self.protocol, self.close, self.status = protocol, close, status
        tty = bool(opts.get("tty"))
        self.expected = {"error"} | {name for name in ("stdin", "stdout") if opts.get(name)}
        if opts.get("stderr") and not tty:
            self.expected.add("stderr")
        if tty and protocol in (V4, V3):
            self.expected.add("resize")
        self.streams: dict[str, spdy.Stream] = {}
        self.spdy = spdy.Session(send, self._stream)
        self._resize = b""
        self._stdin_ended = False

    def feed(self, data: bytes) -> None:
        self.spdy.feed(data)

    def _stream(self, stream: spdy.Stream) -> None:
        self.spdy.reply(stream)
        self.streams[stream.headers.get("streamtype", "")] = stream

    def _input(self) -> None:
        stdin = self.streams.get("stdin")
        if stdin is not None:
            if stdin.received:
                self.session.write(bytes(stdin.received))
                stdin.received.clear()
            if stdin.remote_closed and not self._stdin_ended:  # FIN: the end of input
                self._stdin_ended = True
                self.session.close_stdin()
        resize = self.streams.get("resize")
        if resize is not None and resize.received:  # json.Encoder: one TerminalSize a line
            self._resize += bytes(resize.received)
            resize.received.clear()
            *lines, self._resize = self._resize.split(b"\n")
            for line in lines:
                try:
                    size = json.loads(line)
                    self.session.resize(int(size.get("Width", 0)), int(size.get("Height", 0)))
                except (ValueError, TypeError, AttributeError):
                    pass  # the kubelet logs a bad TerminalSize and goes on

    def _output(self) -> None:
        frames = getattr(self.session, "read_frames", None)
        if frames is None:
            out, err = self.session.read()
            pieces = [("stdout", out), ("stderr", err)]
        else:
            pieces = frames()
        for name, data in pieces:
            stream = self.streams.get(name)
            if data and stream is not None:
                self.spdy.data(stream, data)

    async def run(self) -> None:
        while not self.spdy.gone and not self.expected <= set(self.streams):
            await asyncio.sleep(POLL)   # the client is still opening its streams
        while not self.spdy.gone:
            self._input()
            code = self.session.exit_code
            self._output()
            if code is not None:
                self._finish(code)
                break
            await asyncio.sleep(POLL)
        self.close()

    def _finish(self, code: int) -> None:
        for name in ("stdout", "stderr"):
            if name in self.streams:
                self.spdy.data(self.streams[name], b"", fin=True)
        if self.protocol == V4:
            message = json.dumps(self.status(code)).encode()
        else:
            message = b"" if code == 0 else f"command terminated with exit code {code}".encode()
        self.spdy.data(self.streams["error"], message, fin=True)

    def closed(self) -> None:
        """The client went away: the process's stdin is closed (the process goes on)."""
        self.session.close_stdin()
