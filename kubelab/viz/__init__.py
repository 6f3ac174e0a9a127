"""Read-only views over a Cluster, plus the hollow-node stand-in for kubelets.

object_graph(cluster): the Deployment -> ReplicaSet -> Pod -> Node hierarchy as a networkx
graph; to_dot / render_svg / GraphView draw it with Graphviz's `dot`. mark_pods_ready and
keep_pods_ready play the kubelet's part on hollow nodes (see hollow.py for why).
"""

from kubelab.viz.graph import DEFAULT_KINDS, node_id, object_graph
from kubelab.viz.hollow import keep_pods_ready, mark_pods_ready
from kubelab.viz.render import INSTALL_HELP, GraphView, GraphvizMissing, render_svg, to_dot

__all__ = [
    "DEFAULT_KINDS",
    "INSTALL_HELP",
    "GraphView",
    "GraphvizMissing",
    "keep_pods_ready",
    "mark_pods_ready",
    "node_id",
    "object_graph",
    "render_svg",
    "to_dot",
]
