"""StorePanel: break the etcd stand-in by hand (notebook 01).

Buttons write a key, compact the history now and let virtual time pass; a slider sets the disk
latency. The panel shows the revision, the compaction point, the keys and what each watcher
has heard. It works on any object with the Store's methods (widgets never import the store:
only the API server does, see docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.sim import Clock
from kubelab.widgets.action_log import ActionLog, html_table

__all__ = ["StorePanel"]


class StorePanel:
    def __init__(self, store: Any, clock: Clock, *, prefix: str = "/registry/",
                 heard: dict[str, list[str]] | None = None) -> None:
        self.store, self.clock, self.prefix = store, clock, prefix
        # What each watcher heard, by name: the notebook's watchers append lines here.
        self.heard = heard if heard is not None else {}
        self._counter = 0
        self.write_button = W.Button(description="write a key", icon="pencil")
        self.compact_button = W.Button(description="compact now", icon="compress",
                                       button_style="warning")
        self.run_button = W.Button(description="run 1 s", icon="play")
        self.latency = W.FloatSlider(value=float(store.latency), min=0.0, max=2.0, step=0.1,
                                     description="disk latency (s)", continuous_update=False,
                                     style={"description_width": "initial"})
        self.status = W.HTML()
        self.heard_view = W.HTML()
        self.actions = ActionLog(clock)
        self.write_button.on_click(lambda _b: self.write())
        self.compact_button.on_click(lambda _b: self.compact())
        self.run_button.on_click(lambda _b: self.run(1.0))
        self.latency.observe(lambda change: self.set_latency(change["new"]), names="value")
        self.widget = W.VBox([
            W.HBox([self.write_button, self.compact_button, self.run_button]),
            self.latency, self.actions.widget, self.status, self.heard_view,
        ])
        keys = len(store.range(prefix, prefix=True).kvs)
        self.actions.starting_state(f"the store is at revision {store.revision}, compacted below "
                                    f"{store.compact_revision}, {keys} key(s) under {prefix}")
        self.refresh()

    # Each control calls one of these, so tests (and learners) can drive the panel directly.

    def write(self) -> int:
        self._counter += 1
        key = f"{self.prefix}configmaps/default/panel-{self._counter % 3}"
        response = self.store.put(key, f'{{"n": {self._counter}}}'.encode())
        self.actions.record(f"put {key}", f"revision {response.revision}"
                            + (f" (waited {response.latency:.1f}s for the disk)" if response.latency else ""))
        self.refresh()
        return int(response.revision)

    def compact(self) -> int:
        revision = int(self.store.revision)
        try:
            self.store.compact(revision)
        except Exception as err:  # compacting twice at the same revision is refused by etcd
            self.actions.record(f"compact at revision {revision}", f"refused: {err}", ok=False)
        else:
            self.actions.record(f"compact at revision {revision}",
                                f"history below revision {revision} is gone")
        self.refresh()
        return revision

    def run(self, seconds: float) -> None:
        self.clock.run(until=self.clock.now + seconds)
        self.actions.record(f"run {seconds:g} s", f"ran {seconds:g} virtual second(s)")
        self.refresh()

    def set_latency(self, seconds: float) -> None:
        self.store.latency = seconds
        self.actions.record(f"disk latency {seconds:g}s", f"every write now waits {seconds:g}s")
        self.refresh()

    def refresh(self) -> None:
        rows = [[f"<code>{html.escape(kv.key)}</code>", str(kv.create_revision), str(kv.mod_revision),
                 str(kv.version)] for kv in self.store.range(self.prefix, prefix=True).kvs]
        self.status.value = (
            f"<b>t={self.clock.now:.1f}s</b> · revision <b>{self.store.revision}</b> · "
            f"compacted below <b>{self.store.compact_revision}</b>"
            + html_table(["key", "create_revision", "mod_revision", "version"], rows, escape=False))
        heard = "".join(f"<li><b>{html.escape(name)}</b>: {html.escape(', '.join(lines[-6:]))}</li>"
                        for name, lines in self.heard.items())
        self.heard_view.value = f"<small>what each watcher heard</small><ul>{heard}</ul>" if heard else ""

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown as its widget when it is the last value of a notebook cell."""
        return self.widget._repr_mimebundle_(**kwargs)
