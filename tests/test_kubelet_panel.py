"""The kubelet panel's controls, driven without a browser, and the retry chart."""

from __future__ import annotations

from kubelab.widgets.kubelet_panel import KubeletPanel, retry_timeline_svg
from tests.kubelet_helpers import kubelet_cluster, pod


def test_panel_controls_break_and_mend_nodes_registry_and_containers() -> None:
    c = kubelet_cluster(nodes=2)
    c.apply(pod("web"))
    panel = KubeletPanel(c)
    panel.run(10)
    nodes, pods = panel.rows()
    assert [r[:2] for r in nodes] == [["node-1", "True"], ["node-2", "True"]]
    assert pods == [["web", "node-1", "Running", "running", "0"]]
    panel.crash("web")
    panel.run(10)
    assert panel.rows()[1][0][4] == "1"
    panel.partition("node-2")
    panel.kill("node-1")
    nodes, _ = panel.rows()
    assert nodes[0][4] == "killed, no kubelet" and nodes[1][4] == "partitioned"
    panel.break_registry("", "notfound")
    assert c.registry.mode("anything:1") == "notfound"
    panel.fix_registry("")
    panel.revive("node-1")
    panel.heal("node-2")
    panel.run(10)
    assert [r[4] for r in panel.rows()[0]] == ["ok", "ok"]
    panel.break_registry("nginx", "sideways")                  # refused, in plain words
    assert "unknown registry mode" in panel.actions.lines()[-1] and not panel.actions.entries[-1].ok
    panel.crash(None)
    assert "choose a pod" in panel.actions.lines()[-1]
    assert panel.actions.lines()[0] == "start 2 node(s), all ok, 1 pod(s); the registry: every pull works"
    assert len(panel.actions.lines()) == 1 + 8  # the start, then the newest eight actions
    assert panel.actions.lines()[-4] == "t=50s heal node-2: node-2 can reach the API server again"


def test_retry_chart_is_an_svg_with_one_dot_per_failed_pull() -> None:
    svg = retry_timeline_svg([(0, 10), (10, 20), (30, 40), (3600 * 6, 300)], title="retries")
    assert svg.startswith("<svg") and svg.count("<circle") == 4 and "retries" in svg and "6h" in svg


def test_retry_chart_shows_the_doubling_on_a_log_scale() -> None:
    """10, 20, 40, 80, 160 then the 300 s cap: equal steps up, then one flat run."""
    points, t, window = [], 0.0, 10.0
    for _ in range(180):
        points.append((t, window))
        t, window = t + window, min(window * 2, 300.0)
    svg = retry_timeline_svg(points)
    ys = {}
    for tick in ("10s", "20s", "40s", "80s", "160s", "300s"):
        label = svg.split(f">{tick}</text>")[0].rsplit("<text", 1)[1]
        ys[tick] = float(label.split("y='")[1].split("'")[0])
    gaps = [ys[a] - ys[b] for a, b in (("10s", "20s"), ("20s", "40s"), ("40s", "80s"), ("80s", "160s"))]
    assert max(gaps) - min(gaps) < 0.5 and gaps[0] > 20  # each doubling is the same visible step
    assert svg.count("<circle") == 180 and "log scale" in svg
