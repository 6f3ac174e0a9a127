"""The EndpointSlice controller and its reconciler: slices of at most 100 endpoints, the
ready/serving/terminating conditions, low churn, a placeholder for an empty Service, a stale
cache refused, others' edits undone."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.controllers.endpointslice import StaleInformerCache, reconcile
from kubelab.controllers.endpointslice.utils import LABEL_MANAGED_BY, LABEL_SERVICE_NAME

SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "web", "namespace": "default", "uid": "svc-uid", "labels": {"tier": "x"}},
    "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.9",
             "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}}


def pod(i: int, ready: bool = True, deleting: bool = False, ip: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"web-{i:04d}", "namespace": "default", "uid": f"uid-{i}",
                            "labels": {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:01:00Z"
    return {"metadata": meta,
            "spec": {"nodeName": "node-1", "containers": [
                {"name": "c", "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
            "status": {"phase": "Running", "podIP": ip if ip is not None else f"10.244.{i // 250}.{i % 250}",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def named(plan_slices: list[dict[str, Any]], prefix: str = "web-s") -> list[dict[str, Any]]:
    """Give planned creates names and uids, as the API server would."""
    for i, s in enumerate(plan_slices):
        s["metadata"]["name"] = f"{prefix}{i}"
        s["metadata"]["uid"] = f"{prefix}{i}"
    return plan_slices


def test_endpoints_carry_conditions_ports_and_labels() -> None:
    plan = reconcile(SERVICE, [pod(1), pod(2, ready=False), pod(3, deleting=True), pod(4, ip="")], [])
    assert len(plan.create) == 1 and not plan.update and not plan.delete
    s = plan.create[0]
    assert s["metadata"]["generateName"] == "web-"
    assert s["metadata"]["labels"] == {"tier": "x", LABEL_SERVICE_NAME: "web",
                                       LABEL_MANAGED_BY: "endpointslice-controller.k8s.io"}
    assert s["metadata"]["ownerReferences"][0]["uid"] == "svc-uid"
    assert s["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]  # named targetPort
    conditions = {e["targetRef"]["name"]: e["conditions"] for e in s["endpoints"]}
    assert conditions == {  # no IP: not an endpoint; terminating: kept, not ready, still serving
        "web-0001": {"ready": True, "serving": True, "terminating": False},
        "web-0002": {"ready": False, "serving": False, "terminating": False},
        "web-0003": {"ready": False, "serving": True, "terminating": True}}


def test_at_most_100_endpoints_per_slice_and_a_placeholder_when_empty() -> None:
    plan = reconcile(SERVICE, [pod(i) for i in range(250)], [])
    assert sorted(len(s["endpoints"]) for s in plan.create) == [50, 100, 100]
    empty = reconcile(SERVICE, [], [])
    assert len(empty.create) == 1 and empty.create[0]["endpoints"] == [] and \
        empty.create[0]["ports"] == []
    # the placeholder is kept, not deleted and made again
    assert reconcile(SERVICE, [], named(empty.create)).writes == 0


def test_minimal_churn() -> None:
    slices = named(reconcile(SERVICE, [pod(i) for i in range(150)], []).create)
    # nothing changed: nothing written
    assert reconcile(SERVICE, [pod(i) for i in range(150)], slices).writes == 0
    # one pod turns unready: one slice updated in place, the other untouched
    plan = reconcile(SERVICE, [pod(i, ready=i != 7) for i in range(150)], slices)
    assert (len(plan.create), len(plan.update), len(plan.delete)) == (0, 1, 0)
    assert plan.update[0]["metadata"]["name"] == slices[0]["metadata"]["name"]
    # one new pod goes into the slice with room, not into a new slice
    plan = reconcile(SERVICE, [pod(i) for i in range(151)], slices)
    assert (len(plan.create), len(plan.update)) == (0, 1)
    assert len(plan.update[0]["endpoints"]) == 51
    # the ports change: the old slices are recycled as updates, not deleted and created
    changed = {**SERVICE, "spec": {**SERVICE["spec"], "ports": [
        {"name": "http", "port": 80, "targetPort": 9090, "protocol": "TCP"}]}}
    plan = reconcile(changed, [pod(i) for i in range(150)], slices)
    assert (len(plan.create), len(plan.update), len(plan.delete)) == (0, 2, 0)
    assert all(s["ports"][0]["port"] == 9090 for s in plan.update)


def deployment(replicas: int = 3, probe: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": "nginx:1.27",
                                 "ports": [{"containerPort": 8080, "name": "http"}]}
    if probe:
        container["readinessProbe"] = {"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1,
                                       "failureThreshold": 1}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [container]}}}}


def service() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}}


def ready_addresses(c: Cluster) -> list[str]:
    slices = c.get("endpointslices", label_selector=f"{LABEL_SERVICE_NAME}=web")
    return sorted(e["addresses"][0] for s in slices for e in s.get("endpoints") or []
                  if e["conditions"]["ready"])


def test_the_controller_follows_pods_and_undoes_foreign_edits() -> None:
    c = Cluster(nodes=2)
    c.apply(deployment())
    c.apply(service())
    c.run_until(lambda: len(ready_addresses(c)) == 3, timeout=60)
    pods = {p["status"]["podIP"] for p in c.get("pods")}
    assert set(ready_addresses(c)) == pods
    # someone empties the slice by hand: the controller puts the endpoints back
    s = c.get("endpointslices", label_selector=f"{LABEL_SERVICE_NAME}=web")[0]
    s["endpoints"] = []
    c.client.update(s)
    c.run_until(lambda: len(ready_addresses(c)) == 3, timeout=10)
    # a crash loses nothing: the restarted controller relists and writes nothing new
    # (the controller manager's: the API servers keep the `kubernetes` Service's slice)
    writes = [r for r in c.apiserver.audit if r.resource == "endpointslices" and r.verb != "list"
              and r.verb != "watch" and r.user_agent == "controller-manager"]
    c.faults.crash("controller-manager")
    c.faults.restart("controller-manager")
    c.run(10)
    after = [r for r in c.apiserver.audit if r.resource == "endpointslices" and r.verb != "list"
             and r.verb != "watch" and r.user_agent == "controller-manager"]
    assert len(after) == len(writes)
    # the Service goes: its slices go with it (the garbage collector, by ownerReference)
    c.client.delete("services", "web")
    c.run_until(lambda: not c.get("endpointslices", label_selector=f"{LABEL_SERVICE_NAME}=web"),
                timeout=30)


def test_a_stale_slice_cache_is_refused_until_it_catches_up() -> None:
    c = Cluster(nodes=1)
    c.apply(deployment(replicas=1))
    c.apply(service())
    c.run_until(lambda: len(ready_addresses(c)) == 1, timeout=60)
    controller = c.components["controller-manager"]["endpointslice-controller"]
    live = c.get("endpointslices", label_selector=f"{LABEL_SERVICE_NAME}=web")[0]
    tracker = controller.tracker
    # pretend we wrote a newer generation than the cache shows
    newer = live["metadata"]["generation"] + 1
    tracker.update({**live, "metadata": {**live["metadata"], "generation": newer}})
    with pytest.raises(StaleInformerCache, match="EndpointSlice informer cache is out of date"):
        controller.sync_service("default/web")
