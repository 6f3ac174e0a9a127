"""Subresources with their own rules: pods/binding, <workload>/scale and pods/log.

- binding (pkg/registry/core/pod/storage/storage.go, BindingREST): the scheduler's only write.
  It sets spec.nodeName once, and the PodScheduled condition; a second binding is refused:
  `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node
  "node-1"`.
- scale (pkg/registry/apps/deployment/storage/storage.go, ScaleREST): an autoscaling/v1 Scale
  view of spec.replicas, so `kubectl scale` (and an autoscaler) need not know the kind.
- log (pkg/registry/core/pod/rest/log.go, LogREST; pod/strategy.go, LogLocation; options
  previous, tailLines, timestamps as kuberuntime_logs.go prints them): the API
  server finds the container and the pod's node, then reads the logs from that node's kubelet
  (its :10250/containerLogs endpoint; here the node's kubelet_connection, given by the wiring).
  The body is text/plain, not an object: kubelab carries it as {"contentType", "body"}.
- exec and attach (pod/strategy.go ExecLocation, AttachLocation, streamLocation; the kubelet's
  server.go getExec/getAttach and kubelet_pods.go GetExec/GetAttach): the API server picks the
  container as streamLocation does (the only container, else `a container name must be
  specified for pod web, choose one of: [a b]`; `container x is not valid for pod web`), needs
  the pod's node (`pod web does not have a host assigned`), then asks that node's kubelet for
  a session; the kubelet refuses what it does not run: `pod does not exist` (404) and
  `container not found ("app")` for exec, `container app not found in pod web_default` for
  attach. Upstream the client sees those through the failed upgrade, hence the prefix
  `unable to upgrade connection: `, kept here. The answer carries the ExecSession itself
  ({"contentType", "session"}): the HTTP edge upgrades the connection and pumps it,
  in-simulation kubectl drives it directly.
status and namespaces/finalize are plain updates of one part of the object (registry.update).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kubelab.api import Object
from kubelab.api.errors import (
    ApiError,
    ParseError,
    bad_request,
    conflict,
    field_not_supported,
    field_required,
    invalid,
)
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import epoch
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.admission.chain import CREATE
from kubelab.apiserver.apis.schema import SCHEMAS
from kubelab.apiserver.apis.validation import validate_scale
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.endpoints.decode import decode_body
from kubelab.apiserver.storage.codec import decode

if TYPE_CHECKING:
    from kubelab.apiserver.apiextensions.handler import CustomResourceSchema
    from kubelab.apiserver.registry.store import Registry
    from kubelab.apiserver.server import APIServer

__all__ = [
    "ContainerLogs",
    "ExecSession",
    "KubeletConnection",
    "attach",
    "bind",
    "dial_kubelet",
    "exec_pod",
    "get_log",
    "get_scale",
    "update_scale",
]

BINDING = ResourceInfo("bindings", "Binding")
SCALE = ResourceInfo("scale", "Scale", group="autoscaling")


def check_name(obj: Object, name: str, *, required: bool = False) -> None:
    """The name in the body must be the name in the URL (handlers/rest.go checkName).

    An update or a patch must keep it (required): upstream refuses a body without a name there,
    so a patch that removes metadata cannot store a nameless object. A binding or a scale may
    leave it out; the URL names the object."""
    meta = obj.get("metadata") or {}
    given = meta.get("name") or ""
    if (given or required) and given != name:
        raise bad_request(f"the name of the object ({given}) does not match the name on the URL "
                          f"({name})")
    meta["name"] = name
    obj["metadata"] = meta


def bind(registry: Registry, ctx: RequestContext, body: Any) -> Object:
    r, server = ctx.request, registry.server
    ctx.enter("decode")
    binding = decode_body(body, BINDING, SCHEMAS["Binding"])
    check_name(binding, r.name)
    attrs = ctx.attributes(CREATE, binding, None)
    ctx.enter("mutating-admission")
    server.admission.mutate(attrs)
    ctx.enter("validation")
    target = binding.get("target") or {}
    if not target.get("name"):
        raise invalid("Binding", r.name, [field_required("target.name")])
    if target.get("kind") not in (None, "", "Node"):
        raise invalid("Binding", r.name, [field_not_supported("target.kind", target["kind"],
                                                              ["Node", "<empty>"])])
    ctx.enter("validating-admission")
    server.admission.validate(attrs)
    ctx.enter("storage")
    kv = registry.read(ctx, r.namespace, r.name)
    pod = decode(kv.value, kv.mod_revision)
    meta, spec = pod["metadata"], pod.setdefault("spec", {})
    uid = (binding.get("metadata") or {}).get("uid")
    if uid and uid != meta.get("uid"):
        raise conflict("pods", r.name, f"StorageError: invalid object, Code: 4, Key: {kv.key}, "
                       f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in "
                       f"precondition: {uid}, UID in object meta: {meta.get('uid')}")
    if meta.get("deletionTimestamp"):
        raise conflict("pods/binding", r.name, f"pod {r.name} is being deleted, cannot be "
                       "assigned to a host")
    if spec.get("nodeName"):
        raise conflict("pods/binding", r.name, f'pod {r.name} is already assigned to node '
                       f'"{spec["nodeName"]}"')
    spec["nodeName"] = target["name"]
    annotations = (binding.get("metadata") or {}).get("annotations")
    if annotations:
        meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
    status = pod.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": server.timestamp()})
    status["conditions"] = conditions
    registry.put(ctx, kv, pod)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "code": 201}


def scale_of(obj: Object, custom: CustomResourceSchema | None = None) -> Object:
    if custom is not None and custom.scale is not None:  # a custom resource's paths
        return custom.scale_of(obj)
    meta, spec = obj["metadata"], obj.get("spec") or {}
    raw = spec.get("selector")
    if obj.get("kind") == "ReplicationController":  # --- i31-sts --- a plain map of labels
        raw = {"matchLabels": raw} if isinstance(raw, dict) else None
    try:
        selector = str(selector_from_label_selector(raw))
    except ParseError:
        selector = ""
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                          "creationTimestamp") if k in meta},
        "spec": {"replicas": spec.get("replicas", 0)},
        "status": {"replicas": (obj.get("status") or {}).get("replicas", 0),
                   "selector": selector},
    }


def get_scale(registry: Registry, ctx: RequestContext) -> Object:
    return scale_of(registry.get(ctx), ctx.served.custom)


def update_scale(registry: Registry, ctx: RequestContext, body: Any) -> Object:
    r, info = ctx.request, ctx.served.info
    ctx.enter("decode")
    scale = decode_body(body, SCALE, SCHEMAS["Scale"])
    check_name(scale, r.name)
    errs = validate_scale(scale)
    if errs:
        raise invalid("Scale", r.name, errs, "autoscaling")
    kv = registry.read(ctx, r.namespace, r.name)
    obj = decode(kv.value, kv.mod_revision)
    meta = scale["metadata"]
    uid = meta.get("uid")
    if uid and uid != obj["metadata"].get("uid"):
        raise conflict(f"{info.resource}/scale", r.name, f"Precondition failed: UID in "
                       f"precondition: {uid}, UID in object meta: {obj['metadata'].get('uid')}",
                       info.group)
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    custom = ctx.served.custom
    if custom is not None and custom.scale is not None:
        custom.set_replicas(obj, replicas)
    else:
        obj.setdefault("spec", {})["replicas"] = replicas
    obj["metadata"]["resourceVersion"] = meta.get("resourceVersion") or ""
    return scale_of(registry.update(ctx, obj, kv), custom)


class ContainerLogs(Protocol):
    """What the API server reaches on a node's kubelet for pods/log: the lines (with the time
    each was written) of the pod's current or previous container of that name, None if the
    node has no such container (the CRI's ReadLogs, served by the kubelet)."""

    def read_logs(self, pod_uid: str, name: str, previous: bool = False
                  ) -> list[tuple[float, str]] | None: ...


def get_log(registry: Registry, ctx: RequestContext) -> Object:
    """GET pods/<name>/log?container=&previous=&tailLines= (options in request.options)."""
    r, server = ctx.request, registry.server
    pod = registry.get(ctx)
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    names = [c.get("name") for c in spec.get("containers") or ()]
    init = [c.get("name") for c in spec.get("initContainers") or ()]
    container = str(r.options.get("container") or "")
    if not container:
        if len(names) != 1 or init:
            choose = f"choose one of: [{' '.join(names)}]"
            if init:
                choose += f" or one of the init containers: [{' '.join(init)}]"
            raise bad_request(f"a container name must be specified for pod {r.name}, {choose}")
        container = names[0]
    if container not in names and container not in init:
        raise bad_request(f"container {container} is not valid for pod {r.name}")
    previous = _check_log_status(r.name, container, bool(r.options.get("previous")), status)
    node = spec.get("nodeName", "")
    connect = server.kubelet_connection
    kubelet = connect(node) if connect is not None else None
    path = f"/containerLogs/{r.namespace}/{r.name}/{container}"
    if kubelet is None:
        raise ApiError(500, "", f'Get "https://{node}:10250{path}": dial tcp {node}:10250: connect: '
                       "connection refused")
    lines = kubelet.read_logs(pod["metadata"].get("uid", ""), container, previous)
    if lines is None:
        raise bad_request(f'container "{container}" in pod "{r.name}" is not available')
    tail = r.options.get("tailLines")
    if isinstance(tail, int) and tail >= 0:
        lines = lines[len(lines) - tail:] if tail else []
    if r.options.get("timestamps"):  # the kubelet's RFC3339NanoFixed, before each line
        return {"contentType": "text/plain",
                "body": "".join(f"{rfc3339_nano_fixed(t)} {text}\n" for t, text in lines)}
    return {"contentType": "text/plain", "body": "".join(f"{text}\n" for _, text in lines)}


def rfc3339_nano_fixed(seconds: float) -> str:
    """2025-01-01T00:00:05.120000000Z: always nine digits of fraction, as the kubelet prints."""
    t = epoch() + timedelta(seconds=seconds)
    return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond * 1000:09d}Z"


