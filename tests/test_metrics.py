"""The usage model (kubelet/stats.py), metrics-server (cluster/metrics_server.py), the
aggregated metrics.k8s.io API and `kubectl top`, kubelab's and the real one's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.cluster.metrics_server import Point, rate
from kubelab.kubelet import parse_behavior
from kubelab.kubelet.stats import IDLE_CPU, Usage, resource_metrics, usage_of
from kubelab.serve.server import kubectl_binary

MILLI = 1_000_000  # nanocores


def web(replicas: int = 2, *, cpu_limit: str | None = None, behavior: str = "") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "nginx",
                                 "resources": {"requests": {"cpu": "100m"}}}
    if cpu_limit:
        container["resources"]["limits"] = {"cpu": cpu_limit}
    meta: dict[str, Any] = {"labels": {"app": "web"}}
    if behavior:
        meta["annotations"] = {"kubelab.dev/behavior": behavior}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": meta, "spec": {"containers": [container]}}}}


def cluster(replicas: int = 2, warm: float = 20.0, **kw: Any) -> Cluster:
    # bare: the usage figures the tests quote are web's pods' alone (kind's add-ons, kindnet,
    # kube-proxy, coredns and the static pods, would add theirs to every node and runtime)
    c = Cluster(nodes=2, metrics_server=True, anatomy=False)
    c.client.create(web(replicas, **kw))
    c.clock.run(until=warm)
    return c


def pod_cpu(c: Cluster) -> dict[str, int]:
    """Each web pod's instantaneous CPU, in millicores, from the kubelets' stats."""
    out = {}
    for runtime in c.runtimes.values():
        for sandbox in runtime.sandboxes.values():
            for cont in runtime.pod_containers(sandbox.pod_uid):
                if cont.state == "CONTAINER_RUNNING" and sandbox.labels.get("app") == "web":
                    out[sandbox.name] = usage_of(runtime, cont).cpu // MILLI
    return out


# ---------------------------------------------------------------- the usage model

def test_idle_containers_use_the_idle_cpu_and_memory() -> None:
    c = cluster()
    stats = [p for r in c.runtimes.values() for p in resource_metrics(r).pods]
    assert len(stats) == 2
    # nginx's simulated server holds 8 MiB (kubelet/process/programs.py server): a process's
    # own memory replaces the idle figure; its CPU is idle (it burns none).
    assert all(s.containers[0].memory == 8 * 1024 * 1024 for s in stats)
    assert set(pod_cpu(c).values()) == {IDLE_CPU // MILLI}


def test_a_load_is_shared_evenly_and_follows_the_selector_when_pods_are_added() -> None:
    c = cluster()
    c.faults.load("deployment/web", cpu="800m")
    assert sorted(pod_cpu(c).values()) == [401, 401]  # idle 1m + 400m each
    c.kubectl("scale deployment web --replicas=4")
    c.clock.run(until=c.clock.now + 20)
    assert sorted(pod_cpu(c).values()) == [201] * 4
    c.faults.load("deployment/web", cpu="0")
    assert set(pod_cpu(c).values()) == {1}


def test_cpu_is_capped_at_the_limit_and_a_process_usage_replaces_the_model() -> None:
    c = cluster(cpu_limit="250m")
    c.faults.load("deployment/web", cpu="2")
    assert set(pod_cpu(c).values()) == {250}
    runtime = next(r for r in c.runtimes.values() if r.running())
    container = runtime.running()[0]
    container.usage = Usage(cpu=5000 * MILLI, memory=123)  # `yes > /dev/null` would burn a core
    assert usage_of(runtime, container) == Usage(250 * MILLI, 123)


def test_behavior_sets_idle_usage_and_refuses_a_bad_quantity() -> None:
    w = parse_behavior("cpu=250m,memory=64Mi")
    assert (w.cpu, w.memory) == (250 * MILLI, 64 * 1024 * 1024)
    with pytest.raises(ValueError, match='cpu must be a quantity >= 0, got "lots"'):
        parse_behavior("cpu=lots")


def test_cpu_is_a_counter_of_core_seconds() -> None:
    c = cluster(behavior="cpu=500m")
    runtime = next(r for r in c.runtimes.values() if r.running())
    first = resource_metrics(runtime).pods[0].containers[0].cpu_seconds
    c.clock.run(until=c.clock.now + 10)
    second = resource_metrics(runtime).pods[0].containers[0].cpu_seconds
    assert second - first == pytest.approx(5.0)  # 500m for 10 s
    assert "container_cpu_usage_seconds_total{container=\"app\"" in \
        resource_metrics(runtime).prometheus_text()


# ---------------------------------------------------------------- metrics-server

def test_rate_needs_two_points_and_a_counter_that_did_not_go_back() -> None:
    last = Point(30.0, 12.0, 100)
    assert rate(None, last) is None
    assert rate(Point(30.0, 11.0, 1), last) is None
    assert rate(Point(15.0, 13.0, 1), last) is None  # a restarted container
    m = rate(Point(15.0, 9.0, 1), last)
    assert m is not None and (m.window, m.cpu, m.memory) == (15.0, 200_000_000, 100)


def test_metrics_appear_after_two_scrapes_and_pods_with_a_new_container_are_left_out() -> None:
    c = Cluster(nodes=1, metrics_server=True)
    c.client.create(web(1))
    c.clock.run(until=16)  # one scrape at 15 s: no rate yet
    assert c.client.metrics("list", "pods", "default")["items"] == []
    assert c.kubectl("top pods").startswith("error: metrics not available yet")
    c.clock.run(until=31)
    items = c.client.metrics("list", "pods", "default", label_selector="app=web")["items"]
    # (nginx holds 8 MiB: kubelet/process/programs.py server)
    assert [i["containers"][0]["usage"] for i in items] == [{"cpu": "1m", "memory": "8Mi"}]
    assert items[0]["window"] == "15s" and items[0]["metadata"]["labels"]["app"] == "web"
    assert c.client.metrics("list", "pods", "default", label_selector="app=other")["items"] == []


def test_a_node_whose_kubelet_is_down_has_no_metrics() -> None:
    c = cluster(warm=40)
    c.faults.crash("kubelet/node-2")
    c.clock.run(until=c.clock.now + 16)
    assert [n["metadata"]["name"] for n in c.client.metrics("list", "nodes")["items"]] == ["node-1"]
    with pytest.raises(ApiError, match=r'nodemetrics\.metrics\.k8s\.io "node-2" not found'):
        c.client.metrics("get", "nodes", name="node-2")
    lines = c.kubectl("top nodes").splitlines()
    assert lines[2].split() == ["node-2", "<unknown>", "<unknown>", "<unknown>", "<unknown>"]


def test_without_metrics_server_kubectl_top_says_the_api_is_not_available() -> None:
    c = Cluster(nodes=1)
    out = c.kubectl("top nodes")
    assert (out, out.exit_code) == ("error: Metrics API not available", 1)


def test_an_unavailable_metrics_server_answers_503() -> None:
    c = cluster()
    assert c.metrics_server is not None
    c.metrics_server.running = False
    with pytest.raises(ApiError, match="the server is currently unable to handle the request") as err:
        c.client.metrics("list", "nodes")
    assert err.value.code == 503


# ---------------------------------------------------------------- kubectl top

def test_kubectl_top_prints_upstreams_columns_and_percentages() -> None:
    c = cluster(warm=40)
    c.faults.load("deployment/web", cpu="800m")
    c.clock.run(until=c.clock.now + 31)
    nodes = c.kubectl("top nodes").splitlines()
    assert nodes[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    # 50m of the node's own, 401m of its web pod; allocatable is 4 CPUs and 8Gi
    assert [row.split()[1:] for row in nodes[1:]] == [["451m", "11%", "520Mi", "6%"]] * 2
    pods = c.kubectl("top pods -A --containers --sort-by=cpu").splitlines()
    assert pods[0].split() == ["NAMESPACE", "POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert all(row.split()[3:] == ["401m", "8Mi"] for row in pods[1:])
    assert nodes[0].endswith("   ")  # the tabwriter pads the last cell too
    assert c.kubectl("top pod nope") == \
        'Error from server (NotFound): podmetrics.metrics.k8s.io "default/nope" not found'
    out = c.kubectl("top pods -n empty")
    assert (out, out.exit_code) == ("No resources found in empty namespace.", 0)


@pytest.mark.skipif(kubectl_binary() is None, reason="kubectl is not installed (make installs it)")
def test_the_real_kubectl_top_prints_what_kubelabs_prints(tmp_path: Path) -> None:
    c = cluster(warm=40)

    async def main() -> list[tuple[str, str]]:
        c.serve(port=0, speed=10)
        try:
            return [(await c.server.kubectl(cmd), cmd) for cmd in
                    ("top nodes", "top pods", "top pods -A --containers")]
        finally:
            await c.server.stop()

    for real, cmd in asyncio.run(main()):
        ours = c.kubectl(cmd)
        # the same rows; the values may differ by the scrapes the served seconds allowed
        assert [line.split()[0] for line in real.splitlines()] == \
            [line.split()[0] for line in ours.splitlines()], cmd
        assert real.splitlines()[0] == ours.splitlines()[0], cmd


def test_what_a_containers_command_burns_is_what_kubectl_top_shows() -> None:
    """The process model's usage (`yes > /dev/null` burns a core) feeds the usage model, capped
    at the container's CPU limit; memory stays the idle figure."""
    c = Cluster(nodes=1, metrics_server=True)
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "burn"}, "spec": {"containers": [
        {"name": "c", "image": "busybox", "command": ["sh", "-c", "yes > /dev/null"],
         "resources": {"limits": {"cpu": "500m"}}}]}})
    c.run(60)
    assert c.kubectl("top pod burn").splitlines()[1].split() == ["burn", "500m", "4Mi"]
