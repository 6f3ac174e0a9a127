"""pods/portforward: a TCP connection from the client into the pod's network namespace.

Upstream (pkg/registry/core/pod/rest/subresources.go PortForwardREST; pod/strategy.go
PortForwardLocation) it is a rest.Connecter: after authentication and authorization (verb
`create` on pods/portforward, also for a WebSocket's GET), the API server finds the pod's
node (`pod web does not have a host assigned`) and proxies the upgraded connection to that
node's kubelet (:10250/portForward/<ns>/<pod>), which asks the container runtime (the CRI's
PortForward) to connect to the port inside the pod's sandbox. Each connection the client
opens then carries its bytes, and an error stream says why one could not be made.

Here the answer carries the node kubelet's port_forward (`{"kind": "Connection", "forward":
...}`); the HTTPS edge (kubelab/serve/streams.py) calls it once per connection the client
opens, with the port the client asks for (the query's `ports` for a WebSocket, each SPDY
stream's `port` header for kubectl).

Departure: a function in the answer, not an HTTP proxy to the kubelet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from kubelab.api import Object
from kubelab.apiserver.endpoints.subresources import dial_kubelet

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext
    from kubelab.apiserver.registry.store import Registry

__all__ = ["PortForwarder", "PortStream", "port_forward"]


class PortStream(Protocol):
    """One TCP connection into the pod's network namespace (the CRI's PortForward): bytes
    written in, bytes read out; closed once the pod's side has closed it, error what the
    error stream must then say ("" if nothing went wrong)."""

    @property
    def closed(self) -> bool: ...

    @property
    def error(self) -> str: ...

    def write(self, data: bytes) -> None: ...

    def close_write(self) -> None: ...

    def read(self) -> bytes: ...


class PortForwarder(Protocol):
    """What the API server reaches on a node's kubelet for pods/portforward: a connection to
    the port in the pod, or the runtime's error (nothing listens there)."""

    def port_forward(self, pod_uid: str, port: int) -> PortStream | str: ...


def port_forward(registry: Registry, ctx: RequestContext) -> Object:
    """POST (or a WebSocket's GET) pods/<name>/portforward?ports=80,443."""
    r = ctx.request
    pod = registry.get(ctx)
    kubelet = dial_kubelet(registry.server, pod, r.name)
    uid = str(pod["metadata"].get("uid", ""))
    forwarder: PortForwarder = kubelet  # type: ignore[assignment]
    return {"kind": "Connection", "ports": list(r.options.get("ports") or []), "uid": uid,
            "forward": forwarder.port_forward}
