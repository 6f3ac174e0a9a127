"""core/v1 ComponentStatus: deprecated since v1.19, still served (`kubectl get cs`).

pkg/registry/core/componentstatus/rest.go: nothing is stored. A GET or LIST probes, from the API
server's own node, the scheduler (127.0.0.1:10259/healthz), the controller manager
(127.0.0.1:10257/healthz) and each etcd server it was given (kubeadm gives one: etcd-0), and
answers one Healthy condition per component. Upstream probes in goroutines, so its list has no
order; here it is sorted by name. A name it does not probe is a 500, "Component not found: x",
as upstream's Get returns a plain error. Every request carries the deprecation warning
(endpoints/deprecation: `Warning: v1 ComponentStatus is deprecated in v1.19+`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.apiserver.healthz import etcd_error

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext

__all__ = ["ComponentProbe", "get_component_status", "list_component_statuses"]

# What a probe of "scheduler" or "controller-manager" answers: "" when /healthz said ok, else
# the error a dial would give. The wiring (kubelab/cluster) sets APIServer.component_probe.
ComponentProbe = Callable[[str], str]
_PORTS = {"scheduler": 10259, "controller-manager": 10257}


def _status(name: str, error: str) -> Object:
    # ComponentCondition's message and error are omitempty: one or the other is there.
    condition = {"type": "Healthy", "status": "False" if error else "True",
                 **({"error": error} if error else {"message": "ok"})}
    return {"kind": "ComponentStatus", "apiVersion": "v1",
            "metadata": {"name": name, "creationTimestamp": None}, "conditions": [condition]}


def _probe(ctx: RequestContext, name: str) -> Object:
    server = ctx.server
    if name == "etcd-0":
        reason = etcd_error(server)
        return _status(name, f"etcd health check failed: {reason}" if reason else "")
    probe = server.component_probe
    port = _PORTS[name]
    error = probe(name) if probe is not None else "connection refused"
    if error:
        error = f'Get "https://127.0.0.1:{port}/healthz": dial tcp 127.0.0.1:{port}: connect: {error}'
    return _status(name, error)


def list_component_statuses(ctx: RequestContext) -> Object:
    items = [_probe(ctx, name) for name in sorted([*_PORTS, "etcd-0"])]
    return {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items}


def get_component_status(ctx: RequestContext) -> Object:
    name = ctx.request.name
    if name not in _PORTS and name != "etcd-0":
        raise ApiError(500, "", f"Component not found: {name}")  # a plain error: reason Unknown
    return _probe(ctx, name)
