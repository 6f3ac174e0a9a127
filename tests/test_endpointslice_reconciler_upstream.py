"""Upstream's reconciler tables, as data (kubernetes/endpointslice reconciler_test.go): one
Pod, placeholders, finalize. Each case keeps its upstream name. Not ported: the IPv6 and
dual-stack cases of TestReconcile1Pod (kubelab is single-stack), TestReconcilerPodMissingNode
and TestReconcileTopology (the reconciler has no Node lister, no zones, no hints), and the
metrics each test also checks. The slice-packing tables are in
test_endpointslice_churn_upstream.py."""

from __future__ import annotations

import pytest

from kubelab.controllers.endpointslice import Plan
from kubelab.controllers.endpointslice.reconciler import finalize, placeholder_slice_compare
from kubelab.controllers.endpointslice.utils import (
    CONTROLLER_NAME,
    LABEL_HEADLESS,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    new_endpoint_slice,
)
from tests.endpointslice_helpers import (
    NS,
    FakeClientset,
    Obj,
    controller_ref,
    endpoint_ports,
    new_empty_endpoint_slice,
    new_pod,
    new_service,
    reconcile_helper,
)

# ---------------------------------------------------------------- TestReconcile1Pod

POD1 = new_pod(1)
POD1["status"]["podIPs"] = [{"ip": "1.2.3.4"}, {"ip": "1234::5678:0000:0000:9abc:def0"}]
POD1["spec"]["hostname"] = "example-hostname"
ENDPOINT1 = {"addresses": ["1.2.3.4"],
             "conditions": {"ready": True, "serving": True, "terminating": False},
             "nodeName": "node-1",   # upstream also has zone us-central1-a, from the Node
             "targetRef": {"kind": "Pod", "namespace": NS, "name": "pod1", "uid": ""}}
MANAGED = {LABEL_MANAGED_BY: CONTROLLER_NAME, LABEL_SERVICE_NAME: "foo"}


def _svc(cluster_ip: str | None = None, families: list[str] | None = ["IPv4"],  # noqa: B006
         labels: dict[str, str] | None = None) -> Obj:
    svc = new_service()
    if cluster_ip is not None:
        svc["spec"]["clusterIP"] = cluster_ip
    if families is None:
        del svc["spec"]["ipFamilies"]
    if labels is not None:
        svc["metadata"]["labels"] = labels
    return svc


RECONCILE_1_POD = {
    "no-family-service": (_svc("10.0.0.10", None), MANAGED),
    "ipv4": (_svc(), {**MANAGED, LABEL_HEADLESS: ""}),
    "ipv4-clusterip": (_svc("1.1.1.1"), MANAGED),
    "ipv4-labels": (_svc(labels={"foo": "bar"}), {**MANAGED, "foo": "bar", LABEL_HEADLESS: ""}),
    "ipv4-bad-labels": (_svc(labels={LABEL_SERVICE_NAME: "bad", LABEL_MANAGED_BY: "actor",
                                     LABEL_HEADLESS: "invalid"}), {**MANAGED, LABEL_HEADLESS: ""}),
}


@pytest.mark.parametrize("name", RECONCILE_1_POD)
def test_reconcile_1_pod(name: str) -> None:
    svc, expected_labels = RECONCILE_1_POD[name]
    client = FakeClientset()
    reconcile_helper(client, svc, [POD1], [])
    assert client.actions == ["create"]
    (slice_,) = client.fetch()
    assert slice_["metadata"]["name"].startswith("foo")
    assert slice_["metadata"]["labels"] == expected_labels
    assert slice_["addressType"] == "IPv4"
    assert slice_["endpoints"] == [ENDPOINT1]


# ---------------------------------------------------------------- placeholders

def test_reconcile_empty() -> None:
    client = FakeClientset()
    reconcile_helper(client, new_service(), [], [])
    assert client.actions == ["create"]
    (slice_,) = client.fetch()
    assert slice_["metadata"]["name"].startswith("foo")
    assert slice_["metadata"]["labels"][LABEL_SERVICE_NAME] == "foo"
    assert slice_["ports"] == [] and slice_["endpoints"] == []
    assert slice_["metadata"]["generation"] == 1


