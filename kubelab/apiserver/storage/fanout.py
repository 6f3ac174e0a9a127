"""What the watch cache sends, and which path served each list, per virtual second.

Upstream exports these as metrics (k8s.io/apiserver pkg/storage/cacher/metrics:
apiserver_watch_cache_events_dispatched_total, apiserver_watch_events_total and
apiserver_watch_events_sizes by kind; apiserver_cache_list_total and
apiserver_request_total{verb="LIST"}). kubelab keeps the same numbers per watcher class
(kubelets, scheduler, controller-manager, kubectl, others by name) and per virtual second, so
a notebook can plot the fan-out as a cluster grows and the relist storm after a restart.

- events: watch events the cache sent to watchers of a class;
- bytes: the encoded size of those events (the stored JSON of each object: a watcher gets the
  bytes etcd holds, re-encoded once per event as upstream's cachingObject does);
- encoded: bytes encoded once per event, however many watchers receive it;
- lists, by path: "watch-cache" when the watch cache's index served it (a fresh cache, an
  indexed field selector), "etcd" when the API server read the store (see watch_cache.py for
  why a cache that cannot wait goes to the store).

A LIST from a component is, outside its start, a relist: reflectors list once, then watch.
"""

from __future__ import annotations

from collections import defaultdict

from kubelab.sim import Clock

__all__ = ["FanoutStats", "watcher_class"]

_CLASSES = {"system:kube-scheduler": "scheduler",
            "system:kube-controller-manager": "controller-manager",
            "kubernetes-admin": "kubectl"}


def watcher_class(user: str) -> str:
    """The class a client's identity belongs to: every kubelet is one class."""
    if user.startswith("system:node:"):
        return "kubelets"
    return _CLASSES.get(user, user)


class FanoutStats:
    """Counters per virtual second (int(clock.now)) and watcher class."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.events: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.bytes: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.encoded: dict[int, int] = defaultdict(int)
        self.lists: dict[int, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))

    def sent(self, klass: str, size: int) -> None:
        second = int(self.clock.now)
        self.events[second][klass] += 1
        self.bytes[second][klass] += size

    def encoded_once(self, size: int) -> None:
        self.encoded[int(self.clock.now)] += size

    def listed(self, user: str, path: str) -> None:
        self.lists[int(self.clock.now)][(watcher_class(user), path)] += 1

    def totals(self) -> dict[str, dict[str, int]]:
        """Everything so far: events and bytes per class, lists per "class/path"."""
        events: dict[str, int] = defaultdict(int)
        sizes: dict[str, int] = defaultdict(int)
        lists: dict[str, int] = defaultdict(int)
        for per in self.events.values():
            for k, n in per.items():
                events[k] += n
        for per in self.bytes.values():
            for k, n in per.items():
                sizes[k] += n
        for per_list in self.lists.values():
            for (k, path), n in per_list.items():
                lists[f"{k}/{path}"] += n
        return {"events": dict(events), "bytes": dict(sizes), "lists": dict(lists),
                "encoded": {"all": sum(self.encoded.values())}}

    def series(self, what: str, start: int, end: int) -> dict[str, list[int]]:
        """Per-second counts over [start, end) by class ("events", "bytes") or by
        "class/path" ("lists"), zeros where nothing happened."""
        out: dict[str, list[int]] = {}
        for i, second in enumerate(range(start, end)):
            if what == "lists":
                row = {f"{k}/{p}": n for (k, p), n in self.lists.get(second, {}).items()}
            else:
                row = dict((self.events if what == "events" else self.bytes).get(second, {}))
            for key, n in row.items():
                out.setdefault(key, [0] * (end - start))[i] = n
        return out

    def reset(self) -> None:
        self.events.clear()
        self.bytes.clear()
        self.encoded.clear()
        self.lists.clear()
