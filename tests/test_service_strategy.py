"""A Service that changes type drops the fields that no longer apply, as upstream's
svcStrategy.PrepareForUpdate does (pkg/registry/core/service/strategy.go
dropTypeDependentFields), unless the request changed them too; the allocator then releases
what the stored object no longer holds."""

from __future__ import annotations

import copy

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.registry.service.strategy import drop_type_dependent_fields

CLASS = "example.com/internal"


def svc(name: str, **spec: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80}], **spec}}


@pytest.fixture
def c() -> Cluster:
    return Cluster(nodes=1, components=[])


def local_load_balancer(c: Cluster) -> dict[str, object]:
    c.client.create(svc("web", type="LoadBalancer", externalTrafficPolicy="Local",
                        loadBalancerClass=CLASS))
    live = c.get("services", "web")
    live["status"] = {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}
    return c.client.update_status(live)


def test_a_load_balancer_turned_cluster_ip_loses_what_only_a_load_balancer_has(c: Cluster) -> None:
    before = local_load_balancer(c)
    spec = before["spec"]
    node_port, health = spec["ports"][0]["nodePort"], spec["healthCheckNodePort"]
    assert spec["allocateLoadBalancerNodePorts"] is True and spec["loadBalancerClass"] == CLASS
    live = c.get("services", "web")
    live["spec"]["type"] = "ClusterIP"  # and nothing else: kubectl edit of one line
    after = c.client.update(live)
    spec = after["spec"]
    assert "nodePort" not in spec["ports"][0]
    for dropped in ("healthCheckNodePort", "allocateLoadBalancerNodePorts", "loadBalancerClass",
                    "externalTrafficPolicy"):
        assert dropped not in spec, dropped
    assert spec["clusterIP"] == before["spec"]["clusterIP"]  # a ClusterIP Service keeps it
    assert spec["ipFamilyPolicy"] == "SingleStack" and spec["ipFamilies"] == ["IPv4"]
    assert after["status"] == {"loadBalancer": {}}
    assert c.get("services", "web") == after
    # both node ports are free again
    other = c.client.create(svc("other", type="LoadBalancer", externalTrafficPolicy="Local",
                                healthCheckNodePort=health,
                                ports=[{"name": "http", "port": 80, "nodePort": node_port}]))
    assert other["spec"]["ports"][0]["nodePort"] == node_port


def test_a_field_changed_with_the_type_is_kept_and_judged(c: Cluster) -> None:
    local_load_balancer(c)
    live = c.get("services", "web")
    live["spec"]["type"] = "ClusterIP"
    live["spec"]["ports"][0]["nodePort"] = 31999  # a new node port: not the strategy's to drop
    live["spec"]["loadBalancerClass"] = "example.com/other"
    with pytest.raises(ApiError) as info:
        c.client.update(live)
    assert info.value.code == 422
    message = info.value.message
    assert "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'" in message
    assert "spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'" \
        in message
    assert "healthCheckNodePort" not in message and "externalTrafficPolicy" not in message
    assert c.get("services", "web")["spec"]["type"] == "LoadBalancer"


def test_turned_external_name_it_gives_up_its_cluster_ip(c: Cluster) -> None:
    ip = c.client.create(svc("db"))["spec"]["clusterIP"]
    live = c.get("services", "db")
    live["spec"].update(type="ExternalName", externalName="db.example.com")
    spec = c.client.update(live)["spec"]
    for dropped in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        assert dropped not in spec, dropped
    assert c.client.create(svc("next", clusterIP=ip))["spec"]["clusterIP"] == ip


def test_node_port_turned_cluster_ip_may_drop_ports_but_not_add_node_ports() -> None:
    old = {"spec": {"type": "NodePort", "externalTrafficPolicy": "Cluster",
                    "ports": [{"port": 80, "nodePort": 30080}, {"port": 81, "nodePort": 30081}]}}
    new = copy.deepcopy(old)
    new["spec"].update(type="ClusterIP", ports=[{"port": 81, "nodePort": 30081}])
    drop_type_dependent_fields(new, old)
    assert new["spec"] == {"type": "ClusterIP", "ports": [{"port": 81}]}
    new = copy.deepcopy(old)
    new["spec"].update(type="ClusterIP", ports=[{"port": 80, "nodePort": 30082}])
    drop_type_dependent_fields(new, old)
    assert new["spec"]["ports"] == [{"port": 80, "nodePort": 30082}]


def test_a_create_and_an_unchanged_type_are_left_alone() -> None:
    old = {"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                    "healthCheckNodePort": 30500, "allocateLoadBalancerNodePorts": True,
                    "ports": [{"port": 80, "nodePort": 30080}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}}
    new = copy.deepcopy(old)
    drop_type_dependent_fields(new, old)
    assert new == old
