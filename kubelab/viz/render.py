"""Draw an object graph: DOT text, SVG through Graphviz's `dot`, inline in a notebook.

    g = object_graph(cluster)
    to_dot(g, cluster_by="node")        # text for dot, or for learners to read
    render_svg(g)                       # the picture, or GraphvizMissing with install help
    GraphView(g)                        # shows itself in Jupyter (_repr_mimebundle_)

Pods are coloured by phase; pods not ready are drawn lighter; anything being deleted has a
dashed outline; a missing owner (a dangling ownerReference) is drawn dotted. A legend says so
in the picture. With cluster_by="node" each node is one box, its pods inside it: the box is
the Node object (its name, Ready or NotReady, cordoned), not a second shape beside it.
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


def _legend(graph: nx.DiGraph) -> str:
    """One table node that says what the shapes, colours and lines in this picture mean."""
    def swatch(colour: str, text: str) -> str:
        return f'<tr><td bgcolor="{colour}" width="16"> </td><td align="left">{text}</td></tr>'
    present = [a for _, a in graph.nodes(data=True)]
    kinds = {a.get("kind") for a in present}
    rows = [swatch(KIND_COLOURS[k], f"{k} (box)") for k in ("Deployment", "ReplicaSet") if k in kinds]
    pods = {(a.get("phase"), bool(a.get("ready"))) for a in present if a.get("kind") == "Pod"}
    if ("Running", True) in pods:
        rows.append(swatch(PHASE_COLOURS["Running"], "Pod Running and ready"))
    if ("Running", False) in pods:
        rows.append(swatch(NOT_READY_RUNNING, "Pod Running, not ready"))
    rows += [swatch(PHASE_COLOURS[phase], f"Pod {phase}") for phase in PHASE_COLOURS
             if phase != "Running" and any(p == phase for p, _ in pods)]
    for phase in ("Ready", "NotReady"):
        if any(a.get("kind") == "Node" and a.get("phase") == phase for a in present):
            rows.append(swatch(PHASE_COLOURS[phase], f"Node {phase}"))
    if any(a.get("deleting") for a in present):
        rows.append('<tr><td>- -</td><td align="left">dashed outline: being deleted</td></tr>')
    if any(a.get("missing") for a in present):
        rows.append('<tr><td>· ·</td><td align="left">dotted: not found (a dangling reference)</td></tr>')
    edges = {(a.get("kind"), bool(a.get("controller"))) for *_, a in graph.edges(data=True)}
    if ("owns", True) in edges:
        rows.append('<tr><td>—▶</td><td align="left">owner → dependent (its controller)</td></tr>')
    if ("owns", False) in edges:
        rows.append('<tr><td>-▶</td><td align="left">owner, not its controller</td></tr>')
    table = ('<table border="0" cellborder="0" cellspacing="1" cellpadding="1">'
             '<tr><td colspan="2" align="left"><b>legend</b></td></tr>' + "".join(rows) + "</table>")
    return f'  "legend" [shape=plaintext, fontsize=8, label=<{table}>];'


def _node_box(index: int, name: str, attrs: dict[str, Any] | None, members: list[str]) -> list[str]:
    """A node's box holding its pods; the box is the Node object when the graph has it."""
    if attrs is None:  # nodes were not listed: the box is only where the pods run
        label, style, fill = f"node {name}", "rounded", "#ffffff"
    else:
        notes = [attrs.get("phase") or ""] + (["cordoned"] if attrs.get("unschedulable") else [])
        if attrs.get("deleting"):
            notes.append("deleting")
        if attrs.get("missing"):
            notes = ["(not found)"]
        label = f"Node {name} · " + ", ".join(n for n in notes if n)
        fill = PHASE_COLOURS.get(attrs.get("phase", ""), "#ffffff")
        style = "rounded,filled" + (",dashed" if attrs.get("deleting") else "")
        if attrs.get("missing"):
            style = "rounded,dotted"
    return [f"  subgraph cluster_{index} {{", f"    label={_quote(label)};",
            f'    style="{style}"; color="#7f8c8d"; fillcolor="{fill}";',
            *("  " + member for member in members), "  }"]


def to_dot(graph: nx.DiGraph, cluster_by: str | None = "node", title: str = "",
           legend: bool = True) -> str:
    """DOT text. cluster_by: "node" (each node a box around its pods), "namespace", or None.
    legend: draw the table that says what shapes and colours mean."""
    if cluster_by not in ("node", "namespace", None):
        raise ValueError(f'cluster_by must be "node", "namespace" or None, got {cluster_by!r}')
    lines = ["digraph objects {", "  rankdir=LR;", '  graph [fontname="Helvetica", fontsize=11];',
             '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    if title:
        lines.append(f"  label={_quote(title)}; labelloc=t;")
    by_node = cluster_by == "node"
    nodes = {a.get("name", ""): a for _, a in graph.nodes(data=True) if a.get("kind") == "Node"}
    hosting = {a.get("node") for _, a in graph.nodes(data=True) if a.get("kind") == "Pod"}
    groups: dict[str, list[str]] = {}
    loose: list[str] = []
    for nid, attrs in sorted(graph.nodes(data=True)):
        kind = attrs.get("kind")
        if by_node and kind == "Node" and attrs.get("name") in hosting:
            continue  # drawn as the box around its pods
        if by_node:
            key = attrs.get("node") if kind == "Pod" else None
        elif cluster_by == "namespace":
            key = attrs.get("namespace") or None
        else:
            key = None
        (groups.setdefault(key, []) if key else loose).append(_node_line(nid, attrs))
    lines += loose
    for i, (key, members) in enumerate(sorted(groups.items())):
        if by_node:
            lines += _node_box(i, key, nodes.get(key), members)
        else:
            lines += [f"  subgraph cluster_{i} {{", f"    label={_quote(f'namespace {key}')};",
                      '    style="rounded"; color="#7f8c8d";', *("  " + m for m in members), "  }"]
    if legend and graph.number_of_nodes():
        lines.append(_legend(graph))
    for src, dst, attrs in sorted(graph.edges(data=True)):
        if attrs.get("kind") == "runs-on" and by_node:
            continue  # the pod is drawn inside its node's box
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
