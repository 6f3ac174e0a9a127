"""Upstream's utils tables, as data (kubernetes/endpointslice utils_test.go): newEndpointSlice,
podToEndpoint, ServiceControllerKey, getEndpointPorts, setEndpointSliceLabels; and FindPort's
sidecars (pkg/api/v1/pod FindPort). Each case keeps its upstream name. The endpoints have no
zone (kubelab looks up no Node), so the node-label cases of TestPodToEndpoint check the rest;
TestSupportedServiceAddressType is not ported (single-stack)."""

from __future__ import annotations

import copy
import re

import pytest

from kubelab.controllers.endpointslice.utils import (
    CONTROLLER_NAME,
    LABEL_HEADLESS,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    find_port,
    get_endpoint_ports,
    new_endpoint_slice,
    pod_to_endpoint,
    service_controller_key,
    set_endpoint_slice_labels,
)
from tests.endpointslice_helpers import NS, Obj, controller_ref, new_pod, new_service

MANAGED = {LABEL_SERVICE_NAME: "foo", LABEL_MANAGED_BY: CONTROLLER_NAME}
BASE: Obj = {"metadata": {"name": "foo", "namespace": NS, "uid": "foo-uid"},
             "spec": {"clusterIP": "1.1.1.1", "ports": [{"port": 80}], "selector": {"foo": "bar"}}}


def svc_with(labels: dict[str, str] | None = None, cluster_ip: str | None = None,
             annotations: dict[str, str] | None = None) -> Obj:
    svc = copy.deepcopy(BASE)
    if labels is not None:
        svc["metadata"]["labels"] = labels
    if annotations is not None:
        svc["metadata"]["annotations"] = annotations
    if cluster_ip is not None:
        svc["spec"]["clusterIP"] = cluster_ip
    return svc


NEW_ENDPOINT_SLICE = {  # name: (service, the slice's labels)
    "Service without labels": (svc_with(), MANAGED),
    "Service with labels": (svc_with({"foo": "bar"}), {**MANAGED, "foo": "bar"}),
    "Headless Service with labels": (svc_with({"foo": "bar"}, "None"),
                                     {**MANAGED, LABEL_HEADLESS: "", "foo": "bar"}),
    "Service with multiple labels": (svc_with({"foo": "bar", "foo2": "bar2"}),
                                     {**MANAGED, "foo": "bar", "foo2": "bar2"}),
    "Evil service hijacking endpoint slices labels": (
        svc_with({LABEL_SERVICE_NAME: "bad", LABEL_MANAGED_BY: "actor", "foo": "bar"}),
        {**MANAGED, "foo": "bar"}),
    "Service with annotations": (svc_with(annotations={"foo": "bar"}), MANAGED),
}


@pytest.mark.parametrize("name", NEW_ENDPOINT_SLICE)
def test_new_endpoint_slice(name: str) -> None:
    svc, labels = NEW_ENDPOINT_SLICE[name]
    ports = [{"name": "foo", "protocol": "TCP"}]
    assert new_endpoint_slice(svc, ports, "IPv4") == {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"labels": labels, "generateName": "foo-", "namespace": NS,
                     "ownerReferences": [controller_ref(svc)]},
        "ports": ports, "addressType": "IPv4", "endpoints": []}


def _pod(ready: bool = True, terminating: bool = False, hostname: bool = False,
         multi_ip: bool = False) -> Obj:
    pod = new_pod(1, ready, terminating)
    if hostname:
        pod["spec"].update(subdomain="foo", hostname="example-hostname")
    if multi_ip:
        pod["status"]["podIPs"] = [{"ip": "1.2.3.4"}, {"ip": "1234::5678:0000:0000:9abc:def0"}]
    return pod


def _endpoint(ready: bool, serving: bool, terminating: bool, address: str = "1.2.3.5",
              hostname: str | None = None) -> Obj:
    endpoint: Obj = {"addresses": [address],
                     "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
                     "targetRef": {"kind": "Pod", "namespace": NS, "name": "pod1", "uid": ""},
                     "nodeName": "node-1"}
    if hostname:
        endpoint["hostname"] = hostname
    return endpoint


