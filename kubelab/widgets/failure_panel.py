"""FailurePanel: break the cluster by hand. Every button calls one c.faults method.

A fault is recorded in the trace beside what it causes, so the sequence diagram and the
timeline show it. The panel offers only what the cluster has: no scheduler, no scheduler
button; hollow nodes (no kubelets) have no machine to kill, so the node and registry rows
appear only when kubelets run.

Rows: components (one button each: crash when it runs, restart when it is down); a node (kill,
revive, partition, heal); a pod (delete it, crash its container); watch events (drop, delay,
heal, break); the store (compact, disk latency); the image registry (break, fix).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from kubelab.kubelet.registry import MODES
from kubelab.viz.observe import quiet
from kubelab.widgets.action_log import ActionLog

__all__ = ["FailurePanel"]

Action = Callable[[], Any]


def _button(label: str, icon: str, style: str = "") -> W.Button:
    return W.Button(description=label, icon=icon, button_style=style,
                    layout=W.Layout(width="auto"), tooltip=label)


class FailurePanel:
    """on_change: called after every action (the dashboard refreshes its views there)."""

    def __init__(self, cluster: Any, namespace: str = "default",
                 on_change: Callable[[], None] | None = None) -> None:
        self.cluster, self.namespace = cluster, namespace
        self.on_change = on_change
        self.actions = ActionLog(cluster.clock)
        self.buttons: dict[str, W.Button] = {}
        f = cluster.faults
        rows: list[W.Widget] = []
        # Components: one toggle button each, for what this cluster was built with.
        self.component_buttons: dict[str, W.Button] = {}
        for name in self.component_names():
            button = _button(name, "bolt")
            button.on_click(lambda _b, name=name: self._do(lambda: self.toggle(name), "toggle " + name))
            self.component_buttons[name] = button
        rows.append(W.HBox([W.Label("components:"), *self.component_buttons.values()],
                           layout=W.Layout(flex_flow="row wrap")))
        self.has_kubelets = any(n.startswith("kubelet/") for n in self.component_names())
        # the workers first: killing the control-plane node (its API server with it) is there,
        # but not what a first click should do
        control_plane = list(getattr(cluster, "control_plane_nodes", []))
        self.node = W.Dropdown(options=[n for n in cluster.node_names if n not in control_plane]
                               + control_plane, description="node", layout=W.Layout(width="180px"))
        if self.has_kubelets and cluster.node_names:
            rows.append(self._row([self.node], [
                ("kill node", "power-off", "danger", lambda: self.node_fault(
                    f.kill_node, "powered off: no kubelet, no containers, no heartbeat")),
                ("revive node", "plug", "", lambda: self.node_fault(
                    f.revive_node, "boots again: its kubelet registers and heartbeats")),
                ("partition node", "scissors", "warning", lambda: self.node_fault(
                    f.partition, "is cut off the control plane (its containers keep running)")),
                ("heal partition", "medkit", "", lambda: self.node_fault(
                    f.heal, "reaches the API server again"))]))
        self.pod = W.Dropdown(options=[], description="pod", layout=W.Layout(width="300px"))
        pod_actions = [("delete pod", "trash", "danger", self.delete_pod)]
        if self.has_kubelets:
            pod_actions.append(("crash container", "bomb", "warning", self.crash_container))
        rows.append(self._row([self.pod], pod_actions))
        self.delay = W.BoundedFloatText(value=5.0, min=0.0, max=600.0, step=1.0,
                                        description="delay (s)", layout=W.Layout(width="150px"))
        rows.append(self._row([W.Label("watch events:")], [
            ("drop watch events", "eye-slash", "warning", lambda: f.drop_watch_events(1.0)),
            ("delay watch events", "hourglass", "warning",
             lambda: f.delay_watch_events(float(self.delay.value))),
            ("heal watch events", "medkit", "", f.heal_watch_events),
            ("break watches", "chain-broken", "warning", f.break_watches)], [self.delay]))
        self.latency = W.FloatSlider(value=float(cluster.store.latency), min=0.0, max=2.0, step=0.1,
                                     description="disk latency (s)", continuous_update=False,
                                     style={"description_width": "initial"})
        self.latency.observe(lambda ch: self._do(lambda: self.slow_store(float(ch["new"])),
                                                 f"disk latency {float(ch['new']):g}s"), names="value")
        rows.append(self._row([W.Label("store:")], [
            ("compact store", "compress", "warning", f.compact)], [self.latency]))
        if self.has_kubelets:
            self.mode = W.Dropdown(options=[m for m in MODES if m != "ok"], value="unauthorized",
                                   description="registry", layout=W.Layout(width="240px"))
            rows.append(self._row([self.mode], [
                ("break registry", "ban", "danger", lambda: f.break_registry(None, self.mode.value)),
                ("fix registry", "check", "success", lambda: f.fix_registry(None))]))
        self.status = W.HTML()
        self.status.add_class("kubelab-faults")
        self.widget = W.VBox([*rows, self.actions.widget, self.status])
        self.refresh()
        self.actions.starting_state(self.state())

    def _row(self, first: list[W.Widget], actions: list[tuple[str, str, str, Action]],
             last: list[W.Widget] | None = None) -> W.HBox:
        for label, icon, style, action in actions:
            button = _button(label, icon, style)
            button.on_click(lambda _b, label=label, action=action: self._do(action, label))
            self.buttons[label] = button
        return W.HBox([*first, *(self.buttons[a[0]] for a in actions), *(last or [])],
                      layout=W.Layout(flex_flow="row wrap", align_items="center"))

    # Each control calls one of these, so tests and learners can drive the panel directly.

    def component_names(self) -> list[str]:
        """apiserver, then every component this cluster runs, or ran before a fault stopped it
        (crashed, or its node killed: the trace says so)."""
        factories = set(self.cluster._factories)
        known = set(self.cluster.components)
        for r in self.cluster.trace.filter(component="faults"):
            known |= {r.object, f"kubelet/{r.object}"} & factories
        order = {"controller-manager": 0, "scheduler": 1}
        servers = [str(s.name) for s in self.cluster.apiservers]
        return [*servers, *sorted(known, key=lambda n: (order.get(n.rsplit("-", 1)[0] if
                                                                   n[-1:].isdigit() else n, 2), n))]

    def running(self, name: str) -> bool:
        for server in self.cluster.apiservers:
            if server.name == name:  # apiserver, or a replica: apiserver-2
                return bool(server.running)
        component = self.cluster.components.get(name)
        return component is not None and not getattr(component, "exited", False)  # leader electors only

    def toggle(self, name: str) -> str:
        """Crash the component if it runs, restart it if it does not."""
        if self.running(name):
            self.cluster.faults.crash(name)
            return f"crashed {name}"
        self.cluster.faults.restart(name)
        return (f"restarted {name}: it relists and catches up only as virtual time runs "
                "(step or play)")

    def node_fault(self, fault: Callable[[str], Any], what: str) -> str:
        node = str(self.node.value)
        fault(node)
        return f"{node} {what}"

    def slow_store(self, seconds: float) -> str:
        self.cluster.faults.slow_store(seconds)
        return f"every store write now waits {seconds:g}s for the disk"

    def state(self) -> str:
        """What this panel starts from, in one line."""
        down = [n for n in self.component_names() if not self.running(n)]
        nodes = list(self.cluster.node_names)
        return (f"{len(self.component_names()) - len(down)} component(s) running"
                + (f", down: {', '.join(down)}" if down else "")
                + (f"; nodes {', '.join(nodes)}" if nodes else "; no nodes")
                + f"; disk latency {float(self.cluster.store.latency):g}s")

    def delete_pod(self) -> str:
        if not self.pod.value:
            return "no pod selected"
        self.cluster.faults.delete_pod(self.pod.value, self.namespace)
        return f'pod "{self.pod.value}" deleted from {self.namespace} namespace'

    def crash_container(self) -> str:
        if not self.pod.value:
            return "no pod selected"
        self.cluster.faults.crash_container(self.pod.value, namespace=self.namespace)
        return f'the container of pod "{self.pod.value}" crashed'

    def _do(self, action: Action, label: str) -> None:
        """A button's press: the action log shows what happened, in the error's own words."""
        subject = f" {self.node.value}" if label.endswith((" node", " partition")) else ""
        self.actions.run(label + subject, action, lambda r: r if isinstance(r, str) else "done")
        self.refresh()
        if self.on_change is not None:
            self.on_change()

    def refresh(self) -> None:
        for name, button in self.component_buttons.items():
            up = self.running(name)
            button.description = f"crash {name}" if up else f"restart {name}"
            button.button_style = "" if up else "danger"
            button.icon = "bolt" if up else "play"
        pods = list(self.pod.options)  # while the API server is down, the last list we saw
        if self.cluster.apiserver.running:
            with quiet(self.cluster):
                pods = sorted(p["metadata"]["name"] for p in
                              self.cluster.client.list("pods", self.namespace)["items"]
                              if not p["metadata"].get("deletionTimestamp"))
        if list(self.pod.options) != pods:
            keep = self.pod.value if self.pod.value in pods else (pods[0] if pods else None)
            self.pod.options = pods
            self.pod.value = keep
        recent = self.cluster.trace.filter(component="faults")[-5:]
        lines = "".join(f"<li>t={r.time:g}s ⚡ {html.escape(r.verb)} {html.escape(r.object)} "
                        f"{html.escape(_detail(r.detail))}</li>" for r in recent)
        self.status.value = (f"<div style='font-size:12px;color:#555'>faults in the trace (newest "
                             f"last)</div><ul style='margin:2px 0'>{lines}</ul>")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


def _detail(detail: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in detail.items())
