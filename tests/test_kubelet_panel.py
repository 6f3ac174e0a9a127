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
    assert "unknown registry mode" in panel.log.value
    panel.crash(None)
    assert "choose a pod" in panel.log.value


def test_retry_chart_is_an_svg_with_one_dot_per_failed_pull() -> None:
    svg = retry_timeline_svg([(0, 10), (10, 20), (30, 40), (3600 * 6, 300)], title="retries")
    assert svg.startswith("<svg") and svg.count("<circle") == 4 and "retries" in svg and "6h" in svg
