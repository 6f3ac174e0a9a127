"""Faults are first-class: every way to break the cluster, by name, now or at a virtual time.

Each fault is recorded in the trace (component "faults") next to what it causes, and every
widget button calls one of these methods. Faults belong to the wiring layer: they reach into
the parts the way an operator's hands would (pulling a cable, filling a disk), not through the
API.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["Faults", "WatchFaults"]


class WatchFaults:
    """The API server's watch interceptor while watch faults are on.

    For each event on its way to a watcher it returns the (delay, event) pairs to deliver:
    none (dropped), one (maybe late) or two (duplicated). Randomness comes from the cluster's
    seeded generator, so the same seed loses the same events.
    """

    def __init__(self, rand: random.Random) -> None:
        self.rand = rand
        self.drop = self.duplicate = self.delay = self.reorder = 0.0
        self.user: str | None = None
        self.dropped = 0

    def set(self, *, user: str | None, **settings: float) -> None:
        for name, value in settings.items():
            if value < 0 or (name in ("drop", "duplicate") and value > 1):
                raise ValueError(f"{name} must be in [0, 1] for probabilities, >= 0 for seconds")
            setattr(self, name, float(value))
        self.user = user

    def __call__(self, watch: Any, event: dict[str, Any]) -> list[tuple[float, dict[str, Any]]]:
        if self.user is not None and getattr(watch, "user", None) != self.user:
            return [(0.0, event)]
        if event.get("type") == "ERROR":
            return [(0.0, event)]  # the server's own errors always get through
        if self.drop and self.rand.random() < self.drop:
            self.dropped += 1
            return []
        delay = self.delay + (self.rand.random() * self.reorder if self.reorder else 0.0)
        out = [(delay, event)]
        if self.duplicate and self.rand.random() < self.duplicate:
            out.append((delay, event))
        return out


class Faults:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self.history: list[tuple[float, str, dict[str, Any]]] = []

    def _record(self, name: str, obj: str = "", **detail: Any) -> None:
        self.history.append((self._cluster.clock.now, name, detail))
        self._cluster.trace.record("faults", name, obj, **detail)

    def at(self, when: float, fault: str, *args: Any, **kwargs: Any) -> None:
        """Schedule a fault at virtual time `when`, e.g. faults.at(30, "crash", "scheduler")."""
        method: Callable[..., Any] | None = getattr(self, fault, None)
        if method is None or fault.startswith("_") or fault == "at":
            raise ValueError(f"unknown fault {fault!r}; known: {', '.join(self.names())}")
        self._cluster.clock.call_at(when, lambda: method(*args, **kwargs))

    @classmethod
    def names(cls) -> list[str]:
        return sorted(n for n in vars(cls) if not n.startswith("_") and n not in ("at", "names"))

    # ------------------------------------------------------------------ the store

    def compact(self, revision: int | None = None) -> int:
        """Compact the store's history up to `revision` (default: the current revision).

        Watchers older than that get 410 Gone from the API server and must relist.
        """
        store = self._cluster.store
        target = store.revision if revision is None else revision
        if revision is None and target <= store.compact_revision:
            self._record("compact", "store", revision=target, note="already compacted")
            return target  # a second press of the button: etcd would refuse, nothing to do
        store.compact(target)
        self._record("compact", "store", revision=target)
        return target

    def slow_store(self, latency: float) -> None:
        """Make every store write wait `latency` virtual seconds for the disk (0 heals it)."""
        if latency < 0:
            raise ValueError(f"latency must be >= 0, got {latency}")
        self._cluster.store.latency = latency
        self._record("slow_store", "store", latency=latency)

    # ------------------------------------------------------------------ watch events

    def drop_watch_events(self, probability: float = 1.0, user: str | None = None) -> None:
        """Lose watch events on their way to clients (all, or only to `user`'s watches)."""
        self._watch_faults().set(drop=probability, user=user)
        self._record("drop_watch_events", "watch", probability=probability, user=user or "*")

    def delay_watch_events(self, seconds: float, user: str | None = None) -> None:
        """Deliver watch events `seconds` late."""
        self._watch_faults().set(delay=seconds, user=user)
        self._record("delay_watch_events", "watch", seconds=seconds, user=user or "*")

    def duplicate_watch_events(self, probability: float = 1.0, user: str | None = None) -> None:
        """Deliver some watch events twice."""
        self._watch_faults().set(duplicate=probability, user=user)
        self._record("duplicate_watch_events", "watch", probability=probability, user=user or "*")

    def reorder_watch_events(self, spread: float = 1.0, user: str | None = None) -> None:
        """Deliver each event after a random delay in [0, spread): order is lost."""
        self._watch_faults().set(reorder=spread, user=user)
        self._record("reorder_watch_events", "watch", spread=spread, user=user or "*")

    def heal_watch_events(self) -> None:
        """Stop dropping, delaying, duplicating and reordering watch events."""
        self._cluster.apiserver.watch_interceptor = None
        self._record("heal_watch_events", "watch")

    def break_watches(self) -> None:
        """Cut every open watch connection; clients must watch again."""
        closed = self._cluster.apiserver.close_watches()
        self._record("break_watches", "watch", closed=closed)

    def _watch_faults(self) -> WatchFaults:
        current = self._cluster.apiserver.watch_interceptor
        if not isinstance(current, WatchFaults):
            current = WatchFaults(self._cluster.rand)
            self._cluster.apiserver.watch_interceptor = current
        return current

    # ------------------------------------------------------------------ components

    def crash(self, component: str) -> None:
        """Kill a component: its memory, caches and queues are gone."""
        self._cluster.crash_component(component)
        self._record("crash", component)

    def restart(self, component: str) -> None:
        """Start a crashed component afresh: it relists everything it needs."""
        self._cluster.restart_component(component)
        self._record("restart", component)
