"""The Service API: ClusterIP and NodePort allocation with upstream's errors, defaults,
headless Services, updates that keep what was allocated, release on delete, repair after a
restart, and kubectl's columns."""

from __future__ import annotations

import ipaddress

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError


def svc(name: str, **spec: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}


@pytest.fixture
def c() -> Cluster:
    return Cluster(nodes=1, components=[])


def error(c: Cluster, obj: dict[str, object]) -> str:
    with pytest.raises(ApiError) as info:
        c.client.create(obj)
    assert info.value.code == 422
    return info.value.message


def test_create_allocates_a_cluster_ip_in_range_with_upstream_defaults(c: Cluster) -> None:
    created = c.client.create(svc("web"))
    spec = created["spec"]
    ip = ipaddress.IPv4Address(spec["clusterIP"])
    assert ip in ipaddress.IPv4Network("10.96.0.0/12")
    # dynamic allocation avoids the static band (the first 256 addresses of a /12)
    assert int(ip) - int(ipaddress.IPv4Address("10.96.0.0")) > 256
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert spec["internalTrafficPolicy"] == "Cluster" and "externalTrafficPolicy" not in spec
    assert created["status"] == {"loadBalancer": {}}


def test_a_taken_or_foreign_cluster_ip_is_refused_in_upstreams_words(c: Cluster) -> None:
    ip = c.client.create(svc("web"))["spec"]["clusterIP"]
    assert error(c, svc("b", clusterIP=ip)) == (
        f'Service "b" is invalid: spec.clusterIPs: Invalid value: ["{ip}"]: failed to allocate '
        f"IP {ip}: provided IP is already allocated")
    assert error(c, svc("b", clusterIP="10.0.0.1")) == (
        'Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.1"]: failed to allocate '
        "IP 10.0.0.1: the provided IP (10.0.0.1) is not in the valid range. The range of valid IPs "
        "is 10.96.0.0/12")
    assert error(c, svc("b", clusterIP="nope")).startswith(
        'Service "b" is invalid: spec.clusterIPs[0]: Invalid value: "nope": must be a valid IP')
    assert not c.exists("services", "b")


