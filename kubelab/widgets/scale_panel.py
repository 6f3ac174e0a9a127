"""ScalePanel: what a cluster's size costs the API server and etcd, second by second (notebook 10).

It reads the API server's fan-out counters (kubelab/apiserver/storage/fanout.py): the watch events its
watch cache sent per watcher class (kubelets, scheduler, controller-manager, kubectl, ...) and
their bytes, and the LISTs per class with the path that served them (watch cache or etcd), per
virtual second; and etcd's size against its quota, with its alarms. Buttons restart every API
server at once (the relist storm), compact, defragment and disarm etcd, and let time pass.
Every control calls a plain method, so tests and learners can drive it without a browser;
`rows()` gives the tables as plain data.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.widgets.action_log import ActionLog, html_table

__all__ = ["ScalePanel", "mib"]

NOTE = "events: what the watch cache sent; LISTs: relists, once the components have started"


def mib(n: int | None) -> str:
    return "off" if n is None else f"{n / 1024 / 1024:.1f} MiB"


class ScalePanel:
    def __init__(self, cluster: Any, window: int = 10) -> None:
        self.cluster, self.window = cluster, window
        self.status = W.HTML()
        self.actions = ActionLog(cluster.clock)
        actions = [
            ("restart API servers", "danger", self.restart_apiservers),
            ("compact etcd", "warning", self.compact),
            ("defragment etcd", "warning", self.defragment),
            ("disarm alarm", "success", self.disarm),
            ("run 10 s", "", lambda: self.run(10)),
            ("run 1 min", "", lambda: self.run(60)),
        ]
        buttons = []
        for label, style, action in actions:
            button = W.Button(description=label, button_style=style)
            button.on_click(lambda _b, act=action: act())
            buttons.append(button)
        row = W.Layout(flex_flow="row wrap")
        self.widget = W.VBox([W.HBox(buttons, layout=row), self.actions.widget, self.status])
        self.refresh()
        etcd = self.rows()[2][0]
        self.actions.starting_state(f"{len(cluster.node_names)} node(s); etcd {etcd[0]} of "
                                    f"{etcd[2]}, alarms: {etcd[5]}")

    # Each control calls one of these.

    def restart_apiservers(self) -> None:
        self._do(lambda: self.cluster.faults.restart_apiservers(),
                 lambda n: f"{n} open watches ended; every reflector relists after its backoff",
                 "restart API servers")

    def compact(self) -> None:
        self._do(lambda: self.cluster.faults.compact(),
                 lambda rev: f"history before revision {rev} is gone; the file keeps its size",
                 "compact etcd")

    def defragment(self) -> None:
        self._do(lambda: self.cluster.faults.defragment(),
                 lambda freed: f"{mib(freed)} given back", "defragment etcd")

    def disarm(self) -> None:
        self._do(lambda: self.cluster.faults.alarm_disarm(),
                 lambda _r: "etcd accepts writes again, if they fit", "disarm alarm")

    def run(self, seconds: float) -> None:
        self._do(lambda: self.cluster.run(seconds), lambda _r: f"ran {seconds:g} virtual seconds",
                 f"run {seconds:g} s")

    def _do(self, action: Any, message: Any, label: str) -> None:
        self.actions.run(label, action, message)
        self.refresh()

    # ------------------------------------------------------------------ the view

    def rows(self) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
        """(events rows, lists rows, etcd rows) for the last `window` whole seconds:
        per watcher class, events and KiB per second; per class and path, LISTs; etcd's size."""
        fanout = self.cluster.apiserver.fanout
        end = int(self.cluster.clock.now)
        start = max(0, end - self.window)
        span = max(1, end - start)
        events, sizes = fanout.series("events", start, end), fanout.series("bytes", start, end)
        event_rows = [[k, f"{sum(v) / span:.1f}", f"{sum(sizes.get(k, [])) / span / 1024:.1f}",
                       str(max(v))] for k, v in sorted(events.items())]
        lists = fanout.series("lists", start, end)
        list_rows = [[k.rsplit("/", 1)[0], k.rsplit("/", 1)[1], str(sum(v)), str(max(v))]
                     for k, v in sorted(lists.items())]
        store = self.cluster.store
        if hasattr(store, "quota"):  # the embedded store models etcd's size (store/quota.py)
            etcd_rows = [[mib(store.db_size), mib(store.db_size_in_use), mib(store.quota.limit),
                          str(store.revision), str(store.compact_revision),
                          ", ".join(store.alarm_list()) or "none"]]
        else:
            etcd_rows = [["-", "-", "-", str(store.revision), str(store.compact_revision), "-"]]
        return event_rows, list_rows, etcd_rows

    def refresh(self) -> None:
        event_rows, list_rows, etcd_rows = self.rows()
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.0f}s</b> · the last {self.window} s"
            + html_table(["watchers", "events/s", "KiB/s", "peak events in 1 s"], event_rows)
            + html_table(["LISTs from", "served by", "LISTs", "peak in 1 s"], list_rows)
            + html_table(["etcd DB SIZE", "IN USE", "quota", "revision", "compacted", "alarms"],
                         etcd_rows)
            + f"<small>{html.escape(NOTE)}</small>")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]
