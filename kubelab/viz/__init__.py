"""Read-only views over a Cluster, plus the hollow-node stand-in for kubelets.

object_graph(cluster): the Deployment -> ReplicaSet -> Pod -> Node hierarchy as a networkx
graph; to_dot / render_svg / GraphView draw it with Graphviz's `dot`. mark_pods_ready and
keep_pods_ready play the kubelet's part on hollow nodes (see hollow.py for why).
SequenceDiagram draws "what happened after kubectl apply" from the trace; Timeline draws pods by
phase, ready replicas and faults over virtual time; plot_traffic draws c.traffic()'s requests.
quiet/peek read without leaving trace records.
"""

from kubelab.viz.graph import DEFAULT_KINDS, node_id, object_graph
from kubelab.viz.hollow import keep_pods_ready, mark_pods_ready
from kubelab.viz.observe import peek, quiet
from kubelab.viz.render import INSTALL_HELP, GraphView, GraphvizMissing, render_svg, to_dot
from kubelab.viz.sequence import SequenceDiagram, messages, render_sequence
from kubelab.viz.timeline import Timeline, render_timeline
from kubelab.viz.traffic import Chart, plot_traffic

__all__ = [
    "DEFAULT_KINDS",
    "INSTALL_HELP",
    "Chart",
    "GraphView",
    "GraphvizMissing",
    "SequenceDiagram",
    "Timeline",
    "keep_pods_ready",
    "mark_pods_ready",
    "messages",
    "node_id",
    "object_graph",
    "peek",
    "plot_traffic",
    "quiet",
    "render_sequence",
    "render_svg",
    "render_timeline",
    "to_dot",
]