def test_node_ports_are_allocated_checked_and_released(c: Cluster) -> None:
    first = c.client.create(svc("np", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert first["spec"]["externalTrafficPolicy"] == "Cluster"
    assert error(c, svc("b", type="NodePort", ports=[{"port": 80, "nodePort": 30080}])) == (
        'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is '
        "already allocated")
    assert error(c, svc("b", type="NodePort", ports=[{"port": 80, "nodePort": 29999}])) == (
        'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 29999: provided port is '
        "not in the valid range. The range of valid ports is 30000-32767")
    assert error(c, svc("b", ports=[{"port": 80, "nodePort": 30081}])) == (
        'Service "b" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` '
        "is 'ClusterIP'")
    auto = c.client.create(svc("auto", type="NodePort"))["spec"]["ports"][0]["nodePort"]
    assert 30000 <= auto <= 32767
    c.client.delete("services", "np")
    again = c.client.create(svc("b", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert again["spec"]["ports"][0]["nodePort"] == 30080


def test_a_failed_create_leaves_nothing_allocated(c: Cluster) -> None:
    # the IP is reserved before validation, and released when validation refuses the Service
    with pytest.raises(ApiError):
        c.client.create(svc("bad", clusterIP="10.96.5.5", sessionAffinity="Sometimes"))
    assert c.client.create(svc("good", clusterIP="10.96.5.5"))["spec"]["clusterIP"] == "10.96.5.5"
    # a create that loses the race for its name keeps nothing either
    with pytest.raises(ApiError):
        c.client.create(svc("good", clusterIP="10.96.5.6"))
    assert c.client.create(svc("real", clusterIP="10.96.5.6"))["spec"]["clusterIP"] == "10.96.5.6"


def test_headless_service_gets_no_address_and_may_not_be_a_node_port(c: Cluster) -> None:
    created = c.client.create(svc("db", clusterIP="None"))
    assert created["spec"]["clusterIPs"] == ["None"]
    assert error(c, svc("np", clusterIP="None", type="NodePort")).endswith(
        "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services")


def test_update_keeps_allocations_and_refuses_a_new_cluster_ip(c: Cluster) -> None:
    created = c.client.create(svc("web", type="NodePort"))
    ip, port = created["spec"]["clusterIP"], created["spec"]["ports"][0]["nodePort"]
    # kubectl apply of the original manifest leaves clusterIP and nodePort out
    c.apply(svc("web", type="NodePort"))
    live = c.get("services", "web")
    assert live["spec"]["clusterIP"] == ip and live["spec"]["ports"][0]["nodePort"] == port
    live["spec"]["clusterIP"] = live["spec"]["clusterIPs"][0] = "10.96.9.9"
    with pytest.raises(ApiError) as info:
        c.client.update(live)
    assert "spec.clusterIPs[0]: Invalid value: [\"10.96.9.9\"]: may not change once set" in \
        info.value.message
    # back to ClusterIP: the node port is released for others
    live = c.get("services", "web")
    live["spec"]["type"] = "ClusterIP"
    del live["spec"]["externalTrafficPolicy"]
    live["spec"]["ports"][0].pop("nodePort")
    c.client.update(live)
    other = c.client.create(svc("other", type="NodePort", ports=[{"port": 80, "nodePort": port}]))
    assert other["spec"]["ports"][0]["nodePort"] == port


def test_allocations_are_rebuilt_from_the_store_after_a_restart(c: Cluster) -> None:
    ip = c.client.create(svc("web"))["spec"]["clusterIP"]
    c.faults.crash("apiserver")
    c.faults.restart("apiserver")
    c.apiserver.service_allocators.ips.clear()  # a fresh process remembers nothing ...
    c.faults.crash("apiserver")
    c.faults.restart("apiserver")                # ... and repairs from the store at start
    assert "already allocated" in error(c, svc("b", clusterIP=ip))


def test_validation_words(c: Cluster) -> None:
    assert error(c, svc("a", type="Magic")).startswith(
        'Service "a" is invalid: spec.type: Unsupported value: "Magic": supported values: '
        '"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"')
    two = [{"port": 80}, {"port": 81, "name": "b"}]
    assert error(c, svc("a", ports=two)) == 'Service "a" is invalid: spec.ports[0].name: Required value'
    assert "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive" in \
        error(c, svc("a", ports=[{"port": 0}]))
    assert "spec.ports: Required value" in error(c, svc("a", ports=[]))
    assert error(c, svc("a", externalTrafficPolicy="Local")).endswith(
        'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for '
        "externally-accessible services")


def test_kubectl_get_services_and_endpointslices_columns(c: Cluster) -> None:
    c.client.create(svc("web", clusterIP="10.96.0.50"))
    c.client.create(svc("np", type="NodePort", clusterIP="10.96.0.51",
                        ports=[{"port": 80, "nodePort": 30080}]))
    c.client.create(svc("lb", type="LoadBalancer", clusterIP="10.96.0.52",
                        ports=[{"port": 443, "nodePort": 30443}]))
    out = c.kubectl("get svc -o wide").splitlines()
    assert out[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE",
                              "SELECTOR"]
    assert out[1].split() == ["lb", "LoadBalancer", "10.96.0.52", "<pending>", "443:30443/TCP",
                              "0s", "app=lb"]
    assert out[2].split()[3:5] == ["<none>", "80:30080/TCP"]
    c.client.create({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                     "metadata": {"name": "web-abcde"}, "addressType": "IPv4",
                     "ports": [{"port": 80}],
                     "endpoints": [{"addresses": [f"10.244.0.{i}"]} for i in range(5)]})
    out = c.kubectl("get endpointslices").splitlines()
    assert out[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert out[1].split() == ["web-abcde", "IPv4", "80", "10.244.0.0,10.244.0.1,10.244.0.2",
                              "+", "2", "more...", "0s"]
