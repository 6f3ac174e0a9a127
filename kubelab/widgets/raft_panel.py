"""RaftPanel: the etcd quorum of a `Cluster(etcd_members=3)` (notebook 07), live.

A table of the members (role, term, whom it follows, commit and applied index, its store's
revision, whether it is cut off), the newest elections from c.etcd.timeline, and one row of
buttons per member: crash or restart it, partition it away or bring it back. Below, heal the
network, write a key through the API server (to see a write succeed or time out) and the run
controls. Every button calls a c.faults method, so the trace records it. Widgets never import
the store: the panel reads c.etcd's status rows.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from kubelab.widgets.action_log import ActionLog, html_table
from kubelab.widgets.run_controls import RunControls

__all__ = ["RaftPanel"]

ROLE_COLOURS = {"leader": "#1e8449", "candidate": "#b9770e", "follower": "#2e86c1", "down": "#c0392b"}


class RaftPanel:
    def __init__(self, cluster: Any, on_change: Callable[[], None] | None = None) -> None:
        if cluster.etcd is None:
            raise ValueError("this cluster runs a single store: build it with Cluster(etcd_members=3)")
        self.cluster, self.etcd, self.on_change = cluster, cluster.etcd, on_change
        self.actions = ActionLog(cluster.clock)
        self.buttons: dict[str, W.Button] = {}   # by their first label; toggles relabel themselves
        self._writes = 0
        rows: list[W.Widget] = []
        for name in self.etcd.members:
            crash = self._button(f"crash {name}", "bolt", functools.partial(self.toggle, name))
            cut = self._button(f"partition {name}", "scissors", functools.partial(self.partition, name))
            rows.append(W.HBox([W.Label(name, layout=W.Layout(width="60px")), crash, cut]))
        rows.append(W.HBox([
            self._button("heal network", "medkit", self.heal),
            self._button("write a key", "pencil", self.write),
            self._button("run 1 s", "play", lambda: self.run(1.0)),
            self._button("run 10 s", "forward", lambda: self.run(10.0))]))
        self.run_controls = RunControls(cluster, on_tick=self.refresh, step=1.0)
        self.table = W.HTML()
        self.table.add_class("kubelab-raft")
        self.timeline = W.HTML()
        self.widget = W.VBox([self.table, *rows, self.run_controls.widget, self.actions.widget,
                              self.timeline])
        self.actions.starting_state(self.state())
        self.refresh()

    def _button(self, label: str, icon: str, action: Callable[[], str]) -> W.Button:
        button = W.Button(description=label, icon=icon, layout=W.Layout(width="auto"), tooltip=label)
        button.on_click(lambda b: self._do(str(b.description), action))  # what it says now
        self.buttons[label] = button
        return button

    # Each control calls one of these, so tests and learners can drive the panel directly.

    def toggle(self, name: str) -> str:
        """Crash the member if it runs, restart it if it is down."""
        if self.etcd.members[name].up:
            self.cluster.faults.crash_etcd_member(name)
            return f"{name} crashed; its log and data stay on its disk"
        self.cluster.faults.restart_etcd_member(name)
        return f"{name} restarted: it catches up from the leader as virtual time runs"

    def partition(self, name: str) -> str:
        """Cut the member off, or, if it is cut off, heal the whole network."""
        if self.etcd.side[name] != 0:
            return self.heal()
        self.cluster.faults.partition_etcd(name)
        return f"{name} is cut off from the other members and the API server"

    def heal(self) -> str:
        self.cluster.faults.heal_etcd()
        return "every member reaches every other again"

    def write(self) -> str:
        """Create a ConfigMap through the API server: it succeeds only with a quorum."""
        self._writes += 1
        self.cluster.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": f"raft-panel-{self._writes}"}})
        return f"configmap/raft-panel-{self._writes} created at revision {self.cluster.store.revision}"

    def run(self, seconds: float) -> str:
        self.cluster.run(seconds)
        return f"ran {seconds:g} virtual second(s)"

    def state(self) -> str:
        up = sum(1 for m in self.etcd.members.values() if m.up)
        return (f"{up} of {len(self.etcd.members)} etcd member(s) up, leader "
                f"{self.etcd.leader or 'none'}, {'a' if self.etcd.has_quorum() else 'no'} quorum")

    def _do(self, label: str, action: Callable[[], str]) -> None:
        self.actions.run(label, action)
        self.refresh()
        if self.on_change is not None:
            self.on_change()

    def refresh(self) -> None:
        self.run_controls.refresh()  # its clock label too: the panel's own buttons move time
        rows = []
        for s in self.etcd.status():
            colour = ROLE_COLOURS.get(s.role, "#333")
            rows.append([html.escape(s.name), f"<b style='color:{colour}'>{s.role}</b>", str(s.term),
                         html.escape(s.leader or "-"), str(s.commit), str(s.applied),
                         str(s.revision), "yes" if s.partitioned else ""])
        quorum = "quorum" if self.etcd.has_quorum() else "<b style='color:#c0392b'>no quorum</b>"
        self.table.value = (f"<b>t={self.cluster.clock.now:.1f}s</b> · leader "
                            f"<b>{html.escape(self.etcd.leader or 'none')}</b> · {quorum}"
                            + html_table(["member", "role", "term", "follows", "commit", "applied",
                                          "revision", "partitioned"], rows, escape=False))
        for name, member in self.etcd.members.items():
            button = self.buttons[f"crash {name}"]
            button.description = f"crash {name}" if member.up else f"restart {name}"
            button.button_style = "" if member.up else "danger"
            cut = self.buttons[f"partition {name}"]
            cut.description = f"partition {name}" if self.etcd.side[name] == 0 else "heal network"
            cut.button_style = "" if self.etcd.side[name] == 0 else "warning"
        recent = self.etcd.timeline[-6:]
        items = "".join(f"<li>t={t:g}s {html.escape(text)}</li>" for t, text in recent)
        self.timeline.value = f"<small>etcd timeline (newest last)</small><ul>{items}</ul>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown as its widget when it is the last value of a notebook cell."""
        return self.widget._repr_mimebundle_(**kwargs)
