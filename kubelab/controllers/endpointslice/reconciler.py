"""The EndpointSlice reconciler: from a Service and its pods, the slices to create, update and
delete (kubernetes/endpointslice reconciler.go: Reconcile, reconcileByAddressType,
reconcileByPortMapping, finalize).

It keeps churn low, as upstream does:
1. each existing slice keeps the endpoints still wanted (updated in place when their
   conditions changed) and drops the others; a slice left empty is deleted;
2. new endpoints first fill the slices that are being updated anyway, fullest first;
3. what remains goes, when it is less than a slice's worth, into the unchanged slice that
   ends up closest to full; otherwise into new slices of at most max_endpoints;
4. a slice about to be deleted is recycled for one about to be created (an update, not a
   delete and a create);
5. a Service with no endpoints at all keeps one empty placeholder slice.

Upstream pops endpoints from a Go map (any order); kubelab takes them in pod-name order, so a
seed gives one result. The plan is a pure function of its inputs: the controller applies it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kubelab.api import Object
from kubelab.controllers.endpointslice.utils import (
    MAX_ENDPOINTS_PER_SLICE,
    endpoint_key,
    get_endpoint_ports,
    new_endpoint_slice,
    owned_by,
    pod_to_endpoint,
    port_map_key,
    service_slice_labels,
    should_pod_be_in_endpoints,
)

__all__ = ["Plan", "reconcile"]


@dataclass
class Plan:
    """What one sync writes: new slices have no name yet (generateName)."""

    create: list[Object] = field(default_factory=list)
    update: list[Object] = field(default_factory=list)
    delete: list[Object] = field(default_factory=list)

    @property
    def writes(self) -> int:
        return len(self.create) + len(self.update) + len(self.delete)


def reconcile(service: Object, pods: list[Object], existing: list[Object],
              max_endpoints: int = MAX_ENDPOINTS_PER_SLICE) -> Plan:
    """Reconcile for the IPv4 address type (kubelab's cluster is single-stack)."""
    plan = Plan()
    address_type = "IPv4"
    slices: list[Object] = []
    for slice_ in existing:
        (slices if slice_.get("addressType") == address_type else plan.delete).append(slice_)
    existing_by_ports: dict[str, list[Object]] = {}
    for slice_ in slices:
        existing_by_ports.setdefault(port_map_key(slice_.get("ports") or []), []).append(slice_)
    desired_by_ports: dict[str, dict[tuple[object, ...], Object]] = {}
    ports_of: dict[str, list[Object]] = {}
    for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        if not should_pod_be_in_endpoints(pod):
            continue
        ports = get_endpoint_ports(service, pod)
        key = port_map_key(ports)
        ports_of[key] = ports
        endpoint = pod_to_endpoint(pod, service)
        desired_by_ports.setdefault(key, {})[endpoint_key(endpoint)] = endpoint
    for key, desired in desired_by_ports.items():
        part = reconcile_by_port_mapping(service, existing_by_ports.get(key, []), desired,
                                         ports_of[key], max_endpoints)
        plan.create += part.create
        plan.update += part.update
        plan.delete += part.delete
    for key, stale in existing_by_ports.items():
        if key not in desired_by_ports:
            plan.delete += stale
    if len(slices) == len([s for s in plan.delete if s in slices]) and not plan.create:
        placeholder = new_endpoint_slice(service, [], address_type)
        kept = [s for s in plan.delete if s in slices and _is_placeholder(s, placeholder)]
        if len(kept) == 1 and len(slices) == 1:
            plan.delete.remove(kept[0])  # the placeholder is already there: keep it
        else:
            plan.create.append(placeholder)
    return finalize(service, plan)


def _is_placeholder(slice_: Object, placeholder: Object) -> bool:
    return not slice_.get("endpoints") and not slice_.get("ports") and \
        slice_["metadata"].get("labels") == placeholder["metadata"]["labels"]


def reconcile_by_port_mapping(service: Object, existing: list[Object],
                              desired: dict[tuple[object, ...], Object], ports: list[Object],
                              max_endpoints: int) -> Plan:
    plan = Plan()
    desired = dict(desired)
    labels = service_slice_labels(service)
    to_update: list[Object] = []
    unchanged: list[Object] = []
    # 1. keep what is still wanted, update what changed, drop the rest
    for slice_ in existing:
        kept, changed = [], False
        for endpoint in slice_.get("endpoints") or []:
            wanted = desired.pop(endpoint_key(endpoint), None)
            if wanted is None:
                changed = True
                continue
            changed = changed or wanted != endpoint
            kept.append(wanted)
        if changed and not kept:
            plan.delete.append(slice_)
        elif changed or (slice_["metadata"].get("labels") or {}) != labels:
            new = copy.deepcopy(slice_)
            new["endpoints"], new["metadata"]["labels"] = kept, labels
            to_update.append(new)
        else:
            unchanged.append(slice_)
    # 2. fill the slices being updated anyway, fullest first
    queue = list(desired.values())
    for slice_ in sorted(to_update, key=lambda s: -len(s["endpoints"])):
        while queue and len(slice_["endpoints"]) < max_endpoints:
            slice_["endpoints"].append(queue.pop(0))
    # 3. the rest: into the unchanged slice closest to full, or into new slices
    while queue:
        target = None
        if len(queue) < max_endpoints and unchanged:
            target = _slice_to_fill(unchanged, len(queue), max_endpoints)
        if target is None:
            target = new_endpoint_slice(service, ports)
            plan.create.append(target)
        else:
            unchanged.remove(target)
            target = copy.deepcopy(target)
            to_update.append(target)
        while queue and len(target["endpoints"]) < max_endpoints:
            target["endpoints"].append(queue.pop(0))
    plan.update = to_update
    return plan


def _slice_to_fill(slices: list[Object], count: int, max_endpoints: int) -> Object | None:
    """getSliceToFill: the slice that will be closest to full with count more endpoints."""
    fitting = [s for s in slices if len(s.get("endpoints") or []) + count <= max_endpoints]
    return max(fitting, key=lambda s: len(s.get("endpoints") or []), default=None)


def finalize(service: Object, plan: Plan) -> Plan:
    """finalize: recycle a slice to delete as one to create (same address type, same owner)."""
    i = 0
    while i < len(plan.delete) and plan.create:
        old = plan.delete[i]
        new = plan.create[-1]
        if old.get("addressType") == new.get("addressType") and owned_by(old, service):
            plan.create.pop()
            new["metadata"] = {**copy.deepcopy(old["metadata"]), "labels": new["metadata"]["labels"]}
            new["metadata"].pop("generateName", None)
            plan.update.append(new)
            plan.delete.pop(i)
        else:
            i += 1
    return plan
