"""The dashboard and its panels, driven without a browser: each control changes the cluster and
the trace, and the views show it."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from kubelab.cluster import Cluster
from kubelab.sim import RealTimeClock
from kubelab.widgets.dashboard import Dashboard
from kubelab.widgets.failure_panel import FailurePanel
from kubelab.widgets.nodes_view import node_rows
from kubelab.widgets.run_controls import INTERVAL_MS, RunControls


def web(replicas: int = 3, cpu: str = "250m") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def running_web(nodes: int = 3, seed: int = 0) -> Cluster:
    c = Cluster(nodes=nodes, seed=seed)
    c.run(2)
    c.apply(web())
    c.run(20)
    return c


def fault_verbs(c: Cluster) -> list[str]:
    return [r.verb for r in c.trace.filter(component="faults")]


def test_buttons_exist_only_for_what_the_cluster_has() -> None:
    bare = FailurePanel(Cluster(nodes=2, seed=1, components=[]))
    assert list(bare.component_buttons) == ["apiserver"]
    assert "kill node" not in bare.buttons and "break registry" not in bare.buttons
    assert {"delete pod", "compact store", "drop watch events"} <= set(bare.buttons)
    scheduled = FailurePanel(Cluster(nodes=2, seed=1, components=["scheduler"]))
    assert list(scheduled.component_buttons) == ["apiserver", "scheduler"]
    full = FailurePanel(Cluster(nodes=2, seed=1))
    assert list(full.component_buttons) == ["apiserver", "controller-manager", "scheduler",
                                            "kube-proxy/control-plane", "kube-proxy/node-1",
                                            "kube-proxy/node-2", "kubelet/control-plane",
                                            "kubelet/node-1", "kubelet/node-2"]
    assert {"kill node", "partition node", "break registry", "crash container"} <= set(full.buttons)


def test_kill_node_button_moves_the_pods_and_every_view_shows_it() -> None:
    c = running_web()
    dash = Dashboard(c, graph=shutil.which("dot") is not None)
    rows = {r.name: r for r in node_rows(c)}
    victim = max((n for n in rows if n.startswith("node-")), key=lambda n: len(rows[n].pods))  # a worker
    # the web pods (its kube-proxy and kindnet pods tolerate the node's taints and stay)
    moving = [name for name, _ in rows[victim].pods if name.startswith("web-")]
    assert moving and f"<code>{moving[0]}</code> Running" in dash.nodes.widget.value
    draws = dash.graph.draws if dash.graph else 0
    dash.failures.node.value = victim
    dash.failures.buttons["kill node"].click()
    assert fault_verbs(c) == ["kill_node"] and not c.runtimes[victim].powered
    assert "powered off" in dash.nodes.widget.value and f"kill_node {victim}" in dash.failures.status.value
    assert dash.failures.actions.lines()[-1].endswith(
        f"kill node {victim}: {victim} powered off: no kubelet, no containers, no heartbeat")
    dash.run_controls.step_size.value = 300.0
    dash.run_controls.step_button.click()
    dash.run_controls.step_button.click()
    assert c.clock.now >= 600
    # The pods that ran there are being evicted; replacements run elsewhere.
    running = [p for p in c.get("pods") if p["status"].get("phase") == "Running"
               and not p["metadata"].get("deletionTimestamp")]
    assert len(running) == 3 and all(p["spec"]["nodeName"] != victim for p in running)
    table = dash.pods.text()
    for pod in moving:
        assert next(line for line in table.splitlines() if line.startswith(pod)).split()[2] == "Terminating"
    assert "TaintManagerEviction" in dash.events.text()
    assert f"Node {victim} status is now: NodeNotReady" in c.kubectl("get events")
    assert "NotReady" in dash.nodes.widget.value or "Unknown" in dash.nodes.widget.value
    if dash.graph is not None:
        assert dash.graph.draws > draws and "<svg" in dash.graph.widget.value
    dash.failures.buttons["revive node"].click()
    assert fault_verbs(c) == ["kill_node", "revive_node"] and c.runtimes[victim].powered


def test_component_buttons_crash_and_restart() -> None:
    c = running_web(nodes=2, seed=3)
    panel = FailurePanel(c)
    button = panel.component_buttons["scheduler"]
    assert button.description == "crash scheduler"
    button.click()
    assert "scheduler" not in c.components and button.description == "restart scheduler"
    button.click()
    assert "scheduler" in c.components and button.description == "crash scheduler"
    assert fault_verbs(c) == ["crash", "restart"]
    assert [r.object for r in c.trace.filter(component="faults")] == ["scheduler", "scheduler"]
    assert panel.actions.lines()[0].startswith(
        "start 9 component(s) running; nodes control-plane, node-1, node-2")
    now = f"t={c.clock.now:g}s"
    assert panel.actions.lines()[1:] == [
        f"{now} toggle scheduler: crashed scheduler",
        f"{now} toggle scheduler: restarted scheduler: it relists and catches up only as virtual time "
        "runs (step or play)"]


def test_apiserver_down_is_shown_and_survived() -> None:
    c = running_web(nodes=2, seed=4)
    dash = Dashboard(c, graph=False)
    dash.failures.component_buttons["apiserver"].click()
    # A dead API server does not answer: the client's connection is refused.
    assert not c.apiserver.running and "The connection to the server kube-apiserver:6443 was " \
        "refused" in dash.error.value
    dash.failures.buttons["delete pod"].click()  # refused while the API server is down
    assert "was refused - did you specify the right host or port?" in dash.failures.actions.lines()[-1]
    assert dash.failures.actions.entries[-1].ok is False
    dash.failures.component_buttons["apiserver"].click()
    assert c.apiserver.running and dash.error.value == ""


def test_delete_pod_and_crash_container_come_back() -> None:
    c = running_web(nodes=2, seed=6)
    dash = Dashboard(c, graph=False)
    victim = dash.failures.pod.value
    assert victim in dash.failures.pod.options
    dash.failures.buttons["delete pod"].click()
    assert fault_verbs(c) == ["delete_pod"]
    deletes = [r for r in c.trace.filter(component="apiserver", verb="delete")
               if r.object == f"pods/default/{victim}"]
    assert deletes and deletes[0].detail["user"] == "kubernetes-admin"
    assert victim not in dash.failures.pod.options  # Terminating pods are not offered
    dash.run_controls.step()
    names = [p["metadata"]["name"] for p in c.get("pods")]
    assert victim not in names and len(names) == 3
    assert all(p["status"].get("phase") == "Running" for p in c.get("pods"))
    target = dash.failures.pod.value
    dash.failures.buttons["crash container"].click()
    dash.run_controls.step()
    restarted = c.get("pods", target)["status"]["containerStatuses"][0]["restartCount"]
    assert restarted == 1 and fault_verbs(c)[-1] == "crash_container"


def test_store_watch_and_registry_rows_call_faults() -> None:
    c = running_web(nodes=2, seed=7)
    panel = FailurePanel(c)
    panel.buttons["compact store"].click()
    assert c.store.compact_revision == c.store.revision
    panel.latency.value = 0.5
    assert c.store.latency == 0.5
    panel.delay.value = 3.0
    panel.buttons["delay watch events"].click()
    assert c.apiserver.watch_interceptor.delay == 3.0
    panel.buttons["heal watch events"].click()
    panel.buttons["drop watch events"].click()
    panel.buttons["heal watch events"].click()
    panel.mode.value = "notfound"
    panel.buttons["break registry"].click()
    c.kubectl("run broken --image=nginx:9.9")
    c.run(10)
    assert c.get("pods", "broken")["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] in (
        "ErrImagePull", "ImagePullBackOff")
    panel.buttons["fix registry"].click()
    assert fault_verbs(c) == ["compact", "slow_store", "delay_watch_events", "heal_watch_events",
                              "drop_watch_events", "heal_watch_events", "break_registry", "fix_registry"]


def test_views_read_quietly_and_follow_cells() -> None:
    c = running_web(nodes=2, seed=8)
    dash = Dashboard(c, graph=shutil.which("dot") is not None)
    before = len(c.trace)
    dash.refresh()
    assert len(c.trace) == before  # looking is not part of the story
    refreshes = dash.refreshes
    dash.after_cell()
    assert dash.refreshes == refreshes  # nothing changed since: no redraw
    draws = dash.graph.draws if dash.graph else 0
    c.kubectl("scale deployment web --replicas=4")
    c.run(5)
    dash.after_cell()
    assert dash.refreshes == refreshes + 1
    assert len([ln for ln in dash.pods.text().splitlines()[1:] if " Running " in ln]) == 4
    if dash.graph is not None:
        assert dash.graph.draws == draws + 1


class _Stub:
    """Just enough of a Cluster for the run controls: a clock and run()."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock

    def run(self, seconds: float) -> None:
        self.clock.run(until=self.clock.now + seconds)


