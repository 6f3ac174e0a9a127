"""Upstream's slice-packing and churn tables, as data (kubernetes/endpointslice
reconciler_test.go): how many writes a sync makes and how full the slices end up. Each case
keeps its upstream name; the metrics each test also checks are not ported."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.controllers.endpointslice.utils import (
    CONTROLLER_NAME,
    LABEL_HEADLESS,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    pod_to_endpoint,
)
from tests.endpointslice_helpers import (
    NS,
    FakeClientset,
    Obj,
    lengths,
    new_empty_endpoint_slice,
    new_pod,
    new_service,
    pods_with_every_third_unready,
    reconcile_helper,
)

# ---------------------------------------------------------------- packing and churn

def test_reconcile_1_endpoint_slice_publish_not_ready_addresses() -> None:
    svc = new_service()
    svc["spec"]["publishNotReadyAddresses"] = True
    client = FakeClientset()
    reconcile_helper(client, svc, pods_with_every_third_unready(50), [])
    assert client.actions == ["create"]
    slices = client.fetch()
    assert all(e["conditions"]["ready"] for s in slices for e in s["endpoints"])
    assert lengths(slices) == [50]


def test_reconcile_many_pods() -> None:
    client = FakeClientset()
    reconcile_helper(client, new_service(), pods_with_every_third_unready(250), [])
    assert client.actions == ["create"] * 3
    assert lengths(client.fetch()) == [50, 100, 100]


def _preexisting(svc: Obj, pods: list[Obj]) -> list[Obj]:
    """About a quarter of the pods in each of two slices (pods 1, 5, 9... and 3, 7, 11...)."""
    slices = [new_empty_endpoint_slice(1, svc), new_empty_endpoint_slice(2, svc)]
    for n, first in ((0, 1), (1, 3)):
        slices[n]["endpoints"] = [pod_to_endpoint(pods[i], svc) for i in range(first, len(pods) - 4, 4)]
    return slices


# name: (pods, wanted actions, wanted lengths)
SOME_PREEXISTING = {
    # 62 + 61 kept, 127 to add: 100 in a new slice, 27 into the slice closest to full
    "TestReconcileEndpointSlicesSomePreexisting": (250, ["create", "update"], [61, 89, 100]),
    # 74 + 74 kept, 152 to add: 52 do not fit in one slice, so two new slices, no updates
    "TestReconcileEndpointSlicesSomePreexistingWorseAllocation": (300, ["create", "create"],
                                                                  [52, 74, 74, 100]),
}


@pytest.mark.parametrize("name", SOME_PREEXISTING)
def test_reconcile_endpoint_slices_some_preexisting(name: str) -> None:
    count, wanted_actions, wanted_lengths = SOME_PREEXISTING[name]
    svc, pods, client = new_service(), pods_with_every_third_unready(count), FakeClientset()
    existing = [client.create(s, record=False) for s in _preexisting(svc, pods)]
    reconcile_helper(client, svc, pods, existing)
    assert client.actions == wanted_actions
    assert lengths(client.fetch()) == wanted_lengths


def _change_target_port(svc: Obj) -> None:
    svc["spec"]["ports"][0]["targetPort"] = 81


def _set_labels(labels: dict[str, str]) -> Any:
    def change(svc: Obj) -> None:
        svc["metadata"]["labels"] = labels
    return change


# name: (change to the Service, wanted actions of the second sync)
SERVICE_CHANGES = {
    "TestReconcileEndpointSlicesUpdating": (_change_target_port, ["update"] * 3),
    "TestReconcileEndpointSlicesServicesLabelsUpdating": (_set_labels({"foo": "bar"}), ["update"] * 3),
    "TestReconcileEndpointSlicesServicesReservedLabels": (_set_labels(
        {LABEL_SERVICE_NAME: "bad", LABEL_MANAGED_BY: "actor", LABEL_HEADLESS: "invalid"}), []),
}


@pytest.mark.parametrize("name", SERVICE_CHANGES)
def test_reconcile_endpoint_slices_service_changes(name: str) -> None:
    change, wanted = SERVICE_CHANGES[name]
    svc, pods, client = new_service(), pods_with_every_third_unready(250), FakeClientset()
    reconcile_helper(client, svc, pods, [])
    assert client.actions == ["create"] * 3 and lengths(client.fetch()) == [50, 100, 100]
    change(svc)
    reconcile_helper(client, svc, pods, client.fetch())
    assert client.actions[3:] == wanted
    slices = client.fetch()
    assert lengths(slices) == [50, 100, 100]
    for s in slices:
        assert s["metadata"]["labels"].get("foo") == svc["metadata"].get("labels", {}).get("foo")
        assert s["metadata"]["labels"][LABEL_SERVICE_NAME] == "foo"
        assert s["metadata"]["labels"][LABEL_MANAGED_BY] == CONTROLLER_NAME


def test_reconcile_endpoint_slices_recycling() -> None:
    svc, pods, client = new_service(), pods_with_every_third_unready(300), FakeClientset()
    existing = [new_empty_endpoint_slice(n, svc) for n in range(10)]
    for i, pod in enumerate(pods):
        existing[i // 30]["endpoints"].append(pod_to_endpoint(pod, svc))
    existing = [client.create(s, record=False) for s in existing]
    reconcile_helper(client, svc, pods, existing)
    assert client.actions == []  # every pod is in a slice: no repacking
    _change_target_port(svc)
    reconcile_helper(client, svc, pods, existing)
    assert sorted(client.actions) == ["delete"] * 7 + ["update"] * 3
    assert lengths(client.fetch()) == [100, 100, 100]


def test_reconcile_endpoint_slices_update_packing() -> None:
    svc, client = new_service(), FakeClientset()
    pods = [new_pod(i) for i in range(80)] + [new_pod(i) for i in range(100, 120)]
    slice1, slice2 = new_empty_endpoint_slice(1, svc), new_empty_endpoint_slice(2, svc)
    slice1["endpoints"] = [pod_to_endpoint(p, svc) for p in pods[:80]]
    slice2["endpoints"] = [pod_to_endpoint(p, svc) for p in pods[80:]]
    existing = [client.create(s, record=False) for s in (slice1, slice2)]
    for i, pod in enumerate(pods):
        if i % 10 == 0:
            pod["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    pods += [new_pod(i) for i in range(200, 215)]
    reconcile_helper(client, svc, pods, existing)
    assert client.actions == ["update", "update"]
    assert lengths(client.fetch()) == [20, 95]  # the new pods go to the fuller slice


def test_reconcile_endpoint_slices_replace_deprecated() -> None:
    svc, client = new_service(), FakeClientset()
    pods = [new_pod(i) for i in range(80)] + [new_pod(i) for i in range(100, 150)]
    slice1 = new_empty_endpoint_slice(1, svc, address_type="IP")
    slice2 = new_empty_endpoint_slice(2, svc, address_type="IP")
    slice1["endpoints"] = [pod_to_endpoint(p, svc) for p in pods[:80]]
    slice2["endpoints"] = [pod_to_endpoint(p, svc) for p in pods[80:]]
    existing = [client.create(s, record=False) for s in (slice1, slice2)]
    reconcile_helper(client, svc, pods, existing)
    assert client.actions[-2:] == ["delete", "delete"]
    slices = client.fetch()
    assert lengths(slices) == [30, 100]  # replaced, so perfectly packed
    assert {s["addressType"] for s in slices} == {"IPv4"}


RECREATION = {  # name: (owned by the Service, wanted actions)
    "slice owned by Service": (True, []),
    "slice owned by other Service UID": (False, ["create", "delete"]),
}


@pytest.mark.parametrize("name", RECREATION)
def test_reconcile_endpoint_slices_recreation(name: str) -> None:
    owned, wanted = RECREATION[name]
    svc, pod, client = new_service(), new_pod(1), FakeClientset()
    slice_ = new_empty_endpoint_slice(1, svc)
    slice_["endpoints"] = [pod_to_endpoint(pod, svc)]
    if not owned:
        slice_["metadata"]["ownerReferences"][0]["uid"] = "different"
    existing = [client.create(slice_, record=False)]
    reconcile_helper(client, svc, [pod], existing)
    assert client.actions == wanted
    (fetched,) = client.fetch()
    assert fetched["metadata"]["ownerReferences"][0]["uid"] == svc["metadata"]["uid"]


def test_reconcile_endpoint_slices_named_ports() -> None:
    svc: Obj = {"metadata": {"name": "named-port-example", "namespace": NS, "uid": "u"},
                "spec": {"ports": [{"targetPort": "http", "protocol": "TCP"}],
                         "selector": {"foo": "bar"}, "ipFamilies": ["IPv4"]}}
    pods = pods_with_every_third_unready(300)
    for i, pod in enumerate(pods):
        pod["spec"]["containers"][0]["ports"] = [
            {"name": "http", "containerPort": 8080 + i % 5, "protocol": "TCP"}]
    client = FakeClientset()
    reconcile_helper(client, svc, pods, [])
    assert client.actions == ["create"] * 5
    slices = client.fetch()
    assert lengths(slices) == [60] * 5  # one slice per port mapping
    assert sorted((s["addressType"], s["ports"][0]["port"]) for s in slices) == \
        [("IPv4", 8080 + i) for i in range(5)]
    assert all(s["ports"] == [{"name": "", "port": s["ports"][0]["port"], "protocol": "TCP"}]
               for s in slices)


MAX_ENDPOINTS_PER_SLICE = {50: [50] * 5, 80: [10, 80, 80, 80], 150: [100, 150], 250: [250],
                           500: [250]}


@pytest.mark.parametrize("max_endpoints", MAX_ENDPOINTS_PER_SLICE)
def test_reconcile_max_endpoints_per_slice(max_endpoints: int) -> None:
    client = FakeClientset()
    reconcile_helper(client, new_service(), pods_with_every_third_unready(250), [], max_endpoints)
    assert lengths(client.fetch()) == MAX_ENDPOINTS_PER_SLICE[max_endpoints]


def test_reconcile_endpoint_slices_metrics() -> None:
    """TestReconcileEndpointSlicesMetrics, its writes: 1 create, then 1 update for 10 removed."""
    svc, pods, client = new_service(), [new_pod(i) for i in range(20)], FakeClientset()
    reconcile_helper(client, svc, pods, [])
    assert client.actions == ["create"]
    reconcile_helper(client, svc, pods[:10], client.fetch())
    assert client.actions == ["create", "update"]
    assert lengths(client.fetch()) == [10]