PUBLISH_NOT_READY = new_service("publishnotready")
PUBLISH_NOT_READY["spec"]["publishNotReadyAddresses"] = True
POD_TO_ENDPOINT = [  # (name, pod, service, expected endpoint)
    ("Ready pod", _pod(), new_service(), _endpoint(True, True, False)),
    ("Ready pod + publishNotReadyAddresses", _pod(), PUBLISH_NOT_READY, _endpoint(True, True, False)),
    ("Unready pod", _pod(False), new_service(), _endpoint(False, False, False)),
    ("Unready pod + publishNotReadyAddresses", _pod(False), PUBLISH_NOT_READY,
     _endpoint(True, False, False)),
    ("Ready pod + node labels", _pod(), new_service(), _endpoint(True, True, False)),
    ("Multi IP Ready pod + node labels", _pod(multi_ip=True), new_service(),
     _endpoint(True, True, False, "1.2.3.4")),
    ("Ready pod + hostname", _pod(hostname=True), new_service(),
     _endpoint(True, True, False, hostname="example-hostname")),
    ("Ready pod (again)", _pod(), new_service(), _endpoint(True, True, False)),
    ("Ready terminating pod", _pod(terminating=True), new_service(), _endpoint(False, True, True)),
    ("Not ready terminating pod", _pod(False, True), new_service(), _endpoint(False, False, True)),
]


@pytest.mark.parametrize(("name", "pod", "svc", "expected"), POD_TO_ENDPOINT,
                         ids=[c[0] for c in POD_TO_ENDPOINT])
def test_pod_to_endpoint(name: str, pod: Obj, svc: Obj, expected: Obj) -> None:
    assert pod_to_endpoint(pod, svc) == expected


SERVICE_CONTROLLER_KEY: dict[str, tuple[Obj | None, str, str | None]] = {  # (slice, key, error)
    "nil EndpointSlice": (None, "", "nil EndpointSlice passed to ServiceControllerKey()"),
    "empty EndpointSlice": ({}, "", "EndpointSlice missing kubernetes.io/service-name label"),
    "valid EndpointSlice": ({"metadata": {"namespace": "ns", "labels": {LABEL_SERVICE_NAME: "svc"}}},
                            "ns/svc", None),
}


@pytest.mark.parametrize("name", SERVICE_CONTROLLER_KEY)
def test_service_controller_key(name: str) -> None:
    slice_, expected_key, expected_err = SERVICE_CONTROLLER_KEY[name]
    if expected_err is None:
        assert service_controller_key(slice_) == expected_key
    else:
        with pytest.raises(ValueError, match=f"^{re.escape(expected_err)}$"):
            service_controller_key(slice_)


GET_ENDPOINT_PORTS = {  # name: (service ports, pod container ports, expected)
    "service with AppProtocol on one port": (
        [{"name": "http", "port": 80, "targetPort": 80, "protocol": "TCP",
          "appProtocol": "example.com/custom-protocol"}], [],
        [{"name": "http", "port": 80, "protocol": "TCP", "appProtocol": "example.com/custom-protocol"}]),
    "service with named port and AppProtocol on one port": (
        [{"name": "http", "port": 80, "targetPort": 80, "protocol": "TCP"},
         {"name": "https", "protocol": "TCP", "targetPort": "https", "appProtocol": "https"}],
        [{"name": "https", "containerPort": 443, "protocol": "TCP"}],
        [{"name": "http", "port": 80, "protocol": "TCP"},
         {"name": "https", "port": 443, "protocol": "TCP", "appProtocol": "https"}]),
}


@pytest.mark.parametrize("name", GET_ENDPOINT_PORTS)
def test_get_endpoint_ports(name: str) -> None:
    service_ports, container_ports, expected = GET_ENDPOINT_PORTS[name]
    pod = {"spec": {"containers": [{"ports": container_ports}]}}
    assert get_endpoint_ports({"spec": {"ports": service_ports}}, pod) == expected


