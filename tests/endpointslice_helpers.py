"""Shared set-up for the tables ported from kubernetes/endpointslice reconciler_test.go and
utils_test.go: newPod, newServiceAndEndpointMeta, newEmptyEndpointSlice, and newClientset's
fake (a dict of slices that names created slices from generateName, sets generation 1 and
counts up on update, and logs each write)."""

from __future__ import annotations

import copy
from typing import Any

from kubelab.controllers.endpointslice import Plan, reconcile

NS = "test"
Obj = dict[str, Any]


def new_pod(n: int, ready: bool = True, terminating: bool = False) -> Obj:
    """newPod: pod<n>, label foo=bar, on node-1, IP 1.2.3.<4+n>."""
    meta: Obj = {"namespace": NS, "name": f"pod{n}", "labels": {"foo": "bar"},
                 "resourceVersion": str(n)}
    if terminating:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    ip = f"1.2.3.{4 + n}"
    return {"apiVersion": "v1", "metadata": meta,
            "spec": {"containers": [{"name": "container-1"}], "nodeName": "node-1"},
            "status": {"podIP": ip, "podIPs": [{"ip": ip}],
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def new_service(name: str = "foo") -> Obj:
    """newServiceAndEndpointMeta's Service: targetPort 80, no ClusterIP (so headless)."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": NS, "uid": f"{NS}-{name}"},
            "spec": {"ports": [{"targetPort": 80, "protocol": "TCP", "name": name}],
                     "selector": {"foo": "bar"}, "ipFamilies": ["IPv4"]}}


def endpoint_ports(name: str = "foo") -> list[Obj]:
    """newServiceAndEndpointMeta's endpointMeta.ports."""
    return [{"name": name, "port": 80, "protocol": "TCP"}]


def controller_ref(svc: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "name": svc["metadata"]["name"],
            "uid": svc["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def new_empty_endpoint_slice(n: int, svc: Obj, ports: list[Obj] | None = None,
                             address_type: str = "IPv4") -> Obj:
    """newEmptyEndpointSlice: <service>-<n>, owned by the Service, no labels."""
    return {"metadata": {"name": f"{svc['metadata']['name']}-{n}", "namespace": NS,
                         "uid": f"uid-{svc['metadata']['name']}-{n}",
                         "ownerReferences": [controller_ref(svc)]},
            "ports": endpoint_ports() if ports is None else ports, "addressType": address_type,
            "endpoints": []}


class FakeClientset:
    """newClientset: a store of slices and the list of write actions made to it."""

    def __init__(self) -> None:
        self.slices: dict[str, Obj] = {}
        self.actions: list[str] = []
        self.created = 0

    def create(self, slice_: Obj, record: bool = True) -> Obj:
        slice_ = copy.deepcopy(slice_)
        meta = slice_["metadata"]
        if meta.get("generateName"):
            self.created += 1
            meta["name"] = f"{meta.pop('generateName')}{self.created:05d}"
            meta["uid"] = meta["name"]
        meta["generation"] = 1
        self.slices[meta["name"]] = slice_
        if record:
            self.actions.append("create")
        return slice_

    def apply(self, plan: Plan) -> None:
        for slice_ in plan.create:
            self.create(slice_)
        for slice_ in plan.update:
            new = copy.deepcopy(slice_)
            new["metadata"]["generation"] = int(new["metadata"].get("generation", 0)) + 1
            self.slices[new["metadata"]["name"]] = new
            self.actions.append("update")
        for slice_ in plan.delete:
            self.slices.pop(slice_["metadata"]["name"], None)
            self.actions.append("delete")

    def fetch(self) -> list[Obj]:
        return [copy.deepcopy(s) for s in self.slices.values()]


def reconcile_helper(client: FakeClientset, svc: Obj, pods: list[Obj], existing: list[Obj],
                     max_endpoints: int = 100) -> Plan:
    """reconcileHelper, with cacheMutationCheck: the inputs must come back unchanged."""
    before = copy.deepcopy((svc, pods, existing))
    plan = reconcile(svc, pods, existing, max_endpoints)
    assert (svc, pods, existing) == before, "cached object was unexpectedly mutated"
    client.apply(plan)
    return plan


def lengths(slices: list[Obj]) -> list[int]:
    """expectUnorderedSlicesWithLengths"""
    return sorted(len(s.get("endpoints") or []) for s in slices)


def pods_with_every_third_unready(count: int) -> list[Obj]:
    return [new_pod(i, ready=i % 3 != 0) for i in range(count)]