def _check_log_status(pod: str, container: str, previous: bool, status: Object) -> bool:
    """validateContainerLogStatus (pkg/kubelet/kubelet_pods.go), in the kubelet's words.
    Returns whether the container before the latest one is meant: a container waiting to
    restart (CrashLoopBackOff) shows its last run, which is still the latest."""
    statuses = [*(status.get("containerStatuses") or ()), *(status.get("initContainerStatuses") or ())]
    cs = next((s for s in statuses if s.get("name") == container), None)
    state = (cs or {}).get("state") or {}
    last = ((cs or {}).get("lastState") or {}).get("terminated")
    if previous:
        if not last:
            raise bad_request(f'previous terminated container "{container}" in pod "{pod}" not found')
        return "waiting" not in state
    if cs is None or ("waiting" in state and not last):
        reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
        reason = {"ErrImagePull": "image can't be pulled",
                  "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
        raise bad_request(f'container "{container}" in pod "{pod}" is waiting to start: {reason}')
    return False


@runtime_checkable
class ExecSession(Protocol):
    """One stream into a container (pods/exec, pods/attach): the kubelet's streaming session.

    It runs on the cluster's virtual clock: output appears as the simulated process makes
    it (a `sleep 5` inside finishes after 5 simulated seconds; serve mode runs the clock in
    real time)."""

    def write(self, data: bytes) -> None:
        """Stdin (with a tty the terminal echoes it, and a shell runs it line by line)."""

    def close_stdin(self) -> None:
        """End of input (Ctrl-D; the stdin stream closed)."""

    def read(self) -> tuple[bytes, bytes]:
        """(stdout, stderr) produced since the last read; with a tty both are on stdout."""

    def resize(self, width: int, height: int) -> None:
        """The terminal's new size (the resize channel)."""

    @property
    def exit_code(self) -> int | None:
        """None while the process runs; its exit code once it ended."""


class KubeletConnection(ContainerLogs, Protocol):
    """What the API server reaches on a node's kubelet (:10250): logs, exec and attach."""

    def exec(self, pod_uid: str, container: str, command: list[str], stdin: bool, tty: bool
             ) -> ExecSession | None:
        """Run command in the pod's running container; None: no such running container."""

    def attach(self, pod_uid: str, container: str, stdin: bool, tty: bool) -> ExecSession | None:
        """Join the container's main process; None: no such running container."""

    def has_pod(self, pod_uid: str) -> bool:
        """Does the kubelet run this pod (GetPodByName)?"""


def _stream_target(registry: Registry, ctx: RequestContext) -> tuple[Object, str, KubeletConnection]:
    """streamLocation: the pod, the container, and the kubelet of its node."""
    r, server = ctx.request, registry.server
    pod = registry.get(ctx)
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or ()]
    init = [str(c.get("name")) for c in spec.get("initContainers") or ()]
    ephemeral = [str(c.get("name")) for c in spec.get("ephemeralContainers") or ()]
    container = str(r.options.get("container") or "")
    if not container:
        if len(names) != 1:
            if not names:
                raise bad_request(f"a container name must be specified for pod {r.name}")
            choose = f"choose one of: [{' '.join(names)}]"
            if init:
                choose += f" or one of the init containers: [{' '.join(init)}]"
            raise bad_request(f"a container name must be specified for pod {r.name}, {choose}")
        container = names[0]
    elif container not in names + init + ephemeral:
        raise bad_request(f"container {container} is not valid for pod {r.name}")
    return pod, container, dial_kubelet(server, pod, r.name)


