"""GraphPanel: the live object hierarchy (Deployment -> ReplicaSet -> Pod -> Node).

The graph and its drawing are kubelab.viz's (object_graph, to_dot, render_svg); this panel only
keeps the picture current. Graphviz runs only when the DOT text changed since the last look, so
refreshing an unchanged cluster costs one quiet list per kind and no drawing.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.viz import GraphvizMissing, object_graph, render_svg, to_dot
from kubelab.viz.observe import quiet

__all__ = ["GraphPanel"]

FIT = 'style="max-width:100%;height:auto"'


class GraphPanel:
    """namespace=None draws every namespace; cluster_by: "node", "namespace" or None."""

    def __init__(self, cluster: Any, namespace: str | None = "default",
                 cluster_by: str | None = "node") -> None:
        self.cluster, self.namespace, self.cluster_by = cluster, namespace, cluster_by
        self.dot = ""
        self.draws = 0  # how many times Graphviz ran (tests check that unchanged means no redraw)
        self.widget = W.HTML(layout=W.Layout(overflow="auto", max_width="100%"))
        self.widget.add_class("kubelab-graph")
        self.refresh()

    def refresh(self) -> None:
        with quiet(self.cluster):
            graph = object_graph(self.cluster, namespace=self.namespace)
        dot = to_dot(graph, self.cluster_by)
        if dot == self.dot:
            return
        self.dot = dot
        try:
            # Scale the picture down to the panel's width instead of spilling over its neighbours.
            self.widget.value = render_svg(dot).replace("<svg ", f"<svg {FIT} ", 1)
        except GraphvizMissing as err:
            self.widget.value = f"<pre>{html.escape(str(err))}\n\n{html.escape(dot)}</pre>"
        self.draws += 1

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]