HEADLESS = {**MANAGED, LABEL_HEADLESS: ""}
SET_ENDPOINT_SLICE_LABELS = {  # name: (slice labels, service, expected labels, expected update)
    "Service without labels and empty endpoint slice": (None, svc_with(), MANAGED, False),
    "Headless service with labels and empty endpoint slice": (
        None, svc_with({"foo": "bar"}, "None"), {**HEADLESS, "foo": "bar"}, True),
    "Headless service without labels and empty endpoint slice": (None, svc_with(cluster_ip="None"),
                                                                 HEADLESS, False),
    "Non Headless service with Headless label and empty endpoint slice": (
        None, svc_with({LABEL_HEADLESS: ""}), MANAGED, False),
    "Headless Service change to ClusterIP Service with headless label": (
        HEADLESS, svc_with({LABEL_HEADLESS: ""}), MANAGED, False),
    "Headless Service change to ClusterIP Service": (HEADLESS, svc_with(), MANAGED, False),
    "Headless service and endpoint slice with same labels": (
        {**MANAGED, "foo": "bar"}, svc_with({"foo": "bar"}, "None"), {**HEADLESS, "foo": "bar"}, False),
    "Service with labels and empty endpoint slice": (None, svc_with({"foo": "bar"}),
                                                     {**MANAGED, "foo": "bar"}, True),
    "Slice with labels and service without labels": ({**MANAGED, "foo": "bar"}, svc_with(), MANAGED, True),
    "Slice with headless label and service with ClusterIP": (HEADLESS, svc_with(), MANAGED, False),
    "Slice with reserved labels and service with labels": (MANAGED, svc_with({"foo": "bar"}),
                                                           {**MANAGED, "foo": "bar"}, True),
    "Evil service trying to hijack slice labels only well-known slice labels": (
        MANAGED, svc_with({LABEL_SERVICE_NAME: "bad", LABEL_MANAGED_BY: "actor", LABEL_HEADLESS: "invalid"}),
        MANAGED, False),
    "Evil service trying to hijack slice labels with updates": (
        MANAGED, svc_with({LABEL_SERVICE_NAME: "bad", LABEL_MANAGED_BY: "actor", "foo": "bar"}),
        {**MANAGED, "foo": "bar"}, True),
}


@pytest.mark.parametrize("name", SET_ENDPOINT_SLICE_LABELS)
def test_set_endpoint_slice_labels(name: str) -> None:
    slice_labels, svc, expected_labels, expected_update = SET_ENDPOINT_SLICE_LABELS[name]
    slice_: Obj = {"metadata": {"labels": dict(slice_labels)}} if slice_labels else {}
    assert set_endpoint_slice_labels(slice_, svc) == (expected_labels, expected_update)


def test_an_empty_cluster_ip_is_headless() -> None:
    """isServiceIPSet: "" is as headless as "None" (newServiceAndEndpointMeta has no ClusterIP)."""
    labels, _ = set_endpoint_slice_labels({}, svc_with(cluster_ip=""))
    assert labels == HEADLESS


# kubelab's own cases for FindPort's sidecars: a named port is looked up in the containers,
# then in the init containers with restartPolicy Always, never in other init containers.
SIDECAR = {"name": "proxy", "restartPolicy": "Always",
           "ports": [{"name": "metrics", "containerPort": 9090, "protocol": "TCP"}]}
FIND_PORT = {  # name: (init containers, service port, expected)
    "named port in a sidecar": ([SIDECAR], {"targetPort": "metrics", "protocol": "TCP"}, 9090),
    "named port in a plain init container": ([{**SIDECAR, "restartPolicy": None}],
                                             {"targetPort": "metrics", "protocol": "TCP"}, None),
    "a sidecar's port of another protocol": ([SIDECAR], {"targetPort": "metrics", "protocol": "UDP"}, None),
    "a container's port wins over a sidecar's": (
        [{**SIDECAR, "ports": [{"name": "http", "containerPort": 1, "protocol": "TCP"}]}],
        {"targetPort": "http", "protocol": "TCP"}, 8080),
    "a numeric targetPort is itself": ([], {"targetPort": 81, "protocol": "TCP"}, 81),
}


@pytest.mark.parametrize("name", FIND_PORT)
def test_find_port(name: str) -> None:
    init_containers, service_port, expected = FIND_PORT[name]
    pod = {"spec": {"containers": [{"name": "c", "ports": [
        {"name": "http", "containerPort": 8080, "protocol": "TCP"}]}], "initContainers": init_containers}}
    assert find_port(pod, service_port) == expected
