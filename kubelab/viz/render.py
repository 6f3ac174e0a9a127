"""Draw an object graph: DOT text, SVG through Graphviz's `dot`, inline in a notebook.

    g = object_graph(cluster)
    to_dot(g, cluster_by="node")        # text for dot, or for learners to read
    render_svg(g)                       # the picture, or GraphvizMissing with install help
    GraphView(g)                        # shows itself in Jupyter (_repr_mimebundle_)

Pods are coloured by phase; pods not ready are drawn lighter; anything being deleted has a
dashed outline; a missing owner (a dangling ownerReference) is drawn dotted.
"""

from __future__ import annotations

import html
import shutil
import subprocess
from typing import Any

import networkx as nx

__all__ = ["INSTALL_HELP", "PHASE_COLOURS", "GraphView", "GraphvizMissing", "render_svg", "to_dot"]

PHASE_COLOURS = {"Pending": "#f9e79f", "Running": "#82e0aa", "Succeeded": "#aed6f1",
                 "Failed": "#f1948a", "Unknown": "#d5d8dc", "Ready": "#d6eaf8", "NotReady": "#f5b7b1"}
NOT_READY_RUNNING = "#d5f5e3"
KIND_COLOURS = {"Deployment": "#d2b4de", "ReplicaSet": "#f5cba7"}
INSTALL_HELP = ("Graphviz's `dot` program was not found on PATH, so the graph cannot be drawn.\n"
                "Install Graphviz, then restart the kernel:\n"
                "  Debian/Ubuntu:  sudo apt-get install graphviz\n"
                "  macOS:          brew install graphviz\n"
                "  conda:          conda install -c conda-forge graphviz\n"
                "  (or run `make system-deps`)\n"
                "to_dot(graph) gives the DOT text in the meantime.")


class GraphvizMissing(RuntimeError):
    """`dot` is not installed; the message says how to install it."""

    def __init__(self) -> None:
        super().__init__(INSTALL_HELP)


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label(attrs: dict[str, Any]) -> str:
    kind, name = attrs.get("kind", ""), attrs.get("name", "")
    lines = [f"{kind}", name]
    if kind == "Pod":
        lines.append(f"{attrs.get('phase', '')}{'' if attrs.get('ready') else ' (not ready)'}")
    elif "replicas" in attrs:
        lines.append(f"{attrs.get('ready_replicas', 0)}/{attrs['replicas']} ready")
        if attrs.get("revision"):
            lines[-1] += f", rev {attrs['revision']}"
    if attrs.get("deleting"):
        lines.append("deleting" + (f" [{', '.join(attrs['finalizers'])}]" if attrs.get("finalizers")
                                   else ""))
    if attrs.get("missing"):
        lines.append("(not found)")
    return "\\n".join(line.replace('"', "'") for line in lines)


def _node_line(nid: str, attrs: dict[str, Any]) -> str:
    kind = attrs.get("kind", "")
    fill = KIND_COLOURS.get(kind) or PHASE_COLOURS.get(attrs.get("phase", ""), "#ffffff")
    if kind == "Pod" and attrs.get("phase") == "Running" and not attrs.get("ready"):
        fill = NOT_READY_RUNNING  # running but not (yet) ready: a paler green
    style = ["filled"]
    if attrs.get("deleting"):
        style.append("dashed")
    if attrs.get("missing"):
        style = ["dotted"]
    shape = {"Node": "box3d", "Deployment": "box", "ReplicaSet": "box"}.get(kind, "ellipse")
    return (f"  {_quote(nid)} [label=\"{_label(attrs)}\", shape={shape}, "
            f"style=\"{','.join(style)}\", fillcolor=\"{fill}\"];")


def to_dot(graph: nx.DiGraph, cluster_by: str | None = "node", title: str = "") -> str:
    """DOT text. cluster_by: "node" (each node's pods in a box), "namespace", or None."""
    if cluster_by not in ("node", "namespace", None):
        raise ValueError(f'cluster_by must be "node", "namespace" or None, got {cluster_by!r}')
    lines = ["digraph objects {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    if title:
        lines.append(f"  label={_quote(title)}; labelloc=t;")
    groups: dict[str, list[str]] = {}
    loose: list[str] = []
    for nid, attrs in sorted(graph.nodes(data=True)):
        line = _node_line(nid, attrs)
        if cluster_by == "node":
            key = attrs.get("node") if attrs.get("kind") == "Pod" else \
                attrs.get("name") if attrs.get("kind") == "Node" else None
        elif cluster_by == "namespace":
            key = attrs.get("namespace") or None
        else:
            key = None
        (groups.setdefault(key, []) if key else loose).append(line)
    lines += loose
    for i, (key, members) in enumerate(sorted(groups.items())):
        what = "node" if cluster_by == "node" else "namespace"
        lines += [f"  subgraph cluster_{i} {{", f"    label={_quote(f'{what} {key}')};",
                  '    style="rounded"; color="#7f8c8d";']
        lines += ["  " + member for member in members] + ["  }"]
    for src, dst, attrs in sorted(graph.edges(data=True)):
        if attrs.get("kind") == "runs-on":
            lines.append(f"  {_quote(src)} -> {_quote(dst)} [style=dotted, arrowhead=none, "
                         'color="#7f8c8d"];')
        else:
            style = "solid" if attrs.get("controller") else "dashed"
            lines.append(f"  {_quote(src)} -> {_quote(dst)} [style={style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(graph: nx.DiGraph | str, cluster_by: str | None = "node", title: str = "") -> str:
    """SVG text drawn by `dot` (a graph or DOT text); GraphvizMissing when dot is absent."""
    dot = graph if isinstance(graph, str) else to_dot(graph, cluster_by, title)
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing()
    result = subprocess.run([exe, "-Tsvg"], input=dot.encode(), capture_output=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"dot failed: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout.decode()


class GraphView:
    """A graph that draws itself in Jupyter: SVG when `dot` exists, else the install help.

    .graph is the networkx graph, .dot the DOT text, .svg() the picture."""

    def __init__(self, graph: nx.DiGraph, cluster_by: str | None = "node", title: str = "") -> None:
        self.graph = graph
        self.dot = to_dot(graph, cluster_by, title)

    def svg(self) -> str:
        return render_svg(self.dot)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        try:
            return {"image/svg+xml": self.svg(), "text/plain": repr(self)}
        except GraphvizMissing as err:
            return {"text/html": f"<pre>{html.escape(str(err))}</pre>", "text/plain": str(err)}

    def __repr__(self) -> str:
        return (f"<GraphView {self.graph.number_of_nodes()} objects, "
                f"{self.graph.number_of_edges()} edges>")
