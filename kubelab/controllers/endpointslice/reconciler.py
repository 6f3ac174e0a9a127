"""The EndpointSlice reconciler: from a Service and its pods, the slices to create, update and
delete (kubernetes/endpointslice reconciler.go: Reconcile, reconcileByAddressType,
reconcileByPortMapping, finalize).

Slices not owned by this Service (an old Service of the same name, another UID) are deleted,
never reused. It keeps churn low, as upstream does:
1. each existing slice keeps the endpoints still wanted (updated in place when their
   conditions changed) and drops the others; a slice left empty is deleted; a slice whose
   labels no longer mirror the Service's (the reserved labels aside) is updated;
2. new endpoints first fill the slices that are being updated anyway, fullest first;
3. what remains goes, when it is less than a slice's worth, into the unchanged slice that
   ends up closest to full; otherwise into new slices of at most max_endpoints;
4. a slice about to be deleted is recycled for one about to be created (an update, not a
   delete and a create);
5. a Service with no endpoints at all keeps one empty placeholder slice.

The plan is a pure function of its inputs: the controller applies it. Departures on purpose:
- upstream pops endpoints from a Go map (any order); kubelab takes them in pod-name order, so
  a seed gives one result;
- single-stack: only IPv4 slices are reconciled, slices of any other address type deleted
  (upstream reconciles each of the Service's ipFamilies);
- no Node lister: a pod on a Node that does not exist is not skipped (upstream leaves it out
  and retries, unless publishNotReadyAddresses), and endpoints carry no zone;
- no topology hints, trafficDistribution, trigger-time annotation or metrics;
- a recycled slice keeps the old slice's whole metadata (name, uid, resourceVersion) with the
  new labels; upstream gives the new slice the old name only.
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
    set_endpoint_slice_labels,
    should_pod_be_in_endpoints,
)

__all__ = ["Plan", "finalize", "placeholder_slice_compare", "reconcile"]


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
    """Reconcile: the slices of an address type the Service no longer has are deleted (after
    finalize, so they are never recycled); the IPv4 ones are reconciled."""
    address_type = "IPv4"
    slices = [s for s in existing if s.get("addressType") == address_type]
    plan = reconcile_by_address_type(service, pods, slices, max_endpoints, address_type)
    plan.delete += [s for s in existing if s.get("addressType") != address_type]
    return plan


def reconcile_by_address_type(service: Object, pods: list[Object], existing: list[Object],
                              max_endpoints: int, address_type: str) -> Plan:
    """reconcileByAddressType: slices owned by another object (an old Service of the same
    name) are deleted; the rest are grouped by ports and reconciled group by group."""
    plan = Plan()
    existing_by_ports: dict[str, list[Object]] = {}
    for slice_ in existing:
        if owned_by(slice_, service):
            existing_by_ports.setdefault(port_map_key(slice_.get("ports") or []), []).append(slice_)
        else:
            plan.delete.append(slice_)
    desired_by_ports: dict[str, dict[tuple[object, ...], Object]] = {}
    ports_of: dict[str, list[Object]] = {}
    for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        if not should_pod_be_in_endpoints(pod):
            continue
        ports = get_endpoint_ports(service, pod)
        key = port_map_key(ports)
        ports_of.setdefault(key, ports)
        desired = desired_by_ports.setdefault(key, {})
        endpoint = pod_to_endpoint(pod, service)
        if endpoint["addresses"]:
            desired[endpoint_key(endpoint)] = endpoint
    for key, desired in desired_by_ports.items():
        part = reconcile_by_port_mapping(service, existing_by_ports.get(key, []), desired,
                                         ports_of[key], max_endpoints, address_type)
        plan.create += part.create
        plan.update += part.update
        plan.delete += part.delete
    for key, stale in existing_by_ports.items():
        if key not in desired_by_ports:
            plan.delete += stale
    if len(existing) == len(plan.delete) and not plan.create:
        placeholder = new_endpoint_slice(service, [], address_type)
        if len(plan.delete) == 1 and placeholder_slice_compare(plan.delete[0], placeholder):
            plan.delete.clear()  # the placeholder is already there: keep it
        else:
            plan.create.append(placeholder)
    return finalize(service, plan)


def placeholder_slice_compare(a: Object | None, b: Object | None) -> bool:
    """placeholderSliceCompare: equal but for metadata, of which only the namespace and the
    labels count (empty and missing lists are equal)."""
    if a is None or b is None:
        return a is b
    meta_a, meta_b = a.get("metadata") or {}, b.get("metadata") or {}
    return meta_a.get("namespace", "") == meta_b.get("namespace", "") and \
        (meta_a.get("labels") or {}) == (meta_b.get("labels") or {}) and \
        all((a.get(k) or None) == (b.get(k) or None) for k in ("addressType", "ports", "endpoints"))


def reconcile_by_port_mapping(service: Object, existing: list[Object],
                              desired: dict[tuple[object, ...], Object], ports: list[Object],
                              max_endpoints: int, address_type: str = "IPv4") -> Plan:
    plan = Plan()
    desired = dict(desired)
    to_update: list[Object] = []
    unchanged: list[Object] = []
    # 1. keep what is still wanted, update what changed, drop the rest; mirror the labels
    for slice_ in existing:
        kept, changed = [], False
        for endpoint in slice_.get("endpoints") or []:
            wanted = desired.pop(endpoint_key(endpoint), None)
            if wanted is None:
                changed = True
                continue
            changed = changed or wanted != endpoint
            kept.append(wanted)
        labels, labels_changed = set_endpoint_slice_labels(slice_, service)
        if changed and not kept:
            plan.delete.append(slice_)
        elif changed or labels_changed:
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
            target = new_endpoint_slice(service, ports, address_type)
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
    """finalize: recycle a slice to delete as one to create (same address type, owned by this
    Service); a Service being deleted gets no new slices (the garbage collector would race
    them), though its updates and deletes go through."""
    i = 0
    while i < len(plan.delete) and plan.create:
        old = plan.delete[i]
        new = plan.create[-1]
        if old.get("addressType") == new.get("addressType") and owned_by(old, service):
            plan.create.pop()
            meta = {k: v for k, v in copy.deepcopy(old["metadata"]).items()
                    if k not in ("labels", "generateName")}
            if "labels" in new["metadata"]:
                meta["labels"] = new["metadata"]["labels"]
            new["metadata"] = meta
            plan.update.append(new)
            plan.delete.pop(i)
        else:
            i += 1
    if service["metadata"].get("deletionTimestamp"):
        plan.create = []
    return plan
