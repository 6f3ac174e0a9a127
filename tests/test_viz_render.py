"""DOT text, SVG drawn by the real `dot`, and the message when `dot` is missing."""

from __future__ import annotations

import html
import shutil

import pytest

from kubelab.viz import GraphView, GraphvizMissing, object_graph, render_svg, to_dot
from kubelab.viz.render import PHASE_COLOURS
from tests.controllers_helpers import cluster, deployment, replica_sets, settle


def _graph():  # type: ignore[no-untyped-def]
    c = cluster(nodes=2)
    c.apply(deployment(replicas=3))
    settle(c)
    return c, object_graph(c)


def test_dot_text_clusters_pods_by_node_and_colours_by_phase() -> None:
    c, g = _graph()
    dot = to_dot(g, cluster_by="node")
    assert dot.startswith("digraph objects {") and dot.rstrip().endswith("}")
    # One box per node: the box is the Node (name, Ready), no second Node shape inside it.
    assert 'label="Node node-1 · Ready"' in dot and 'label="Node node-2 · Ready"' in dot
    assert '"Node/node-1" [' not in dot and "box3d" not in dot and "runs-on" not in dot
    assert '"legend" [shape=plaintext' in dot and "Pod Running and ready" in dot
    assert dot.count(f'fillcolor="{PHASE_COLOURS["Running"]}"') == 3
    rs = replica_sets(c)[0]["metadata"]["name"]
    assert f'"Deployment/default/web" -> "ReplicaSet/default/{rs}" [style=solid];' in dot
    by_ns = to_dot(g, cluster_by="namespace")
    assert 'label="namespace default"' in by_ns and "Node node-1 ·" not in by_ns
    assert '"Node/node-1" [' in by_ns  # not clustered by node: the Node is a shape of its own
    with pytest.raises(ValueError, match="cluster_by must be"):
        to_dot(g, cluster_by="zone")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_svg_is_drawn_by_dot() -> None:
    _, g = _graph()
    svg = render_svg(g)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    text = html.unescape(svg)
    assert "ReplicaSet" in text and "Node node-1 · Ready" in text and "3/3 ready" in text
    assert "legend" in text
    bundle = GraphView(g)._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]


def test_missing_dot_gives_install_instructions(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    _, g = _graph()
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without Graphviz on it
    with pytest.raises(GraphvizMissing, match="apt-get install graphviz"):
        render_svg(g)
    bundle = GraphView(g)._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "brew install graphviz" in bundle["text/html"] and "conda install" in bundle["text/plain"]


def test_a_node_without_pods_is_one_shape_and_a_kind_left_out_is_not_drawn() -> None:
    c, _ = _graph()
    c.kubectl("cordon node-2")
    c.client.delete("deployments", "web")  # the collector deletes its ReplicaSet and pods
    settle(c)
    g = object_graph(c, kinds=("pods", "nodes"))
    dot = to_dot(g, legend=False)
    assert dot.count("box3d") == 2 and "legend" not in dot and "(not found)" not in dot
    left_out = to_dot(object_graph(c, kinds=("deployments", "replicasets", "pods")), cluster_by=None)
    assert "Node" not in left_out.replace("Node NotReady", "") and "(not found)" not in left_out
