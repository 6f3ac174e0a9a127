"""The load balancer in front of several API servers (kubeadm's controlPlaneEndpoint: an L4
balancer such as HAProxy or a cloud load balancer before every kube-apiserver on :6443).

API servers are stateless peers over one store: any of them serves any request, each with its
own watch cache and audit log. A client holds one connection (HTTP/2 keeps it open), and the
balancer picks that connection's API server when it is opened, round-robin over the live ones.
When that server dies, the client's open watches break (the server closes them) and its next
request opens a new connection to another live server; the reflectors watch again from their
last resourceVersion, or relist on 410 Expired when the new server's watch cache cannot replay
it. With every API server down, a connect is refused, as with one: the connection raises
ConnectionRefused, and the client learns nothing else about the servers behind it.

With one API server there is no balancer: a client's DirectConnection goes straight to it.

Wiring, like the Cluster: it reaches into the API servers the way a cable does, not through the
API (docs/ARCHITECTURE.md section 6).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kubelab.api.request import API, ConnectionRefused, Request, WatchEvent, WatchHandle
from kubelab.apiserver import APIServer
from kubelab.sim import Trace

__all__ = ["Connection", "DirectConnection", "Endpoint", "LoadBalancer"]


class Endpoint(API, Protocol):
    """A client's connection as the wiring makes it: the API protocol, and dial(), which raises
    ConnectionRefused when nothing listens (what every request on it does first)."""

    def dial(self, request: Request) -> None: ...


class DirectConnection:
    """One client's connection straight to one API server: refused while that server is down,
    as a TCP connect to a port nobody listens on is."""

    def __init__(self, server: APIServer) -> None:
        self.server = server

    def dial(self, request: Request) -> None:
        if not self.server.running:
            raise ConnectionRefused(request)

    def handle(self, request: Request) -> dict[str, Any]:
        self.dial(request)
        return self.server.handle(request)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        self.dial(request)
        return self.server.watch(request, on_event, on_close)

    def __repr__(self) -> str:
        return f"<DirectConnection -> {self.server.name}>"


class LoadBalancer:
    def __init__(self, backends: list[APIServer], trace: Trace | None = None) -> None:
        if not backends:
            raise ValueError("a load balancer needs at least one API server")
        self.backends, self.trace = backends, trace
        self._next = 0  # round-robin position
        self.connections: list[Connection] = []  # every client connection, in opening order
        self._default = self.connection("loadbalancer")

    @property
    def running(self) -> bool:
        """Whether a connect can succeed: some API server is up."""
        return any(b.running for b in self.backends)

    def pick(self) -> APIServer | None:
        """The next live API server, round-robin; None when all are down."""
        for _ in range(len(self.backends)):
            backend = self.backends[self._next % len(self.backends)]
            self._next += 1
            if backend.running:
                return backend
        return None

    def connection(self, client: str) -> Connection:
        """A new client connection (one per Client), pinned to a server once it connects."""
        conn = Connection(self, client)
        self.connections.append(conn)
        return conn

    def clients_of(self, server: str) -> list[str]:
        """The clients whose connection is now to the API server named `server`."""
        return [c.client for c in self.connections if c.backend is not None and c.backend.name == server]

    # The API protocol on a connection of the balancer's own (c.api, the HTTPS edge). The edge
    # stops listening while every API server is down; until it notices, a request it passes on
    # gets the 503 of a server that is down.
    def handle(self, request: Request) -> dict[str, Any]:
        return self._default.server_or_last().handle(request)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        return self._default.server_or_last().watch(request, on_event, on_close)


class Connection:
    """One client's connection through the balancer: the API protocol, served by the API server
    it is connected to, reconnecting to another when that one is down."""

    def __init__(self, balancer: LoadBalancer, client: str) -> None:
        self.balancer, self.client = balancer, client
        self.backend: APIServer | None = None
        self.reconnects = 0

    def _server(self) -> APIServer | None:
        """The API server this connection reaches: its own while that one is up, else a new
        connection to the next live one; None when every one is down."""
        if self.backend is not None and self.backend.running:
            return self.backend
        old, backend = self.backend, self.balancer.pick()
        if backend is None:
            return None
        self.backend = backend
        if old is not None:
            self.reconnects += 1
            if self.balancer.trace is not None:
                self.balancer.trace.record("loadbalancer", "reconnect", self.client,
                                           **{"from": old.name, "to": backend.name})
        return backend

    def server_or_last(self) -> APIServer:
        """For the edge's own connection: a live server, else the last one (which answers 503)."""
        return self._server() or self.backend or self.balancer.backends[0]

    def dial(self, request: Request) -> None:
        if not self.balancer.running:
            raise ConnectionRefused(request)

    def handle(self, request: Request) -> dict[str, Any]:
        server = self._server()
        if server is None:
            raise ConnectionRefused(request)
        return server.handle(request)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        server = self._server()
        if server is None:
            raise ConnectionRefused(request)
        return server.watch(request, on_event, on_close)

    def __repr__(self) -> str:
        return f"<Connection {self.client} -> {self.backend.name if self.backend else 'none'}>"