def dial_kubelet(server: APIServer, pod: Object, name: str) -> KubeletConnection:
    """The pod's node's kubelet, as the API server dials it for a stream (exec, attach,
    port-forward), or the error each failed step gives."""
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node:
        raise bad_request(f"pod {name} does not have a host assigned")
    connect = server.kubelet_connection
    kubelet: KubeletConnection | None = connect(node) if connect is not None else None
    if kubelet is None:
        raise ApiError(500, "", f"error dialing backend: dial tcp {node}:10250: connect: "
                       "connection refused")
    if not kubelet.has_pod(str(pod["metadata"].get("uid", ""))):
        raise ApiError(404, "NotFound", "unable to upgrade connection: pod does not exist")
    return kubelet


def _stream_options(r: Any) -> tuple[bool, bool]:
    """remotecommand's NewOptions: at least one stream, and a tty merges stderr into stdout."""
    options = r.options
    stdin, tty = bool(options.get("stdin")), bool(options.get("tty"))
    if not (stdin or options.get("stdout", True) or options.get("stderr", True)):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    return stdin, tty


def exec_pod(registry: Registry, ctx: RequestContext) -> Object:
    """POST (or GET, a WebSocket) pods/<name>/exec?command=..&container=&stdin=&tty=."""
    r = ctx.request
    command = [str(w) for w in r.options.get("command") or ()]
    if not command:
        raise bad_request("you must specify at least one command for the container")
    stdin, tty = _stream_options(r)
    pod, container, kubelet = _stream_target(registry, ctx)
    session = kubelet.exec(str(pod["metadata"].get("uid", "")), container, command, stdin, tty)
    if session is None:
        raise ApiError(500, "", f'unable to upgrade connection: container not found ("{container}")')
    return {"contentType": "application/vnd.kubernetes.stream", "session": session}


def attach(registry: Registry, ctx: RequestContext) -> Object:
    """POST (or GET, a WebSocket) pods/<name>/attach?container=&stdin=&tty=."""
    stdin, tty = _stream_options(ctx.request)
    pod, container, kubelet = _stream_target(registry, ctx)
    meta = pod["metadata"]
    session = kubelet.attach(str(meta.get("uid", "")), container, stdin, tty)
    if session is None:
        raise ApiError(500, "", f"unable to upgrade connection: container {container} not found "
                       f"in pod {meta.get('name')}_{meta.get('namespace', 'default')}")
    return {"contentType": "application/vnd.kubernetes.stream", "session": session}
