"""core/v1 Endpoints (deprecated, served) and the endpoints controller
(kubelab/controllers/endpoint/): printers, validation, RepackSubsets, truncation, and the
controller in Cluster(anatomy=True), the only cluster that runs it."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.apiserver.printers.services import format_endpoints
from kubelab.cluster import Cluster
from kubelab.controllers import ControllerManager
from kubelab.controllers.endpoint import (
    ENDPOINTS_LAST_CHANGE_TRIGGER_TIME,
    ENDPOINTS_OVER_CAPACITY,
    MAX_CAPACITY,
)
from kubelab.controllers.endpoint.endpoints_controller import truncate_endpoints
from kubelab.controllers.endpoint.repack import repack_subsets

WARNING = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"


def _addresses(*ips: str) -> list[dict[str, str]]:
    return [{"ip": ip} for ip in ips]


# printers_test.go TestPrintEndpoint, transcribed: formatEndpoints lists ip:port for each port,
# then each ready address, three at most.
@pytest.mark.parametrize(("subsets", "want"), [
    ([], "<none>"),
    ([{"addresses": _addresses("127.0.0.1")}], "127.0.0.1"),
    ([{"addresses": _addresses("127.0.0.1"), "ports": [{"port": 8888, "protocol": "TCP"}]}],
     "127.0.0.1:8888"),
    ([{"addresses": _addresses("127.0.0.1", "10.10.1.1"),
       "ports": [{"port": 8888, "protocol": "TCP"}, {"port": 9999, "protocol": "TCP"}]}],
     "127.0.0.1:8888,10.10.1.1:8888,127.0.0.1:9999 + 1 more..."),
    ([{"addresses": _addresses("::1"), "ports": [{"port": 8888}]}], "[::1]:8888"),
    ([{"addresses": _addresses("10.0.0.1"), "ports": [{"port": 1}]},
      {"addresses": _addresses("10.0.0.2", "10.0.0.3", "10.0.0.4"), "ports": [{"port": 2}]}],
     "10.0.0.1:1,10.0.0.2:2,10.0.0.3:2 + 1 more..."),
    ([{"notReadyAddresses": _addresses("10.0.0.1"), "ports": [{"port": 1}]}], ""),
])
def test_format_endpoints(subsets: list[dict[str, Any]], want: str) -> None:
    assert format_endpoints({"subsets": subsets}) == want


def _ref(uid: str) -> dict[str, str]:
    return {"kind": "Pod", "name": uid, "uid": uid}


# util_test.go TestPackSubsets, the cases of one and two ports.
@pytest.mark.parametrize(("given", "expect"), [
    ([{"addresses": [{"ip": "1.2.3.4", "targetRef": _ref("a")}], "ports": [{"port": 111}]},
      {"addresses": [{"ip": "5.6.7.8", "targetRef": _ref("b")}], "ports": [{"port": 111}]}],
     [{"addresses": [{"ip": "1.2.3.4", "targetRef": _ref("a")}, {"ip": "5.6.7.8", "targetRef": _ref("b")}],
       "ports": [{"port": 111}]}]),
    ([{"addresses": _addresses("1.2.3.4"), "ports": [{"port": 111}]},
      {"addresses": _addresses("1.2.3.4"), "ports": [{"port": 222}]}],
     [{"addresses": _addresses("1.2.3.4"), "ports": [{"port": 111}, {"port": 222}]}]),
    # ready somewhere: ready
    ([{"notReadyAddresses": _addresses("1.2.3.4"), "ports": [{"port": 111}]},
      {"addresses": _addresses("1.2.3.4"), "ports": [{"port": 111}]}],
     [{"addresses": _addresses("1.2.3.4"), "ports": [{"port": 111}]}]),
    ([{"addresses": _addresses("5.6.7.8"), "ports": [{"port": 111}]},
      {"notReadyAddresses": _addresses("1.2.3.4"), "ports": [{"port": 111}]}],
     [{"addresses": _addresses("5.6.7.8"), "notReadyAddresses": _addresses("1.2.3.4"),
       "ports": [{"port": 111}]}]),
    ([{"addresses": _addresses("1.2.3.4"), "ports": [{"port": 111}]},
      {"addresses": _addresses("5.6.7.8"), "ports": [{"port": 222}]}],
     [{"addresses": _addresses("1.2.3.4"), "ports": [{"port": 111}]},
      {"addresses": _addresses("5.6.7.8"), "ports": [{"port": 222}]}]),
    ([{"addresses": _addresses("1.2.3.4")}], [{"addresses": _addresses("1.2.3.4")}]),
])
def test_repack_subsets(given: list[dict[str, Any]], expect: list[dict[str, Any]]) -> None:
    assert repack_subsets(given) == expect


def _many(prefix: str, n: int) -> list[dict[str, str]]:
    return [{"ip": f"10.{prefix}.{i // 250}.{i % 250 + 1}"} for i in range(n)]


# endpoints_controller_test.go TestTruncateEndpoints: (ready, not ready) per subset -> after.
@pytest.mark.parametrize(("sizes", "want"), [
    ([(600, 0), (400, 0)], None),                       # exactly at capacity: untouched
    # 1001 ready: ceil(600/1001*1000) = 600, then the last subset gets the 400 left
    ([(600, 0), (401, 0)], [(600, 0), (400, 0)]),
    # 800 ready fit; 200 of the 500 not ready, by share: ceil(200/500*200), ceil(300/500*200)
    ([(500, 200), (300, 300)], [(500, 80), (300, 120)]),
    ([(1200, 50)], [(1000, 0)]),                        # too many ready: not-ready all go
])
def test_truncate_endpoints(sizes: list[tuple[int, int]], want: list[tuple[int, int]] | None) -> None:
    subsets = [{"addresses": _many(f"{i}", r), "notReadyAddresses": _many(f"{i + 100}", n)}
               for i, (r, n) in enumerate(sizes)]
    ep = {"subsets": subsets}
    truncated = truncate_endpoints(ep)
    assert truncated == (want is not None)
    got = [(len(s["addresses"]), len(s["notReadyAddresses"])) for s in ep["subsets"]]
    assert got == (want if want is not None else sizes)
    assert sum(r + n for r, n in got) <= MAX_CAPACITY


# ------------------------------------------------------------------ served, deprecated

def test_endpoints_are_served_with_the_deprecation_warning_and_validated() -> None:
    c = Cluster(nodes=0, components=[])
    c.client.create({"apiVersion": "v1", "kind": "Endpoints",
                     "metadata": {"name": "db", "namespace": "default"},
                     "subsets": [{"addresses": _addresses("10.244.1.5", "10.244.2.3"),
                                  "notReadyAddresses": _addresses("10.244.1.9"),
                                  "ports": [{"name": "pg", "port": 5432}]}]})
    out = c.kubectl("get endpoints").splitlines()
    assert out[0] == WARNING
    assert out[1].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert out[2].split()[:2] == ["db", "10.244.1.5:5432,10.244.2.3:5432"]
    assert c.get("endpoints", "db")["subsets"][0]["ports"] == [
        {"name": "pg", "port": 5432, "protocol": "TCP"}]  # SetDefaults_Endpoints
    described = c.kubectl("describe ep db").splitlines()
    assert described[0] == WARNING
    assert [line.split(None, 1) for line in described[5:12]] == [
        ["Subsets:"], ["Addresses:", "10.244.1.5,10.244.2.3"], ["NotReadyAddresses:", "10.244.1.9"],
        ["Ports:"], ["Name", "Port  Protocol"], ["----", "----  --------"], ["pg", "5432  TCP"]]
    with pytest.raises(ApiError) as refused:
        c.client.create({"apiVersion": "v1", "kind": "Endpoints",
                         "metadata": {"name": "bad", "namespace": "default"},
                         "subsets": [{"addresses": _addresses("127.0.0.1"),
                                      "ports": [{"port": 0}, {"name": "b", "port": 3}]}, {}]})
    assert refused.value.code == 422
    assert refused.value.message == (
        'Endpoints "bad" is invalid: [subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may '
        "not be in the loopback range (127.0.0.0/8, ::1/128), subsets[0].ports[0].name: Required "
        "value, subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, "
        "inclusive, subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`]")
    assert [e["metadata"]["name"] for e in c.get("endpoints")] == ["db"]  # nothing was stored


def test_only_the_anatomy_runs_the_endpoints_controller() -> None:
    c = Cluster(nodes=1, anatomy=False)
    assert "endpoints-controller" not in c.components["controller-manager"].controllers
    c.kubectl("create deployment web --image=nginx --replicas=1 --port=80")
    c.client.create(_service())
    c.run(20)
    assert c.get("endpoints") == []


# ------------------------------------------------------------------ the controller

def _service(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "default", "labels": {"tier": "front"}},
            "spec": {"selector": {"app": "web"},
                     "ports": [{"name": "http", "port": 80, "targetPort": "http"}], **spec}}


def _pod(name: str, ready: bool = True) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "nginx",
                                 "ports": [{"name": "http", "containerPort": 8080}]}
    if not ready:
        container["readinessProbe"] = {"exec": {"command": ["false"]}, "periodSeconds": 1}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [container]}}


@pytest.fixture(scope="module")
def kind() -> Cluster:
    c = Cluster(nodes=2, anatomy=True)
    c.run(20)
    c.client.create(_service())
    for name in ("a", "b"):
        c.client.create(_pod(name))
    c.run(30)
    return c


def _ips(c: Cluster, *names: str) -> list[str]:
    return sorted(c.get("pods", n)["status"]["podIP"] for n in names)


def test_the_endpoints_list_ready_and_not_ready_pods_on_the_resolved_port(kind: Cluster) -> None:
    ep = kind.get("endpoints", "web")
    assert ep["metadata"]["labels"] == {"tier": "front"}  # the Service's
    # The last write came from the pods turning Ready: the earliest of those transitions.
    ready_times = [c["lastTransitionTime"] for p in kind.get("pods", label_selector="app=web")
                   for c in p["status"]["conditions"] if c["type"] == "Ready"]
    assert ep["metadata"]["annotations"] == {ENDPOINTS_LAST_CHANGE_TRIGGER_TIME: min(ready_times)}
    kind.client.create(_pod("slow", ready=False))
    kind.run(20)
    [subset] = kind.get("endpoints", "web")["subsets"]
    assert [a["ip"] for a in subset["addresses"]] == _ips(kind, "a", "b")
    assert [a["ip"] for a in subset["notReadyAddresses"]] == _ips(kind, "slow")
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]  # targetPort by name
    ref = subset["addresses"][0]["targetRef"]
    pod = next(p for p in kind.get("pods", label_selector="app=web")
               if p["status"]["podIP"] == subset["addresses"][0]["ip"])
    assert ref == {"kind": "Pod", "namespace": "default", "name": pod["metadata"]["name"],
                   "uid": pod["metadata"]["uid"]}
    assert subset["addresses"][0]["nodeName"] == pod["spec"]["nodeName"]
    table = kind.kubectl("get ep web").splitlines()
    assert table[0] == WARNING
    assert table[2].split()[1] == ",".join(f"{ip}:8080" for ip in _ips(kind, "a", "b"))


def test_a_deleted_pod_leaves_and_a_deleted_endpoints_comes_back(kind: Cluster) -> None:
    kind.client.delete("pods", "b", "default")
    kind.run_until(lambda: [a["ip"] for s in kind.get("endpoints", "web")["subsets"]
                            for a in s.get("addresses") or []] == _ips(kind, "a"), timeout=60)
    kind.client.delete("endpoints", "web", "default")
    kind.run(5)
    assert [a["ip"] for a in kind.get("endpoints", "web")["subsets"][0]["addresses"]] == _ips(kind, "a")


def test_selector_less_services_keep_their_hand_made_endpoints_a_deleted_service_takes_its_own(
        kind: Cluster) -> None:
    kind.client.create({"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": "external", "namespace": "default"},
                        "spec": {"ports": [{"port": 5432}]}})
    kind.client.create({"apiVersion": "v1", "kind": "Endpoints",
                        "metadata": {"name": "external", "namespace": "default"},
                        "subsets": [{"addresses": _addresses("192.0.2.10"), "ports": [{"port": 5432}]}]})
    kind.run(5)
    assert kind.get("endpoints", "external")["subsets"][0]["addresses"] == _addresses("192.0.2.10")
    # --- the EndpointSlice mirroring controller: a slice for them, owned by them; the
    # `kubernetes` Endpoints carry skip-mirror and keep only the API server's own slice.
    def mirrored(name: str) -> list[dict[str, Any]]:
        return [s for s in kind.get("endpointslices", label_selector=f"kubernetes.io/service-name={name}")
                if s["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by") ==
                "endpointslicemirroring-controller.k8s.io"]
    [mirror] = mirrored("external")
    assert mirror["metadata"]["name"].startswith("external-")
    assert mirror["endpoints"] == [{"addresses": ["192.0.2.10"], "conditions": {"ready": True}}]
    assert mirror["ports"] == [{"name": "", "port": 5432, "protocol": "TCP"}]
    owner = mirror["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Endpoints", "external", True)
    assert mirrored("kubernetes") == []
    ep = kind.get("endpoints", "external")
    ep["subsets"][0]["notReadyAddresses"] = _addresses("192.0.2.11")
    kind.client.update(ep)
    kind.run(5)
    assert [e["conditions"]["ready"] for e in mirrored("external")[0]["endpoints"]] == [True, False]
    kind.client.delete("services", "external", "default")
    kind.run(5)
    assert mirrored("external") == []
    kind.client.delete("services", "web", "default")
    kind.run(5)
    with pytest.raises(ApiError) as gone:
        kind.client.get("endpoints", "web", namespace="default")
    assert gone.value.code == 404


def test_past_1000_addresses_the_endpoints_are_truncated_and_annotated() -> None:
    c = Cluster(nodes=0, components=[])
    c.client.create(_service())
    for i in range(MAX_CAPACITY + 1):
        c.client.create({**_pod(f"p{i}"), "status": {}})
    # The pods need IPs and readiness: write their status as a kubelet would.
    for i in range(MAX_CAPACITY + 1):
        pod = c.client.get("pods", f"p{i}", namespace="default")
        pod["status"] = {"phase": "Running", "podIP": f"10.244.{i // 250}.{i % 250 + 1}",
                         "podIPs": [{"ip": f"10.244.{i // 250}.{i % 250 + 1}"}],
                         "conditions": [{"type": "Ready", "status": "True"}]}
        c.client.update_status(pod)
    c.add_component("endpoints", lambda ctx: ControllerManager(ctx, ["endpoints-controller"]))
    c.run(30)
    ep = c.get("endpoints", "web")
    assert ep["metadata"]["annotations"][ENDPOINTS_OVER_CAPACITY] == "truncated"
    assert sum(len(s.get("addresses") or []) for s in ep["subsets"]) == MAX_CAPACITY
