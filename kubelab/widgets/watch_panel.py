"""WatchPanel: lose, delay, duplicate and reorder watch events, crash a controller (notebook 03).

Each button calls one kubelab.cluster.faults method, so every action lands in the trace. The panel
shows, for the ConfigMap copier, whether every source has a matching copy (desired == actual),
how much work its queue did, and how many watch events were delivered and dropped; an action
log keeps the latest actions and their results, under the state the panel started from.
"watch from rv N" watches ConfigMaps from the resourceVersion the panel started at: replayed
while the store keeps that history, 410 and a relist after "compact store" (old_watch.py).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from kubelab.cluster.faults.faults import WatchFaults
from kubelab.samples.sample_controller import SUFFIX, copies_match
from kubelab.widgets.action_log import ActionLog, html_table
from kubelab.widgets.old_watch import watch_from

__all__ = ["WatchPanel"]


class WatchPanel:
    def __init__(self, cluster: Any, component: str = "copier", namespace: str = "default") -> None:
        self.cluster, self.component, self.namespace = cluster, component, namespace
        self._edits = 0
        self.actions = ActionLog(cluster.clock)
        self.start_version = str(cluster.client.list("configmaps", namespace)["metadata"]["resourceVersion"])
        buttons = [
            ("change a source", "pencil", self.change_source),
            ("drop events", "eye-slash", lambda: self.cluster.faults.drop_watch_events(0.7)),
            ("delay events 5s", "hourglass", lambda: self.cluster.faults.delay_watch_events(5.0)),
            ("duplicate", "clone", lambda: self.cluster.faults.duplicate_watch_events(0.5)),
            ("reorder", "random", lambda: self.cluster.faults.reorder_watch_events(3.0)),
            ("heal watch", "medkit", self.cluster.faults.heal_watch_events),
            ("break watches", "chain-broken", self.cluster.faults.break_watches),
            ("compact store", "compress", self.compact),
            (f"watch from rv {self.start_version}", "history", self.watch_from_start),
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
        row = W.Layout(flex_flow="row wrap")
        self.widget = W.VBox([W.HBox(list(self.buttons.values())[:6], layout=row),
                              W.HBox(list(self.buttons.values())[6:], layout=row),
                              self.actions.widget, self.status])
        items = cluster.get("configmaps", namespace=namespace)
        self.actions.starting_state(
            f"{self.component} {'running' if component in cluster.components else 'not running'}; "
            f"{len(items)} ConfigMap(s) in {namespace}, "
            f"{'every copy matches' if copies_match(items) else 'some copy differs'}; "
            f"watch events delivered as sent; the store at revision {cluster.store.revision}")
        self.refresh()

    def _do(self, label: str, action: Any) -> None:
        self.actions.run(label, action, lambda r: r if isinstance(r, str) else "done")
        self.refresh()

    def compact(self) -> str:
        return (f"compacted at revision {self.cluster.faults.compact()}: a watch from an older "
                "resourceVersion now gets 410")

    def watch_from_start(self) -> str:
        return watch_from(self.cluster, "configmaps", self.namespace, self.start_version)

    def change_source(self) -> str:
        self._edits += 1
        name = f"setting-{self._edits % 3}"
        data = {"data": {"value": str(self._edits)}}
        if self.cluster.exists("configmaps", name, self.namespace):
            self.cluster.client.patch("configmaps", name, data, self.namespace)
            return f"configmap/{name} patched (value {self._edits})"
        self.cluster.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": name, "namespace": self.namespace}, **data})
        return f"configmap/{name} created (value {self._edits})"

    def crash(self) -> str:
        self.cluster.faults.crash(self.component)
        return f"{self.component} crashed: its cache and queue are gone"

    def restart(self) -> str:
        self.cluster.faults.restart(self.component)
        return (f"{self.component} restarted: it lists, watches and catches up only as virtual "
                "time runs (run 10 s)")

    def run(self, seconds: float) -> str:
        self.cluster.run(seconds)
        return f"ran {seconds:g} virtual second(s)"

    def refresh(self) -> None:
        items = self.cluster.get("configmaps", namespace=self.namespace)
        rows = [[o["metadata"]["name"], str(o.get("data"))]
                for o in sorted(items, key=lambda o: o["metadata"]["name"])
                if not o["metadata"]["name"].startswith("kube-")]
        ok = copies_match(items)
        running = self.component in self.cluster.components
        controller = self.cluster.components.get(self.component)
        # a built-in controller has its workqueue loop at .controller; a learner's may not
        queue = getattr(getattr(controller, "controller", None), "queue", None)
        work = (f"syncs {controller.controller.syncs}, errors {controller.controller.errors}, "
                f"queue adds {queue.adds}" if queue is not None else "")
        delivered = len(self.cluster.trace.filter(verb="watch-event"))
        interceptor = self.cluster.apiserver.watch_interceptor
        dropped = interceptor.dropped if isinstance(interceptor, WatchFaults) else 0
        verdict = ("<span style='color:green'>desired == actual</span>" if ok else
                   f"<span style='color:#c00'>out of sync: some *{SUFFIX} differs</span>")
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.1f}s</b> · {verdict} · controller "
            f"{'running' if running else '<b>crashed</b>'} {work} · watch events delivered "
            f"{delivered}, dropped {dropped}" + html_table(["ConfigMap", "data"], rows))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown as its widget when it is the last value of a notebook cell."""
        return self.widget._repr_mimebundle_(**kwargs)
