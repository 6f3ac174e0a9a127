"""The load balancer in front of several API servers (kubeadm's controlPlaneEndpoint: an L4
balancer such as HAProxy or a cloud load balancer before every kube-apiserver on :6443).

API servers are stateless peers over one store: any of them serves any request, each with its
own watch cache and audit log. A client holds one connection (HTTP/2 keeps it open), and the
balancer picks that connection's API server when it is opened, round-robin over the live ones.
When that server dies, the client's open watches break (the server closes them) and its next
request opens a new connection to another live server; the reflectors watch again from their
last resourceVersion, or relist on 410 Expired when the new server's watch cache cannot replay
it. With every API server down, a connect is refused, as with one.

Wiring, like the Cluster: it reaches into the API servers the way a cable does, not through the
API (docs/ARCHITECTURE.md section 6).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api.request import Request, WatchEvent, WatchHandle
from kubelab.apiserver import APIServer
from kubelab.sim import Trace

__all__ = ["Connection", "LoadBalancer"]


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

    # The API protocol on a connection of the balancer's own (c.api, the HTTPS edge).
    def handle(self, request: Request) -> dict[str, Any]:
        return self._default.handle(request)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        return self._default.watch(request, on_event, on_close)

    @property
    def response_latency(self) -> float:
        return self._default.response_latency


class Connection:
    """One client's connection through the balancer: the API protocol, served by the API server
    it is connected to, reconnecting to another when that one is down."""

    def __init__(self, balancer: LoadBalancer, client: str) -> None:
        self.balancer, self.client = balancer, client
        self.backend: APIServer | None = None
        self.reconnects = 0

    @property
    def running(self) -> bool:
        return self.balancer.running

    @property
    def response_latency(self) -> float:
        return self.backend.response_latency if self.backend is not None else 0.0

    def _server(self) -> APIServer:
        if self.backend is not None and self.backend.running:
            return self.backend
        old, backend = self.backend, self.balancer.pick()
        if backend is None:  # Client checks `running` first; a direct caller gets the 503
            return old or self.balancer.backends[0]
        self.backend = backend
        if old is not None:
            self.reconnects += 1
            if self.balancer.trace is not None:
                self.balancer.trace.record("loadbalancer", "reconnect", self.client,
                                           **{"from": old.name, "to": backend.name})
        return backend

    def handle(self, request: Request) -> dict[str, Any]:
        return self._server().handle(request)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        return self._server().watch(request, on_event, on_close)

    def __repr__(self) -> str:
        return f"<Connection {self.client} -> {self.backend.name if self.backend else 'none'}>"
