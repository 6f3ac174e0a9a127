"""The CRI's PortForward: a TCP connection to a port inside a pod's network namespace.

Upstream the kubelet's streaming server (pkg/kubelet/cri/streaming/portforward) hands each
connection the client opens to the runtime, and containerd (internal/cri/server
sandbox_portforward_linux.go) enters the sandbox's network namespace and dials
localhost:<port>. Whatever listens there answers; if nothing does, the error stream says so:
`error forwarding port 80 to pod <sandbox id>, uid : failed to execute portforward in network
namespace "/var/run/netns/cni-...": failed to connect to localhost:80 inside namespace
"<sandbox id>", IPv4: dial tcp4 127.0.0.1:80: connect: connection refused IPv6 dial tcp6
[::1]:80: connect: connection refused ` (kubectl prefixes it with `an error occurred
forwarding 8080 -> 80: `).

Here what listens is the pod's simulated server (the process model's), and a connection is a
byte stream to it (PortConnection: write, read, close_write): whatever protocol that server
speaks works through kubectl port-forward.

- HTTP servers (nginx, `python3 -m http.server`, kubelab-app, a scripted container; through
  the runtime's serve_http): the bytes must be HTTP/1.x requests; each is answered with a
  status line, Date (on the virtual clock), Content-Type, Content-Length and the body; a
  `Connection: close` (or HTTP/1.0) closes the connection after the answer, as a server does.
  Anything that is not HTTP is answered 400 and the connection closed.
- redis-server on 6379 speaks RESP (kubelab/kubelet/process/redis.py): `redis-cli -p 6379
  ping` or `printf 'PING\r\n' | nc localhost 6379` through the forward get `+PONG`, and the
  keys one connection SETs the next one GETs.

Departure: other TCP protocols are not simulated: postgres (and any server the process model
does not list) accepts no connection, as if it did not listen (containerd's refusal).
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from http import HTTPStatus
from typing import TYPE_CHECKING, Protocol

from kubelab.api.meta import epoch
from kubelab.kubelet.process import ProcessContext, pid1, serve_http
from kubelab.kubelet.process.redis import RedisConnection

if TYPE_CHECKING:
    from kubelab.kubelet.runtime import ContainerRuntime

__all__ = ["HttpServer", "PortConnection", "port_forward"]

REDIS_PORT = 6379

_MAX_HEAD = 64 * 1024  # a request head longer than this is refused (nginx: 400 Bad Request)


def _netns(sandbox_id: str) -> str:
    """The CNI network namespace containerd made for the sandbox (a UUID, stable per pod)."""
    return f"/var/run/netns/cni-{uuid.UUID(hashlib.sha256(sandbox_id.encode()).hexdigest()[:32])}"


def refused(sandbox_id: str, port: int) -> str:
    return (f"error forwarding port {port} to pod {sandbox_id}, uid : failed to execute portforward "
            f'in network namespace "{_netns(sandbox_id)}": failed to connect to localhost:{port} inside '
            f'namespace "{sandbox_id}", IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused '
            f"IPv6 dial tcp6 [::1]:{port}: connect: connection refused ")


class Server(Protocol):
    """The server's end of one connection: bytes in, bytes out."""

    closed: bool

    def write(self, data: bytes) -> None: ...

    def read(self) -> bytes: ...

    def close_write(self) -> None: ...


class PortConnection:
    """One forwarded connection: a byte stream to what listens on the port in the pod. error
    holds what the error stream must say (then the connection is closed)."""

    def __init__(self, server: Server) -> None:
        self.server = server

    @property
    def closed(self) -> bool:
        return self.server.closed

    @property
    def error(self) -> str:
        return str(getattr(self.server, "error", ""))

    def write(self, data: bytes) -> None:
        self.server.write(data)

    def read(self) -> bytes:
        return self.server.read()

    def close_write(self) -> None:
        """The client closed its side: the server closes the connection."""
        self.server.close_write()


class HttpServer:
    """An HTTP/1.x server's end of a connection: requests in, answers out."""

    def __init__(self, runtime: ContainerRuntime, sandbox_id: str, ip: str, port: int) -> None:
        self.runtime, self.sandbox_id, self.ip, self.port = runtime, sandbox_id, ip, port
        self.closed, self.error = False, ""
        self._in, self._out = b"", b""

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        self._in += data
        while not self.closed and b"\r\n\r\n" in self._in:
            head, _, rest = self._in.partition(b"\r\n\r\n")
            length = _content_length(head)
            if len(rest) < length:
                return  # the body is still coming
            self._in = rest[length:]
            self._answer(head)
        if len(self._in) > _MAX_HEAD:
            self._respond(400, b"", "HTTP/1.1", close=True)

    def _answer(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            self._respond(400, b"", "HTTP/1.1", close=True)
            return
        method, path, version = parts
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
        answer = self.runtime.serve_http(self.ip, self.port, path, "127.0.0.1",
                                         headers.get("user-agent", "-"))
        if answer.error:  # the server went away since the connection was made
            self.error, self.closed = refused(self.sandbox_id, self.port), True
            return
        close = headers.get("connection", "").lower() == "close" or version == "HTTP/1.0"
        self._respond(answer.status, b"" if method == "HEAD" else answer.body, version, close,
                      len(answer.body))

    def _respond(self, status: int, body: bytes, version: str, close: bool,
                 length: int | None = None) -> None:
        date = epoch() + timedelta(seconds=self.runtime.clock.now)
        kind = "text/html" if body.lstrip().startswith((b"<", b"<!")) else "text/plain"
        head = (f"{version} {status} {HTTPStatus(status).phrase}\r\n"
                f"Date: {date:%a, %d %b %Y %H:%M:%S} GMT\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body) if length is None else length}\r\n"
                f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n")
        self._out += head.encode() + body
        if close:
            self.closed = True

    def read(self) -> bytes:
        data, self._out = self._out, b""
        return data

    def close_write(self) -> None:
        """The client closed its side: the server closes the connection."""
        self.closed = True


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value.strip())
    return 0


def _listener(runtime: ContainerRuntime, pod_uid: str, port: int) -> str | ProcessContext | None:
    """Who accepts connections on port in the pod (the dial alone, so nothing is served or
    logged): "http" (an HTTP server), the redis-server's context, or None (nothing)."""
    from kubelab.kubelet.runtime import RUNNING

    for c in runtime.pod_containers(pod_uid):
        if c.state != RUNNING:
            continue
        if c.spec is None or c.spec.scripted:  # a scripted container answers on every port
            return "http"
        if c.context is None:
            continue
        program = pid1(c.spec.argv)
        if program == "redis-server" and port == REDIS_PORT:
            return c.context
        answer = serve_http(program, c.spec.ports, c.context, port, "/")
        if answer is not None and not answer.error:
            return "http"
    return None


def port_forward(runtime: ContainerRuntime, pod_uid: str, port: int) -> PortConnection | str:
    """Dial localhost:port in the pod's sandbox: a connection, or the runtime's error."""
    sandbox = runtime.sandboxes.get(pod_uid)
    if sandbox is None or not runtime.powered:
        return f'failed to find sandbox "{pod_uid}" in store: not found'
    # Dial first, as containerd does: a server that does not listen refuses at once.
    listener = _listener(runtime, pod_uid, port)
    if listener is None:
        return refused(sandbox.id, port)
    if isinstance(listener, ProcessContext):   # the server's keyspace outlives the connection
        return PortConnection(RedisConnection(listener.state.setdefault("redis", {})))
    return PortConnection(HttpServer(runtime, sandbox.id, sandbox.ip, port))
