"""Subresources with their own rules: pods/binding and <workload>/scale.

- binding (pkg/registry/core/pod/storage/storage.go, BindingREST): the scheduler's only write.
  It sets spec.nodeName once, and the PodScheduled condition; a second binding is refused:
  `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node
  "node-1"`.
- scale (pkg/registry/apps/deployment/storage/storage.go, ScaleREST): an autoscaling/v1 Scale
  view of spec.replicas, so `kubectl scale` (and an autoscaler) need not know the kind.
status and namespaces/finalize are plain updates of one part of the object (registry.update).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api.errors import (
    ParseError,
    bad_request,
    conflict,
    field_not_supported,
    field_required,
    invalid,
)
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.admission import CREATE
from kubelab.apiserver.codec import decode
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.decode import decode_body
from kubelab.apiserver.schema import SCHEMAS
from kubelab.apiserver.validation import validate_scale

if TYPE_CHECKING:
    from kubelab.apiserver.registry import Registry

__all__ = ["bind", "get_scale", "update_scale"]

Object = dict[str, Any]
BINDING = ResourceInfo("bindings", "Binding")
SCALE = ResourceInfo("scale", "Scale", group="autoscaling")


def check_name(obj: Object, name: str) -> None:
    """The name in the body must be the name in the URL (handlers/rest.go)."""
    meta = obj.get("metadata") or {}
    given = meta.get("name") or ""
    if given and given != name:
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


def scale_of(obj: Object) -> Object:
    meta, spec = obj["metadata"], obj.get("spec") or {}
    try:
        selector = str(selector_from_label_selector(spec.get("selector")))
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
    return scale_of(registry.get(ctx))


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
    obj.setdefault("spec", {})["replicas"] = (scale.get("spec") or {}).get("replicas", 0)
    obj["metadata"]["resourceVersion"] = meta.get("resourceVersion") or ""
    return scale_of(registry.update(ctx, obj, kv))
