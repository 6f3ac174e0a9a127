"""Hollow kubelets (kubemark): the real kubelet on a runtime that does nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.client.component import ComponentContext
from kubelab.kubelet import ContainerRuntime, Kubelet
from kubelab.kubelet.hollow import HollowKubelet, HollowRuntime, get_hollow_kubelet_config


def deployment(replicas: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels,
                                               "annotations": annotations or {}},
                                  "spec": {"containers": [{"name": "web",
                                                           "image": "nginx:1.27"}]}}}}


def running(c: Cluster) -> list[dict[str, Any]]:
    return [p for p in c.get("pods") if p.get("status", {}).get("phase") == "Running"]


def test_a_hollow_cluster_runs_pods_to_running_with_real_kubelets() -> None:
    c = Cluster(nodes=3, hollow=True)
    assert all(isinstance(c.components[f"kubelet/node-{i}"], HollowKubelet) for i in (1, 2, 3))
    assert all(isinstance(r, HollowRuntime) for r in c.runtimes.values())
    c.run(5)
    nodes = c.get("nodes", namespace=None)
    # the kubelets registered their own Nodes: no hollow-node annotation, Ready, heartbeating
    assert [n["metadata"]["name"] for n in nodes] == ["node-1", "node-2", "node-3"]
    assert all("kubelab.dev/hollow-node" not in (n["metadata"].get("annotations") or {})
               for n in nodes)
    c.apply(deployment(6))
    c.run_until(lambda: len(running(c)) == 6, timeout=60)
    pods = running(c)
    assert {p["spec"]["nodeName"] for p in pods} == {"node-1", "node-2", "node-3"}
    statuses = [p["status"]["containerStatuses"][0] for p in pods]
    assert all(s["ready"] and s["state"].get("running") for s in statuses)
    assert all(p["status"]["podIP"].startswith("10.244.") for p in pods)
    leases = c.get("leases", namespace="kube-node-lease")
    assert len(leases) == 3


def test_hollow_containers_ignore_scripted_behaviour_and_pull_at_once() -> None:
    c = Cluster(nodes=1, hollow=True)
    c.run(2)
    c.faults.break_registry("nginx", "unauthorized")  # the fake image service never fails
    c.apply(deployment(1, {"kubelab.dev/behavior": "exit=1,code=1"}))
    c.run_until(lambda: len(running(c)) == 1, timeout=30)
    c.run(60)
    pod = running(c)[0]
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0


def test_hollow_pods_start_faster_than_full_ones() -> None:
    def time_to_running(hollow: bool) -> float:
        c = Cluster(nodes=1, hollow=hollow, seed=3)
        c.run(2)
        c.apply(deployment(1))
        return c.run_until(lambda: len(running(c)) == 1, timeout=60)

    assert time_to_running(True) < time_to_running(False)


def test_kubemark_configuration() -> None:
    config = get_hollow_kubelet_config()
    assert (config.sync_frequency, config.node_status_update_frequency,
            config.node_status_report_frequency) == (10.0, 10.0, 300.0)


def test_a_hollow_kubelet_needs_a_hollow_runtime() -> None:
    c = Cluster(nodes=0, components=[])
    runtime = ContainerRuntime("n", c.registry, c.clock, c.rand)
    ctx = ComponentContext("kubelet/n", c.client, c.clock, c.rand, c.trace,
                           {"metadata": {"name": "n"}})
    with pytest.raises(TypeError, match="HollowRuntime"):
        HollowKubelet(ctx, runtime)
    assert isinstance(Kubelet(ctx, runtime), Kubelet)
