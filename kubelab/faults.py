"""Faults are first-class: every way to break the cluster, by name, now or at a virtual time.

Each fault is recorded in the trace (component "faults") next to what it causes, and every
widget button calls one of these methods. Faults belong to the wiring layer: they reach into
the parts the way an operator's hands would (pulling a cable, filling a disk), not through the
API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["Faults"]


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
        store.compact(target)
        self._record("compact", "store", revision=target)
        return target

    def slow_store(self, latency: float) -> None:
        """Make every store write wait `latency` virtual seconds for the disk (0 heals it)."""
        if latency < 0:
            raise ValueError(f"latency must be >= 0, got {latency}")
        self._cluster.store.latency = latency
        self._record("slow_store", "store", latency=latency)

    # ------------------------------------------------------------------ components

    def crash(self, component: str) -> None:
        """Kill a component: its memory, caches and queues are gone."""
        self._cluster.crash_component(component)
        self._record("crash", component)

    def restart(self, component: str) -> None:
        """Start a crashed component afresh: it relists everything it needs."""
        self._cluster.restart_component(component)
        self._record("restart", component)
