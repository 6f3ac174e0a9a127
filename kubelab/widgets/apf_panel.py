"""APFPanel: API Priority and Fairness at work, level by level (notebook 10).

For each priority level: its seats in use of its nominal concurrency limit, the requests
waiting and the longest of its queues, how many requests it dispatched and refused (429) so
far. "noisy tenant" starts a flood of list requests from one user (c.faults.flood); the
panel's RunControls play the cluster while it floods, and the table shows the flood filling
the queues of its hand on global-default while node-high, where the kubelets renew their
leases, carries on. The cluster needs priority and fairness on (Cluster(apf=True)); the panel
says so when it is off. Every control calls a plain method, and each lands in the action log.

What makes a tenant noisy is the seat-seconds it asks for, not its request count: a list of a
few ConfigMaps holds one seat for about 1 ms (work_estimator.py), so 500 a second need half a
seat and never wait, even on the 3 seats global-default gets of a 25-seat server. The default
flood, 6,000 a second, asks for 6 seats: twice the level's share, so its queues fill and it
gets 429s, as a real tenant's would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W

from kubelab.widgets.action_log import ActionLog, html_table
from kubelab.widgets.run_controls import RunControls

__all__ = ["APFPanel"]


class APFPanel:
    def __init__(self, cluster: Any, tenant: str = "noisy-tenant", *, per_second: float = 6000,
                 seconds: float = 2, resource: str = "configmaps") -> None:
        self.cluster, self.tenant = cluster, tenant
        self.per_second, self.seconds, self.resource = per_second, seconds, resource
        self.floods: list[Any] = []
        self.actions = ActionLog(cluster.clock)
        self.controls = RunControls(cluster, on_tick=self.refresh, step=1.0)
        actions: list[tuple[str, Callable[[], str]]] = [
            (f"noisy tenant: {per_second:g} lists/s of {resource} for {seconds:g}s", self.flood),
            ("stop the flood", self.stop_flood),
        ]
        self.buttons: dict[str, W.Button] = {}
        for label, action in actions:
            button = W.Button(description=label, layout=W.Layout(width="auto"))
            button.on_click(lambda _b, label=label, action=action: self._do(label, action))
            self.buttons[label] = button
        self.status = W.HTML()
        self.widget = W.VBox([self.controls.widget,
                              W.HBox(list(self.buttons.values()), layout=W.Layout(flex_flow="row wrap")),
                              self.actions.widget, self.status])
        on = cluster.apiserver.flowcontrol is not None
        self.actions.starting_state(
            "priority and fairness is " + ("on" if on else "off (Cluster(apf=True) turns it on)")
            + "; no flood is running")
        self.refresh()

    @property
    def last(self) -> str:
        return self.actions.last

    def _do(self, label: str, action: Callable[[], str]) -> None:
        self.actions.run(label, action)
        self.refresh()

    def flood(self) -> str:
        flood = self.cluster.faults.flood(self.tenant, per_second=self.per_second,
                                          seconds=self.seconds, resource=self.resource)
        self.floods.append(flood)
        return (f"{self.tenant} sends {self.per_second:g} lists of {self.resource} a second for "
                f"{self.seconds:g}s (play or step the clock)")

    def stop_flood(self) -> str:
        running = [f for f in self.floods if f.running]
        for flood in running:
            flood.stop()
        sent = sum(f.sent for f in self.floods)
        refused = sum(f.rejected for f in self.floods)
        return f"stopped {len(running)} flood(s); {sent} request(s) sent, {refused} refused with 429"

    def rows(self) -> list[list[str]]:
        """The table: one row per priority level."""
        flowcontrol = self.cluster.apiserver.flowcontrol
        if flowcontrol is None:
            return []
        rows = []
        for level in flowcontrol.snapshot():
            limit = "exempt" if level["type"] == "Exempt" else str(level["nominalCL"])
            rejected = sum(level["rejected"].values())
            longest = max(level["queueLengths"], default=0)
            rows.append([level["priorityLevel"], f"{level['seatsInUse']} / {limit}",
                         str(level["waiting"]), str(longest), str(level["dispatched"]),
                         str(rejected)])
        return rows

    def refresh(self) -> None:
        flowcontrol = self.cluster.apiserver.flowcontrol
        head = f"<b>t={self.cluster.clock.now:.2f}s</b>"
        if flowcontrol is None:
            self.status.value = head + " · priority and fairness is off"
            return
        flood = ""
        if self.floods:
            f = self.floods[-1]
            flood = (f" · {self.tenant}: {f.sent} sent, {f.answered} answered, "
                     f"{f.rejected} refused (429)" + (" · flooding" if f.running else ""))
        self.status.value = head + flood + html_table(
            ["priority level", "seats in use / limit", "waiting", "longest queue", "dispatched",
             "rejected"], self.rows())

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown as its widget when it is the last value of a notebook cell."""
        return self.widget._repr_mimebundle_(**kwargs)
