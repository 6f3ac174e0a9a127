"""The Reflector: list once, then watch from the list's resourceVersion, forever.

Follows client-go tools/cache/reflector.go (ListAndWatch, watchHandler): the LIST fills the
DeltaFIFO with replace(); the WATCH feeds it add/update/delete from that resourceVersion on.
When the watch ends the reflector watches again from the last resourceVersion it saw, so
nothing is missed; when the server says that version is gone (410 Expired/Gone, the store was
compacted), only a fresh LIST can tell it the truth, so it relists. Failures back off
exponentially (client-go: 800 ms doubling to 30 s, with jitter) on the simulated clock.

The relist after a 410 waits for that backoff too: upstream's watch() returns, ListAndWatch
returns, and wait.BackoffUntil (sliding) waits the backoff manager's next step before listing
again. After an API server restart every reflector gets its 410 at once; the jitter (a wait
between d and 2d) is what spreads their relists (notebook 10).
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from kubelab.api.errors import ApiError
from kubelab.api.request import WatchEvent, WatchHandle
from kubelab.client.client import Client
from kubelab.sim.clock import Clock, Timer
from kubelab.sim.trace import Trace

__all__ = ["Reflector", "ReflectorStore"]


class ReflectorStore(Protocol):
    """What a reflector writes into: a DeltaFIFO (or any cache.Store)."""

    def add(self, obj: Any) -> None: ...
    def update(self, obj: Any) -> None: ...
    def delete(self, obj: Any) -> None: ...
    def replace(self, objects: list[Any], resource_version: str = "") -> None: ...
    def resync(self) -> None: ...


class Reflector:
    INITIAL_BACKOFF = 0.8   # seconds, reflector.go's backoff manager
    MAX_BACKOFF = 30.0

    def __init__(
        self,
        client: Client,
        resource: str,
        store: ReflectorStore,
        clock: Clock,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
        resync_period: float = 0.0,
        rand: random.Random | None = None,
        trace: Trace | None = None,
        name: str = "",
    ) -> None:
        self.client, self.resource, self.store, self.clock = client, resource, store, clock
        self.namespace, self.label_selector, self.field_selector = namespace, label_selector, field_selector
        self.resync_period = resync_period
        self.rand = rand or random.Random(0)
        self.trace = trace
        self.name = name or f"reflector/{resource}"
        self.last_sync_resource_version = ""
        self.lists = 0          # how many LISTs: a relist storm shows up here
        self.watches = 0
        self._watch: WatchHandle | None = None
        self._timers: list[Timer] = []
        self._backoff = 0.0
        self._stopped = True
        self._generation = 0  # which watch is current: events of older ones are ignored

    # ------------------------------------------------------------------ lifecycle

    def run(self) -> None:
        """Start: LIST, then WATCH. Returns at once; the rest happens on the clock."""
        self._stopped = False
        self.list_and_watch()
        if self.resync_period > 0:
            self._timers.append(self.clock.call_later(self.resync_period, self._resync,
                                                      background=True))

    def stop(self) -> None:
        self._stopped = True
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        self._close_watch()

    # ------------------------------------------------------------------ list and watch

    def list_and_watch(self) -> None:
        if self._stopped:
            return
        try:
            listing = self.client.list(self.resource, self.namespace,
                                       label_selector=self.label_selector,
                                       field_selector=self.field_selector)
        except ApiError as err:
            self._record("list-failed", code=err.code, reason=err.reason)
            self._retry_later(self.list_and_watch)
            return
        self.lists += 1
        rv = str(listing.get("metadata", {}).get("resourceVersion", ""))
        items = listing.get("items", [])
        self._record("list", rv=rv, items=len(items))
        self.store.replace(list(items), rv)
        self.last_sync_resource_version = rv
        self._backoff = 0.0
        self._start_watch()

    def _start_watch(self) -> None:
        if self._stopped:
            return
        rv = self.last_sync_resource_version
        self._generation += 1
        generation = self._generation
        try:
            self._watch = self.client.watch(
                self.resource, lambda e: self._on_event(e, generation), self.namespace,
                resource_version=rv, label_selector=self.label_selector,
                field_selector=self.field_selector, on_close=lambda: self._on_close(generation),
                allow_watch_bookmarks=True)
        except ApiError as err:
            self._record("watch-failed", rv=rv, code=err.code, reason=err.reason)
            self._retry_later(self.list_and_watch if _is_expired(err) else self._start_watch)
            return
        self.watches += 1
        self._record("watch", rv=rv)

    def _on_event(self, event: WatchEvent, generation: int) -> None:
        if self._stopped or generation != self._generation:
            return  # a late event from a watch we already gave up on
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            code, reason = obj.get("code"), obj.get("reason", "")
            self._record("watch-error", code=code, reason=reason)
            self._close_watch()
            if code == 410:  # too old resource version: only a relist knows the truth now
                self._retry_later(self.list_and_watch)  # after the backoff (BackoffUntil)
            else:
                self._retry_later(self._start_watch)
            return
        rv = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        if kind == "ADDED":
            self.store.add(obj)
        elif kind == "MODIFIED":
            self.store.update(obj)
        elif kind == "DELETED":
            self.store.delete(obj)
        elif kind != "BOOKMARK":
            self._record("watch-unknown-event", type=kind)
            return
        if rv:
            self.last_sync_resource_version = rv

    def _on_close(self, generation: int) -> None:
        """The server ended the watch: watch again from where we were (no relist needed)."""
        if self._stopped or generation != self._generation:
            return
        self._watch = None
        self._record("watch-closed", rv=self.last_sync_resource_version)
        self._retry_later(self._start_watch)

    def _close_watch(self) -> None:
        self._generation += 1
        if self._watch is not None:
            watch, self._watch = self._watch, None
            watch.stop()

    def _retry_later(self, action: Any) -> None:
        self._backoff = min(self.MAX_BACKOFF, self._backoff * 2 or self.INITIAL_BACKOFF)
        delay = self._backoff * (1 + self.rand.random())  # jitter factor 1.0, as upstream
        self._timers = [t for t in self._timers if not t.cancelled]
        self._timers.append(self.clock.call_later(delay, action))

    def _resync(self) -> None:
        if self._stopped:
            return
        self.store.resync()
        self._timers.append(self.clock.call_later(self.resync_period, self._resync, background=True))

    def _record(self, verb: str, **detail: Any) -> None:
        if self.trace is not None:
            self.trace.record(self.name, verb, self.resource, **detail)


def _is_expired(err: ApiError) -> bool:
    return err.code == 410
