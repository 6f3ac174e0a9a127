"""Subresources with their own rules: pods/binding, <workload>/scale and pods/log.

- binding (pkg/registry/core/pod/storage/storage.go, BindingREST): the scheduler's only write.
  It sets spec.nodeName once, and the PodScheduled condition; a second binding is refused:
  `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node
  "node-1"`.
- scale (pkg/registry/apps/deployment/storage/storage.go, ScaleREST): an autoscaling/v1 Scale
  view of spec.replicas, so `kubectl scale` (and an autoscaler) need not know the kind.
- log (pkg/registry/core/pod/rest/log.go, LogREST; pod/strategy.go, LogLocation): the API
  server finds the container and the pod's node, then reads the logs from that node's kubelet
  (its :10250/containerLogs endpoint; here the node's kubelet_connection, given by the wiring).
  The body is text/plain, not an object: kubelab carries it as {"contentType", "body"}.
status and namespaces/finalize are plain updates of one part of the object (registry.update).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

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

__all__ = ["ContainerLogs", "bind", "get_log", "get_scale", "update_scale"]

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
    return {"contentType": "text/plain", "body": "".join(f"{text}\n" for _, text in lines)}


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
