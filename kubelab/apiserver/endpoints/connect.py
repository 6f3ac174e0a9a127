"""The connect subresources of a pod: pods/exec, pods/attach and pods/portforward.

Upstream (pkg/registry/core/pod/rest/subresources.go: ExecREST, AttachREST, PortForwardREST;
pkg/registry/core/pod/strategy.go: ExecLocation, AttachLocation, PortForwardLocation and their
streamLocation) these are rest.Connecters: after authentication and authorization (verb
`create` on pods/exec, also for a WebSocket's GET, as AuthorizePodWebsocketUpgradeCreatePermission
asks), the API server finds the pod, checks the container, finds the pod's node and proxies
the upgraded connection to that node's kubelet (:10250/exec/<ns>/<pod>/<container>), which asks
the container runtime over the CRI and streams the process's stdin, stdout and stderr.

kubelab does the same up to the kubelet: the answer carries the open session the node's kubelet
connection returned (`{"kind": "Connection", "session": ...}`), and the HTTPS edge
(kubelab/serve/streams.py) carries its bytes over the client's WebSocket. The errors are
upstream's: no container named, an unknown container, a pod with no node, an unreachable
kubelet, a container that is not running (the kubelet's `container not found ("web")`).

Departure: the session is a Python object in the answer, not an HTTP proxy to the kubelet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kubelab.api import Object
from kubelab.api.errors import ApiError, bad_request

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext
    from kubelab.apiserver.registry.store import Registry

__all__ = ["CONNECT_SUBRESOURCES", "ContainerStreams", "ExecSession", "PortStream", "connect"]

CONNECT_SUBRESOURCES = ("exec", "attach", "portforward")


class ExecSession(Protocol):
    """A process in a container, as the CRI's Exec and Attach stream it: stdin written in,
    stdout and stderr read out as they come, the terminal resized; exit_code is None while it
    runs."""

    @property
    def exit_code(self) -> int | None: ...

    def write(self, data: bytes) -> None: ...

    def close_stdin(self) -> None: ...

    def read(self) -> tuple[bytes, bytes]: ...

    def resize(self, width: int, height: int) -> None: ...


class PortStream(Protocol):
    """One TCP connection into the pod's network namespace (the CRI's PortForward): bytes
    written in, bytes read out; closed once the pod's side has closed it."""

    @property
    def closed(self) -> bool: ...

    def write(self, data: bytes) -> None: ...

    def close_write(self) -> None: ...

    def read(self) -> bytes: ...


class ContainerStreams(Protocol):
    """What the API server reaches on a node's kubelet for the connect subresources."""

    def exec(self, pod_uid: str, container: str, command: list[str], stdin: bool,
             tty: bool) -> ExecSession | None: ...

    def attach(self, pod_uid: str, container: str, stdin: bool, tty: bool) -> ExecSession | None: ...

    def port_forward(self, pod_uid: str, port: int) -> PortStream | str: ...


def _container_names(containers: Any) -> list[str]:
    return [str(c.get("name")) for c in containers or ()]


def _stream_container(pod: Object, name: str, container: str) -> str:
    """streamLocation's choice of container: the only one, or the one named (app, init or
    ephemeral: podHasContainerWithName visits them all)."""
    spec = pod.get("spec") or {}
    names = _container_names(spec.get("containers"))
    if not container:
        if len(names) == 1:
            return names[0]
        if not names:
            raise bad_request(f"a container name must be specified for pod {name}")
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        init = _container_names(spec.get("initContainers"))
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise bad_request(message)
    every = names + _container_names(spec.get("initContainers")) + \
        _container_names(spec.get("ephemeralContainers"))
    if container not in every:
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container


def _options(ctx: RequestContext) -> dict[str, Any]:
    """remotecommand's NewOptions (the kubelet's): tty takes stderr; at least one stream."""
    opts = ctx.request.options
    tty = bool(opts.get("tty"))
    stdin, stdout = bool(opts.get("stdin")), bool(opts.get("stdout"))
    stderr = bool(opts.get("stderr")) and not tty
    if not (stdin or stdout or stderr):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    return {"stdin": stdin, "stdout": stdout, "stderr": stderr, "tty": tty}


def connect(registry: Registry, ctx: RequestContext) -> Object:
    """POST (or a WebSocket's GET) pods/<name>/exec|attach|portforward, options in
    request.options: the open session, or the error the API server or the kubelet answers."""
    r, server = ctx.request, registry.server
    pod = registry.get(ctx)
    sub = r.subresource
    container = "" if sub == "portforward" else \
        _stream_container(pod, r.name, str(r.options.get("container") or ""))
    node = (pod.get("spec") or {}).get("nodeName", "")
    if not node:
        raise bad_request(f"pod {r.name} does not have a host assigned")
    connect_to = server.kubelet_connection
    kubelet = connect_to(node) if connect_to is not None else None
    path = f"/{sub}/{r.namespace}/{r.name}" + (f"/{container}" if container else "")
    if kubelet is None or not hasattr(kubelet, sub if sub != "portforward" else "port_forward"):
        raise ApiError(500, "", f'error dialing backend: dial tcp {node}:10250: connect: connection refused'
                       if kubelet is None else f"unable to upgrade connection: {path} is not served "
                       "by this kubelet")
    streams: ContainerStreams = kubelet  # type: ignore[assignment]
    uid = str(pod["metadata"].get("uid", ""))
    if sub == "portforward":
        # The ports are the query's (WebSocket) or each stream's headers (SPDY): none is fine here.
        return {"kind": "Connection", "ports": list(r.options.get("ports") or []), "forward": streams.port_forward, "uid": uid,
                "pod": r.name, "namespace": r.namespace}
    opts = _options(ctx)
    if sub == "exec":
        command = [str(c) for c in r.options.get("command") or ()]
        if not command:
            raise bad_request("you must specify at least one command for the container")
        session = streams.exec(uid, container, command, opts["stdin"], opts["tty"])
    else:
        session = streams.attach(uid, container, opts["stdin"], opts["tty"])
    if session is None:
        raise ApiError(500, "InternalError",
                       f'unable to upgrade connection: container not found ("{container}")')
    return {"kind": "Connection", "session": session, "container": container, "command":
            r.options.get("command") or [], **opts}