def test_run_controls_play_step_and_speed() -> None:
    c = Cluster(nodes=1, seed=9)
    ticks: list[float] = []
    controls = RunControls(c, on_tick=lambda: ticks.append(c.clock.now), speed=10.0, step=60.0)
    controls.play.value = 1  # what the browser's timer sends
    assert c.clock.now == pytest.approx(10.0 * INTERVAL_MS / 1000)
    controls.play.value = 2
    controls.play.value = 0  # the stop button rewinds: no tick
    assert len(ticks) == 2
    controls.step_button.click()
    assert c.clock.now == pytest.approx(2 * 10.0 * INTERVAL_MS / 1000 + 60)
    assert f"t = {c.clock.now:.1f} s" in controls.time.value
    with pytest.raises(ValueError, match="speed must be one of"):
        RunControls(c, speed=7.0)
    # On a real-time clock, speed is the clock's own: virtual seconds per real second.
    slept: list[float] = []
    real = [0.0]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        real[0] += seconds

    clock = RealTimeClock(speed=1.0, sleep=sleep, monotonic=lambda: real[0])
    for t in (1.0, 2.0, 3.0, 4.0, 5.0):
        clock.call_at(t, lambda: None)
    rt = RunControls(_Stub(clock), speed=2.0)
    assert clock.speed == 2.0
    rt.tick()  # 1 virtual second at 2x: half a real second of waiting
    assert sum(slept) == pytest.approx(0.5)
    rt.pause()
    assert not rt.play.playing
