"""exec, attach and port-forward over WebSocket: the channel protocols of k8s.io/apimachinery.

What the real kubectl 1.34 and the official Python client speak to kube-apiserver for
pods/exec and pods/attach (client-go tools/remotecommand websocket.go, the default since the
RemoteCommandWebsockets feature; SPDY is only its fallback) and what the Python client speaks
for pods/portforward (kubernetes/stream/ws_client.py, PortForward). kubectl's port-forward
asks for `SPDY/3.1+portforward.k8s.io` instead: SPDY inside the WebSocket (spdy.py).

- The WebSocket subprotocol is negotiated from the client's list, first match wins
  (wsstream/conn.go handshake): for exec and attach `v5.channel.k8s.io`, `v4.channel.k8s.io`
  or `channel.k8s.io` (also no subprotocol at all); for port-forward kubectl's SPDY tunnel,
  `v4.channel.k8s.io` or `channel.k8s.io` (the kubelet's portforward/websocket.go offers no v5).
- Every binary message is one channel byte then data (wsstream/conn.go): for exec and attach
  0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize (a JSON TerminalSize, {"Width", "Height"});
  v5 adds the close signal, 255 then the channel closed (the client's stdin reached EOF).
- The server first sends an empty message on the lowest channel it writes (stdout, else
  stderr, else error: the kubelet's remotecommand/websocket.go createWebSocketStreams), so the
  client knows the streams are up.
- The error channel ends the session. From v4 on it carries a metav1.Status
  (remotecommand/httpstream.go v4WriteStatusFunc): Success, or Failure with reason
  NonZeroExitCode, an ExitCode cause holding the code and the message
  `command terminated with non-zero exit code: error executing command [sh -c exit 3], exit
  code 3` (remotecommand/exec.go ServeExec, containerd's exit error); kubectl reads it and
  exits with that code ("command terminated with exit code 3"). channel.k8s.io carries plain
  text and no exit code.
- Port-forward: ports=80,443 in the query; for the i-th port, channel 2i carries its data and
  2i+1 its errors, and each channel first carries the port number (two bytes, little endian:
  portforward/websocket.go).

The process runs on the cluster's virtual clock, which the pacer moves with the wall clock
(pacer.py): each stream polls its session every POLL real seconds and sends what it wrote.

The upgrade is authorized as verb `create` on the subresource, as kube-apiserver does for a
WebSocket's GET (AuthorizePodWebsocketUpgradeCreatePermission); the API server refuses
before any upgrade, with its Status. A stream ends with the watches when every API server is
down or the server stops.

SPDY as a plain HTTP upgrade (`Upgrade: SPDY/3.1`, kubectl's fallback when told
KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false or KUBECTL_PORT_FORWARD_WEBSOCKETS=false) is answered
here too: the handshake (`X-Stream-Protocol-Version`), then the connection is detached from HTTP
and carries SPDY frames; spdystreams.py holds what its streams carry.

Departure: the base64 channel protocols are not offered.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import tornado.iostream
import tornado.websocket

from kubelab.api.errors import ApiError
from kubelab.serve.handlers import _Base
from kubelab.serve.requestinfo import connect_options, parse_path, to_request
from kubelab.serve.spdystreams import (
    EXEC_PROTOCOLS,
    PORTFORWARD_PROTOCOL,
    PortForwardSession,
    RemoteCommandSession,
    negotiate,
)

if TYPE_CHECKING:
    from kubelab.apiserver.endpoints.portforward import PortStream
    from kubelab.apiserver.endpoints.subresources import ExecSession

__all__ = ["POLL", "StreamHandler", "exit_status"]

POLL = 0.02  # real seconds between two reads of a session
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
V5, V4, V1 = "v5.channel.k8s.io", "v4.channel.k8s.io", "channel.k8s.io"
SPDY_PORTFORWARD = "SPDY/3.1+portforward.k8s.io"  # kubectl's tunnel (tunneling_dialer.go)
_EXEC_PROTOCOLS = (V5, V4, V1)
_PORTFORWARD_PROTOCOLS = (SPDY_PORTFORWARD, V4, V1)


def exit_status(exit_code: int, command: list[str]) -> dict[str, Any]:
    """What the error channel says when the process ended (remotecommand/exec.go ServeExec)."""
    if exit_code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command "
                       f"[{' '.join(command)}], exit code {exit_code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]}}



def _frames(session: ExecSession) -> list[tuple[int, bytes]]:
    """(channel, data) of what the session printed since the last read, in the order the
    process printed it when the session keeps it (the process model's read_frames), else
    stdout then stderr."""
    ordered = getattr(session, "read_frames", None)
    if ordered is None:
        out, err = session.read()
        return [(STDOUT, out), (STDERR, err)]
    return [(STDOUT if name == "stdout" else STDERR, data) for name, data in ordered()]

class StreamHandler(tornado.websocket.WebSocketHandler, _Base):
    """/api/v1/namespaces/<ns>/pods/<name>/exec|attach|portforward, upgraded to a WebSocket.

    prepare() sends the request through the API server's pipeline first (authentication,
    RBAC's create on pods/exec, the pod and container checks, the kubelet): a refusal is the
    Status it answers, with its code, and no upgrade."""

    _answer: dict[str, Any]
    _opts: dict[str, Any]
    _spdy: PortForwardSession | None = None
    _task: asyncio.Task[None] | None = None
    _protocol = ""

    async def prepare(self) -> None:
        self._answer = {}
        info = parse_path("POST", self.request.path, False)  # a connect is a create
        assert info is not None  # the route matched a pod's connect subresource
        self._subresource = info.subresource
        try:
            args = {k: [v.decode("utf-8", "replace") for v in vs]
                    for k, vs in self.request.query_arguments.items()}
            request = to_request(info, {}, None, self.token())
            request.options.update(connect_options(info.subresource, args))
            request.impersonate = self.impersonation()
            self._answer = dict(self.server.cluster.api.handle(request))
            self._opts = request.options
        except ApiError as err:
            self.send_error_status(err)
            return
        upgrade = self.request.headers.get("Upgrade", "").lower()
        if upgrade == "spdy/3.1" and "upgrade" in self.request.headers.get("Connection", "").lower():
            self._upgrade_spdy()
            return
        if self.request.method != "GET" or upgrade != "websocket":
            self.on_close()  # the process is let go
            self.send_error_status(ApiError(400, "BadRequest", f"unable to upgrade connection: "
                                            f"{upgrade or 'no upgrade'} is not supported"))

    # ------------------------------------------------------------------ SPDY, a plain upgrade

    def _upgrade_spdy(self) -> None:
        """httpstream.Handshake, then spdy's UpgradeResponse: 101, and SPDY frames from then on
        on this connection (spdystreams.py), for exec, attach and port-forward alike."""
        offered = [p.strip() for value in self.request.headers.get_list("X-Stream-Protocol-Version")
                   for p in value.split(",") if p.strip()]
        portforward = self._subresource == "portforward"
        protocol, error = negotiate(offered, [PORTFORWARD_PROTOCOL] if portforward else EXEC_PROTOCOLS)
        if error:
            self.on_close()
            self.set_status(403)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(error + "\n")
            return
        conn = self.detach()
        conn.write(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
                   + (f"X-Stream-Protocol-Version: {protocol}\r\n" if protocol else "").encode()
                   + b"\r\n")

        def send(data: bytes) -> None:
            if not conn.closed():
                conn.write(data)

        def close() -> None:
            self.server.watches.discard(close)
            conn.close()

        session: PortForwardSession | RemoteCommandSession
        if portforward:
            session = PortForwardSession(self._answer, send, close)
        else:
            def status(code: int) -> dict[str, Any]:
                if self._subresource == "attach":
                    return {"metadata": {}, "status": "Success"}
                return exit_status(code, list(self._opts["command"]))
            session = RemoteCommandSession(self._answer, self._opts, protocol or V1, send, close,
                                           status)
        self.server.watches.add(close)  # ended with the watches when the server stops
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read_spdy(conn, session))
        self._task = loop.create_task(session.run())

    async def _read_spdy(self, conn: Any, session: PortForwardSession | RemoteCommandSession
                         ) -> None:
        """Feed what the client sends to the session, until the connection closes."""
        try:
            while True:
                session.feed(await conn.read_bytes(65536, partial=True))
        except tornado.iostream.StreamClosedError:
            session.spdy.gone = True
            session.closed()

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        offered = _PORTFORWARD_PROTOCOLS if self._subresource == "portforward" else _EXEC_PROTOCOLS
        for protocol in subprotocols:
            if protocol in offered:
                self._protocol = protocol
                return protocol
        self._protocol = V1
        return None

    def check_origin(self, origin: str) -> bool:
        return True  # bearer tokens, not cookies, authenticate these requests

    def open(self, *args: str, **kwargs: str) -> None:
        # Ended with the watches when every API server is down or the server stops.
        self.server.watches.add(self._end)
        if self._protocol == SPDY_PORTFORWARD:
            self._spdy = PortForwardSession(self._answer, self._write_binary, lambda: self.close(1000))
            self._task = asyncio.get_running_loop().create_task(self._spdy.run())
        elif self._subresource == "portforward":
            self._task = asyncio.get_running_loop().create_task(self._forward())
        else:
            self._task = asyncio.get_running_loop().create_task(self._stream())

    # ------------------------------------------------------------------ exec and attach

    def _write_binary(self, data: bytes) -> None:
        if self.ws_connection is not None and not self.ws_connection.is_closing():
            self.write_message(data, binary=True)

    def _send(self, channel: int, data: bytes) -> None:
        if self.ws_connection is not None and not self.ws_connection.is_closing():
            self.write_message(bytes([channel]) + data, binary=True)

    async def _stream(self) -> None:
        session: ExecSession = self._answer["session"]
        opts = self._opts
        stdout, stderr = opts["stdout"], opts["stderr"] and not opts["tty"]  # a tty has no stderr
        first = STDOUT if stdout else STDERR if stderr else ERROR
        self._send(first, b"")
        while True:
            code = session.exit_code
            for channel, data in _frames(session):
                if data and (stdout if channel == STDOUT else stderr):
                    self._send(channel, data)
            if code is not None:
                break
            await asyncio.sleep(POLL)
        if self._protocol == V1:
            message = b"" if code == 0 else f"command terminated with exit code {code}".encode()
        elif self._subresource == "attach":
            message = json.dumps({"metadata": {}, "status": "Success"}).encode()
        else:
            message = json.dumps(exit_status(code, list(opts["command"]))).encode()
        if message or self._protocol != V1:
            self._send(ERROR, message)
        self.close(1000)

    def on_message(self, message: str | bytes) -> None:
        data = message.encode() if isinstance(message, str) else message
        if not data:
            return
        if self._spdy is not None:
            self._spdy.feed(data)
            return
        if self._subresource == "portforward":
            self._forward_in(data)
            return
        session: ExecSession = self._answer["session"]
        channel, body = data[0], data[1:]
        if channel == CLOSE and self._protocol == V5:
            if body[:1] == bytes([STDIN]):
                session.close_stdin()
        elif channel == STDIN and self._opts.get("stdin"):
            session.write(body)
        elif channel == RESIZE:
            try:
                size = json.loads(body)
                session.resize(int(size.get("Width", 0)), int(size.get("Height", 0)))
            except (ValueError, TypeError, AttributeError):
                pass  # the kubelet logs a bad TerminalSize and goes on

    # ------------------------------------------------------------------ port-forward

    async def _forward(self) -> None:
        """One connection into the pod per port, for the life of the WebSocket."""
        answer = self._answer
        ports: list[int] = answer["ports"]
        self._ports: dict[int, PortStream | None] = {}
        for i, port in enumerate(ports):
            prefix = port.to_bytes(2, "little")
            self._send(2 * i, prefix)
            self._send(2 * i + 1, prefix)
            stream = answer["forward"](answer["uid"], port)
            if isinstance(stream, str):
                self._send(2 * i + 1, stream.encode())
                self._ports[i] = None
            else:
                self._ports[i] = stream
        while any(s is not None for s in self._ports.values()):
            for i, stream in self._ports.items():
                if stream is None:
                    continue
                data = stream.read()
                if data:
                    self._send(2 * i, data)
                if stream.closed:
                    if stream.error:
                        self._send(2 * i + 1, stream.error.encode())
                    self._ports[i] = None
            await asyncio.sleep(POLL)
        self.close(1000)

    def _forward_in(self, data: bytes) -> None:
        channel = data[0]
        stream = getattr(self, "_ports", {}).get(channel // 2)
        if stream is not None and channel % 2 == 0:
            stream.write(data[1:])

    # ------------------------------------------------------------------ the end

    def _end(self) -> None:
        self.close(1001)  # going away

    def on_close(self) -> None:
        """The client went away: its stdin is closed (the process goes on, as with
        `kubectl exec` interrupted), its forwarded connections closed."""
        self.server.watches.discard(self._end)
        if self._task is not None and not self._task.done():
            self._task.cancel()
        session = self._answer.get("session")
        if session is not None:
            session.close_stdin()
        for stream in getattr(self, "_ports", {}).values():
            if stream is not None:
                stream.close_write()
        if self._spdy is not None:
            self._spdy.closed()
