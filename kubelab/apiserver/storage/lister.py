"""A lister over the watch cache: one resource's objects as the API server's own controllers
read them.

Upstream's in-process controllers (priority and fairness's configController) read through
client-go shared informers made from a loopback client: a reflector lists, then watches, keeps
every object in the informer's indexer (client-go tools/cache/shared_informer.go, store.go),
serves listers from it, and calls the event handlers after each change. kubelab's API server
may not import kubelab.client (a layer contract), so this plays that part with what the server
has: the initial list reads the store, as the reflector's list does, and every later change is
one of the resource's watch cache events (watch_cache.py), which ServedResources hands on here
(its on_change hook), as the informer's watch would. The events the list already holds (at or
before its revision) are skipped, as a reflector watches from its list's resourceVersion.

Departure: the objects are read from this lister, not copied out of it; callers must not
change them (upstream's listers say the same of theirs).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.apiserver.storage.codec import decode
from kubelab.apiserver.storage.watch_cache import CacheEvent

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["CacheLister"]


class CacheLister:
    """The objects under one prefix, as of the last watch cache event it was given."""

    def __init__(self, server: APIServer, prefix: str) -> None:
        self.prefix = prefix
        resp = server.store.range(prefix, prefix=True)  # the reflector's list
        # Invariant: items holds every object under prefix as of revision resource_version.
        self.items: dict[str, Object] = {kv.key: decode(kv.value, kv.mod_revision)
                                         for kv in resp.kvs}
        self.resource_version = resp.revision

    def on_events(self, events: Iterable[CacheEvent]) -> bool:
        """Apply the watch cache's events (in order); whether any changed what list() says."""
        changed = False
        for ev in events:
            if ev.rev <= self.resource_version or not ev.key.startswith(self.prefix):
                continue
            self.resource_version = ev.rev
            if ev.value is None:
                changed = self.items.pop(ev.key, None) is not None or changed
            else:
                self.items[ev.key] = ev.take()
                changed = True
        return changed

    def list(self) -> list[Object]:
        """Every object, in key order (for cluster-scoped objects: by name)."""
        return [self.items[key] for key in sorted(self.items)]

    def get(self, name: str) -> Object | None:
        """A cluster-scoped object by name."""
        return self.items.get(self.prefix + name)
