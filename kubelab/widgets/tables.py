"""kubectl's own tables as live views: the pods table and the event stream.

What a person at a terminal would type (`kubectl get pods -o wide`, `kubectl get events`),
printed by kubelab's kubectl, refreshed whenever the dashboard looks again. The views read
quietly (kubelab.viz.observe.quiet): looking is not part of the cluster's story.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.viz.observe import quiet

__all__ = ["EventStream", "KubectlView", "PodsTable"]


class KubectlView:
    """The output of one kubectl command line. tail: keep the header and the last N lines."""

    def __init__(self, cluster: Any, command: str, *, tail: int | None = None, title: str = "") -> None:
        self.cluster, self.command, self.tail = cluster, command, tail
        self.title = title or f"$ kubectl {command}"
        self.widget = W.HTML(layout=W.Layout(width="100%"))
        self.widget.add_class("kubelab-kubectl")
        self.refresh()

    def text(self) -> str:
        with quiet(self.cluster):
            out = str(self.cluster.kubectl(self.command))
        lines = out.splitlines()
        if self.tail is not None and len(lines) > self.tail + 1:
            lines = [lines[0], *lines[-self.tail:]]  # the header, then the newest lines
        return "\n".join(lines)

    def refresh(self) -> None:
        self.widget.value = (f"<div><b><code>{html.escape(self.title)}</code></b>"
                             f"<pre style='margin:2px 0;font-size:11px;line-height:1.25'>"
                             f"{html.escape(self.text())}</pre></div>")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


class PodsTable(KubectlView):
    """`kubectl get pods -o wide`: where each pod runs, its status, restarts and IP."""

    def __init__(self, cluster: Any, namespace: str | None = None) -> None:
        suffix = " -A" if namespace is None else "" if namespace == "default" else f" -n {namespace}"
        super().__init__(cluster, f"get pods -o wide{suffix}")


class EventStream(KubectlView):
    """`kubectl get events`, oldest first, the newest `tail` lines: what the components said."""

    def __init__(self, cluster: Any, tail: int = 12, namespace: str = "default") -> None:
        suffix = "" if namespace == "default" else f" -n {namespace}"
        super().__init__(cluster, f"get events --sort-by=.lastTimestamp{suffix}", tail=tail)