def _different_placeholder() -> Obj:
    s = new_empty_endpoint_slice(1, new_service())
    s["metadata"]["labels"] = {"bar": "baz"}
    return s


RECONCILE_1_ENDPOINT_SLICE = {  # desc: (existing, wanted actions)
    "No existing placeholder": (None, ["create"]),
    "Existing placeholder that's the same": (new_endpoint_slice(new_service(), []), []),
    "Existing placeholder that's different": (_different_placeholder(), ["update"]),
}


@pytest.mark.parametrize("desc", RECONCILE_1_ENDPOINT_SLICE)
def test_reconcile_1_endpoint_slice(desc: str) -> None:
    existing, wanted = RECONCILE_1_ENDPOINT_SLICE[desc]
    client = FakeClientset()
    slices = [client.create(existing, record=False)] if existing else []
    reconcile_helper(client, new_service(), [], slices)
    assert client.actions == wanted
    (slice_,) = client.fetch()
    assert slice_["ports"] == [] and slice_["endpoints"] == []
    assert slice_["metadata"]["labels"][LABEL_SERVICE_NAME] == "foo"


PLACEHOLDER_SLICE_COMPARE: dict[str, tuple[Obj | None, Obj | None, bool]] = {
    "Both nil": (None, None, True),
    "Y is nil": ({}, None, False),
    "X is nil": (None, {}, False),
    "Both are empty and non-nil": ({}, {}, True),
    "Only ObjectMeta.Name has diff": ({"metadata": {"name": "foo"}}, {"metadata": {"name": "bar"}}, True),
    "Only ObjectMeta.Labels has diff": ({"metadata": {"labels": {"foo": "true"}}},
                                        {"metadata": {"labels": {"bar": "true"}}}, False),
    "Creation time is different": ({"metadata": {"creationTimestamp": "1970-01-01T00:00:01Z"}},
                                   {"metadata": {"creationTimestamp": "1970-01-01T00:00:02Z"}}, True),
    "Different except for ObjectMeta": ({"addressType": "IPv4"}, {"addressType": "IPv6"}, False),
}


@pytest.mark.parametrize("desc", PLACEHOLDER_SLICE_COMPARE)
def test_placeholder_slice_compare(desc: str) -> None:
    x, y, want = PLACEHOLDER_SLICE_COMPARE[desc]
    assert placeholder_slice_compare(x, y) is want


# ---------------------------------------------------------------- finalize

# name: (deletionTimestamp set, attempt create, update, delete, expect created, updated, deleted)
FINALIZE_SVC_DELETION_TIMESTAMP = {
    "Attempt create and update, nil deletion timestamp": (False, 1, 1, 0, True, True, True),
    "Attempt create and update, deletion timestamp set": (True, 1, 1, 0, False, True, True),
    "Attempt create, update, and delete, nil deletion timestamp, recycling in action":
        (False, 1, 1, 1, False, True, True),
    "Attempt create, update, and delete, deletion timestamp set, recycling in action":
        (True, 1, 1, 1, False, True, True),
    "Attempt update delete, deletion timestamp set": (True, 0, 1, 1, False, True, False),
}


@pytest.mark.parametrize("name", FINALIZE_SVC_DELETION_TIMESTAMP)
def test_reconciler_finalize_svc_deletion_timestamp(name: str) -> None:
    deleting, create, update, delete, *expected = FINALIZE_SVC_DELETION_TIMESTAMP[name]
    svc, client = new_service(), FakeClientset()
    if deleting:
        svc["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"

    def es(name: str) -> Obj:
        return {"metadata": {"name": name, "ownerReferences": [controller_ref(svc)]},
                "addressType": "IPv4", "ports": endpoint_ports()}

    to_update = client.create(es("to-update"), record=False)
    to_delete = client.create(es("to-delete"), record=False)
    to_update["endpoints"] = [{"addresses": ["10.2.3.4"]}]
    plan = Plan(create=[es("to-create")] * create, update=[to_update] * update,
                delete=[to_delete] * delete)
    client.apply(finalize(svc, plan))
    fetched = {s["metadata"]["name"]: s for s in client.fetch()}
    assert ["to-create" in fetched, "to-update" in fetched, "to-delete" in fetched] == expected
    if update:
        assert fetched["to-update"].get("endpoints") == to_update["endpoints"]
