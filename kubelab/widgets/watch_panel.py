"""WatchPanel: lose, delay, duplicate and reorder watch events, crash a controller (notebook 03).

Each button calls one kubelab.faults method, so every action lands in the trace. The panel
shows, for the ConfigMap copier, whether every source has a matching copy (desired == actual),
how much work its queue did, and how many watch events were delivered and dropped.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.controllers.sample import SUFFIX, copies_match

__all__ = ["WatchPanel"]


class WatchPanel:
    def __init__(self, cluster: Any, component: str = "copier", namespace: str = "default") -> None:
        self.cluster, self.component, self.namespace = cluster, component, namespace
        self._edits = 0
        buttons = [
            ("change a source", "pencil", self.change_source),
            ("drop events", "eye-slash", lambda: self.cluster.faults.drop_watch_events(0.7)),
            ("delay events 5s", "hourglass", lambda: self.cluster.faults.delay_watch_events(5.0)),
            ("duplicate", "clone", lambda: self.cluster.faults.duplicate_watch_events(0.5)),
            ("reorder", "random", lambda: self.cluster.faults.reorder_watch_events(3.0)),
            ("heal watch", "medkit", self.cluster.faults.heal_watch_events),
            ("break watches", "chain-broken", self.cluster.faults.break_watches),
            ("compact store", "compress", self.cluster.faults.compact),
            ("crash controller", "bolt", self.crash),
            ("restart controller", "refresh", self.restart),
            ("run 10 s", "play", lambda: self.run(10)),
        ]
        self.buttons: dict[str, W.Button] = {}
        for label, icon, action in buttons:
            button = W.Button(description=label, icon=icon,
                              layout=W.Layout(width="auto"))
            button.on_click(lambda _b, action=action, label=label: self._do(label, action))
            self.buttons[label] = button
        self.status = W.HTML()
        self.widget = W.VBox([W.HBox(list(self.buttons.values())[:6]),
                              W.HBox(list(self.buttons.values())[6:]), self.status])
        self.refresh()

    def _do(self, label: str, action: Any) -> None:
        try:
            action()
            self.refresh(label)
        except Exception as err:  # show the error in the panel, as kubectl would print it
            self.refresh(f"{label}: {err}")

    def change_source(self) -> None:
        self._edits += 1
        name = f"setting-{self._edits % 3}"
        data = {"data": {"value": str(self._edits)}}
        if self.cluster.exists("configmaps", name, self.namespace):
            self.cluster.client.patch("configmaps", name, data, self.namespace)
        else:
            self.cluster.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": name, "namespace": self.namespace},
                                        **data})

    def crash(self) -> None:
        self.cluster.faults.crash(self.component)

    def restart(self) -> None:
        self.cluster.faults.restart(self.component)

    def run(self, seconds: float) -> None:
        self.cluster.run(seconds)

    def refresh(self, message: str = "") -> None:
        items = self.cluster.get("configmaps", namespace=self.namespace)
        rows = "".join(
            f"<tr><td>{html.escape(o['metadata']['name'])}</td>"
            f"<td>{html.escape(str(o.get('data')))}</td></tr>"
            for o in sorted(items, key=lambda o: o["metadata"]["name"])
            if not o["metadata"]["name"].startswith("kube-"))
        ok = copies_match(items)
        running = self.component in self.cluster.components
        controller = self.cluster.components.get(self.component)
        queue = getattr(getattr(controller, "controller", None), "queue", None)
        work = (f"syncs {controller.controller.syncs}, errors {controller.controller.errors}, "
                f"queue adds {queue.adds}" if queue is not None else "")
        delivered = len(self.cluster.trace.filter(verb="watch-event"))
        interceptor = getattr(self.cluster.apiserver, "watch_interceptor", None)
        dropped = getattr(interceptor, "dropped", 0)
        verdict = ("<span style='color:green'>desired == actual</span>" if ok else
                   f"<span style='color:#c00'>out of sync: some *{SUFFIX} differs</span>")
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.1f}s</b> · {verdict} · controller "
            f"{'running' if running else '<b>crashed</b>'} {work} · watch events delivered "
            f"{delivered}, dropped {dropped}"
            + (f"<br><i>{html.escape(message)}</i>" if message else "")
            + f"<table><tr><th>ConfigMap</th><th>data</th></tr>{rows}</table>")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown as its widget when it is the last value of a notebook cell."""
        return self.widget._repr_mimebundle_(**kwargs)
