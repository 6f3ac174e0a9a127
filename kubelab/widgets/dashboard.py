"""Dashboard: the whole cluster on one screen, and every way to break it.

    Dashboard(c)

From the top: run controls (play / pause / step, speed, virtual time); the failure panel (a
button per fault the cluster can suffer); the object graph beside the nodes (each with its
pods and requested vs allocatable); `kubectl get pods -o wide`; the event stream.

Each part is a panel of its own (RunControls, FailurePanel, GraphPanel, NodesView, PodsTable,
EventStream) that a notebook can show alone. The dashboard refreshes every part after each
tick and each fault, and, once displayed in a notebook, after every cell that changed the
cluster (an IPython post_run_cell hook), so it stays live while you type c.run(60) below it.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.api.errors import ApiError
from kubelab.widgets.failure_panel import FailurePanel
from kubelab.widgets.graph_panel import GraphPanel
from kubelab.widgets.nodes_view import NodesView
from kubelab.widgets.run_controls import RunControls
from kubelab.widgets.tables import EventStream, PodsTable

__all__ = ["Dashboard"]


class Dashboard:
    """cluster: a kubelab.Cluster. namespace: whose pods, graph and events to show.
    graph=False leaves the object graph out (it needs Graphviz's `dot`); events: how many of
    the newest events to list; speed and step: the run controls' starting values."""

    def __init__(self, cluster: Any, namespace: str = "default", *, graph: bool = True,
                 events: int = 12, speed: float = 10.0, step: float = 10.0) -> None:
        self.cluster, self.namespace = cluster, namespace
        self.refreshes = 0
        self._seen: tuple[float, int] = (-1.0, -1)
        self._hooked = False
        self.run_controls = RunControls(cluster, on_tick=self.refresh, speed=speed, step=step)
        self.failures = FailurePanel(cluster, namespace, on_change=self.refresh)
        self.graph = GraphPanel(cluster, namespace) if graph else None
        self.nodes = NodesView(cluster)
        self.pods = PodsTable(cluster, namespace)
        self.events = EventStream(cluster, tail=events, namespace=namespace)
        self.error = W.HTML()
        middle = [self.nodes.widget] if self.graph is None else [
            W.Box([self.graph.widget], layout=W.Layout(flex="1 1 55%", min_width="0", overflow="auto")),
            W.Box([self.nodes.widget], layout=W.Layout(flex="1 1 45%", min_width="0"))]
        self.widget = W.VBox([
            W.HTML(f"<b>kubelab dashboard</b> · namespace <code>{html.escape(namespace)}</code>"),
            self.run_controls.widget,
            W.HTML("<b>break something</b>"), self.failures.widget,
            W.HBox(middle, layout=W.Layout(width="100%")),
            self.error, self.pods.widget, self.events.widget,
        ], layout=W.Layout(border="1px solid #d5d8dc", padding="6px"))
        self.widget.add_class("kubelab-dashboard")
        self._seen = self._marker()

    def _marker(self) -> tuple[float, int]:
        return (float(self.cluster.clock.now), len(self.cluster.trace))

    def refresh(self) -> None:
        """Look at the cluster again and redraw every part."""
        problems = []
        parts: list[Any] = [self.run_controls, self.failures, self.graph, self.nodes, self.pods,
                            self.events]
        for part in parts:
            if part is None:
                continue
            try:
                part.refresh()
            except ApiError as err:  # the API server is down: say so, keep the last picture
                problems.append(f"{type(part).__name__}: {err.kubectl_message()}")
        self.error.value = "".join(f"<div style='color:#c0392b'>{html.escape(p)}</div>"
                                   for p in problems)
        self.refreshes += 1
        self._seen = self._marker()

    def after_cell(self, result: Any = None) -> None:
        """IPython's post_run_cell hook: refresh if the cell moved time or did anything."""
        if self._marker() != self._seen:
            self.refresh()

    def _follow_cells(self) -> None:
        if self._hooked:
            return
        try:
            from IPython import get_ipython
        except ImportError:  # not in IPython: nothing to follow
            return
        shell = get_ipython()
        if shell is not None:
            shell.events.register("post_run_cell", self.after_cell)
            self._hooked = True

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]
        self._follow_cells()
