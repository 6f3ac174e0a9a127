"""The watch cache: one store watch per resource, fanned out to every API watcher.

Upstream's cacher (k8s.io/apiserver/pkg/storage/cacher/cacher.go, watch_cache.go,
cache_watcher.go) keeps one etcd watch per resource and a sliding window of recent events, so
a thousand watchers cost a thousand filter calls per event, not a thousand etcd watches. A
watch from a resourceVersion older than the window (or than the store's compaction point) gets
a single ERROR event: 410 `too old resource version: <rv> (<oldest>)`.

Filtering follows cacheWatcher.convertToWatchEvent: an object that starts to match a watcher's
selectors arrives as ADDED, one that stops matching as DELETED. Watchers whose field selector
asks for one value of the resource's trigger field (pods: spec.nodeName=<node>, nodes:
metadata.name=<node>; every kubelet has one of each) are indexed by that value, as upstream's
indexedTriggerFunc does, so each event is offered only to the watchers it can concern.

The pod cache also keeps upstream's index of its objects by spec.nodeName (pod storage's
Indexers, pkg/registry/core/pod/strategy.go NodeNameIndexFunc under the name
"f:spec.nodeName"): a kubelet's list of its own pods reads the keys the index names, as the
watch cache's list does with a field selector on an indexed field (watch_cache.go list:
ByIndex, then the predicate filters). It serves only when it has been sent every change the
store has made to its keys: upstream's consistent read waits for that (WaitUntilFreshAndList); a simulated
server cannot wait inside a request, so it reads the store instead, as upstream does when the
cache cannot serve (cacher.go delegates the list to etcd). Every other list goes to the store
too: this cache keeps the index's keys, not the objects. delegator.py makes that choice for
every list (CacheDelegator.GetList); fanout.py counts which path served each list, and every
event sent per watcher class and second.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubelab.api.errors import resource_expired
from kubelab.api.request import WatchEvent
from kubelab.apiserver.storage.codec import decode
from kubelab.apiserver.storage.fanout import watcher_class
from kubelab.apiserver.storage.selection import Predicate
from kubelab.store import KeyValue, WatchResponse

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["INDEX_FIELDS", "CacheEvent", "CacheWatcher", "Cacher", "WatchInfo"]

DEFAULT_CAPACITY = 10_000  # events kept per resource for watches from a recent resourceVersion
# The field each built-in resource's watch cache indexes its objects by (storage.FieldIndex).
INDEX_FIELDS = {"pods": "spec.nodeName"}


@dataclass(frozen=True, slots=True)
class WatchInfo:
    """Who watches what: handed to server.watch_interceptor with every event."""

    id: int
    user: str
    resource: str
    namespace: str
    label_selector: str
    field_selector: str


class CacheEvent:
    """One change of one object. Decoded lazily, only for watchers with selectors to test:
    nobody pays for events nobody filters. The window keeps the bytes, not the decoded
    objects (forget_decoded), so a long window costs little memory."""

    __slots__ = ("_node", "_obj", "_prev", "encoded", "key", "namespace", "prev_value", "rev",
                 "value")

    def __init__(self, key: str, namespace: str, rev: int, value: bytes | None,
                 prev_value: bytes | None) -> None:
        self.key, self.namespace, self.rev = key, namespace, rev
        self.value, self.prev_value = value, prev_value  # value None: deleted
        self._obj: dict[str, Any] | None = None
        self._prev: dict[str, Any] | None = None
        self._node: tuple[str, str] | None = None
        self.encoded = False  # counted in the fan-out's bytes encoded (once per event)

    @property
    def obj(self) -> dict[str, Any] | None:
        if self._obj is None and self.value is not None:
            self._obj = decode(self.value, self.rev)
        return self._obj

    @property
    def prev(self) -> dict[str, Any] | None:
        if self._prev is None and self.prev_value is not None:
            self._prev = decode(self.prev_value, self.rev)
        return self._prev

    def forget_decoded(self) -> None:
        self._obj = self._prev = None

    def take(self) -> dict[str, Any]:
        """The new object for one watcher to keep. The copy decoded to test selectors goes to
        the first watcher that takes it (nobody else holds it); later ones get fresh copies."""
        obj, self._obj = self._obj, None
        return obj if obj is not None else decode(self.value or b"", self.rev)

    def take_prev(self) -> dict[str, Any]:
        """The old object for one watcher to keep, as take() does for the new one."""
        prev, self._prev = self._prev, None
        return prev if prev is not None else decode(self.prev_value or b"", self.rev)

    def nodes(self) -> tuple[str, str]:
        """spec.nodeName of the new and the old pod ("" when absent)."""
        if self._node is None:
            self._node = (_node_name(self.obj), _node_name(self.prev))
        return self._node

    def triggers(self, resource: str) -> tuple[str, str]:
        """The new and the old object's value of the field `resource` is indexed by."""
        if resource == "pods":
            return self.nodes()
        name = self.key.rsplit("/", 1)[-1]  # metadata.name is the key's last segment
        return name, name


class CacheWatcher:
    """One API watch. Events leave in order through an outbox, on the clock."""

    def __init__(self, cacher: Cacher, info: WatchInfo, predicate: Predicate, min_rev: int,
                 on_event: Callable[[WatchEvent], None], on_close: Callable[[], None] | None,
                 initial: list[WatchEvent]) -> None:
        self.cacher, self.info, self.predicate, self.min_rev = cacher, info, predicate, min_rev
        self.on_event, self.on_close = on_event, on_close
        self.klass = watcher_class(info.user)  # for the fan-out counters
        self.closed = False
        # Everything known when the watch opens (initial state, the window's events) leaves
        # in the first flush, a clock callback later; live events queue behind it.
        self._outbox: deque[WatchEvent] = deque(initial)
        self._flush_pending = True
        cacher.server.clock.call_later(0, self._flush)

    def stop(self) -> None:
        """The client is done: no event arrives after this."""
        if not self.closed:
            self.closed = True
            self._outbox.clear()
            self.cacher.remove(self)

    def close(self) -> None:
        """The server ends the watch: stop, then tell the client through on_close."""
        if self.closed:
            return
        self.stop()
        if self.on_close is not None:
            try:
                self.on_close()
            except Exception as err:  # a client's bug must not break the server
                self.cacher.server.record_callback_error(self.info, "on_close", err)

    def offer(self, ev: CacheEvent) -> None:
        """convertToWatchEvent: ADDED, MODIFIED, DELETED or nothing, for this watcher."""
        if ev.rev <= self.min_rev:
            return
        p = self.predicate
        if p.namespace and ev.namespace != p.namespace:
            return
        if p.everything:  # no selector: whether it exists now and before is all we need
            now, before = ev.value is not None, ev.prev_value is not None
        else:
            obj, prev = ev.obj, ev.prev
            now = obj is not None and p.matches(obj)
            before = prev is not None and p.matches(prev)
        # Each watcher gets its own copy, as if it had read its own HTTP stream.
        if now and ev.value is not None:
            self._count(ev, ev.value)
            self.send({"type": "MODIFIED" if before else "ADDED", "object": ev.take()})
        elif before and ev.prev_value is not None:
            # The old content, at the event's resourceVersion (cache_watcher.go).
            self._count(ev, ev.prev_value)
            self.send({"type": "DELETED", "object": ev.take_prev()})

    def _count(self, ev: CacheEvent, data: bytes) -> None:
        fanout = self.cacher.server.fanout
        fanout.sent(self.klass, len(data))
        if not ev.encoded:
            ev.encoded = True
            fanout.encoded_once(len(data))

    def send(self, event: WatchEvent) -> None:
        if self._outbox or self._flush_pending:
            self._outbox.append(event)
        else:
            self._deliver(event)

    def _flush(self) -> None:
        self._flush_pending = False
        while self._outbox and not self.closed:
            self._deliver(self._outbox.popleft())

    def _deliver(self, event: WatchEvent) -> None:
        interceptor = self.cacher.server.watch_interceptor
        if interceptor is None:
            self.emit(event)
            return
        for delay, out in interceptor(self.info, event):  # the fault layer's hook
            self.cacher.server.clock.call_later(max(0.0, delay), self.emit, out)

    def emit(self, event: WatchEvent) -> None:
        if self.closed:
            return
        server = self.cacher.server
        if server.trace is not None and server.trace.enabled:
            obj = event.get("object") or {}
            meta = obj.get("metadata") or {}
            where = "/".join(p for p in (self.info.resource, meta.get("namespace", ""),
                                         meta.get("name", "")) if p)
            server.trace.record(server.name, "watch-event", where, type=event.get("type"),
                                to=self.info.user, rv=meta.get("resourceVersion", ""))
        try:
            self.on_event(event)
        except Exception as err:  # a watcher's bug closes its own watch, nothing else
            server.record_callback_error(self.info, "on_event", err)
            self.close()
            return
        if event.get("type") == "ERROR":
            self.close()


class Cacher:
    """The watch cache of one resource (the keys under one prefix)."""

    def __init__(self, server: APIServer, resource: str, prefix: str,
                 on_change: Callable[[list[CacheEvent]], None] | None = None,
                 capacity: int = DEFAULT_CAPACITY, index_field: str | None = None) -> None:
        self.server, self.resource, self.prefix = server, resource, prefix
        self.on_change = on_change
        self.window: deque[CacheEvent] = deque(maxlen=capacity)
        self.evicted = False
        self.start_rev = server.store.revision  # every event after this is (or was) in window
        self.watchers: dict[int, CacheWatcher] = {}
        # Watchers that ask for one value of the indexed trigger field (TRIGGER_FIELDS), by it.
        self.by_trigger: dict[str, dict[int, CacheWatcher]] = {}
        # The index of the objects by index_field (INDEX_FIELDS), if the resource has one:
        # value -> keys, and key -> value. Invariant: it holds every object under prefix as of
        # the last event the store watch has been sent (fresh() says whether that is now).
        self.index_field = index_field
        self.index: dict[str, set[str]] = {}
        self._indexed: dict[str, str] = {}
        if index_field is not None:  # the cacher's initial list (reflector.ListAndWatch)
            for kv in server.store.range(prefix, prefix=True).kvs:
                self._index_object(kv.key, decode(kv.value, kv.mod_revision))
        self._store_watch = server.store.watch(prefix, prefix=True, prev_kv=True,
                                               callback=self._on_response)

    def open_watchers(self) -> list[CacheWatcher]:
        return [*self.watchers.values(),
                *(w for ws in self.by_trigger.values() for w in ws.values())]

    def stop(self) -> None:
        self._store_watch.cancel()
        for watcher in self.open_watchers():
            watcher.close()

    def oldest(self) -> int:
        """The oldest resourceVersion a watch can start from.

        Older ones are gone from the window (upstream's rule), or compacted away in the store:
        then the client's view is too old to continue and it must relist (docs/ARCHITECTURE.md
        section 6: compacting the store makes watchers relist)."""
        base = self.window[0].rev - 1 if self.evicted and self.window else self.start_rev
        return max(base, self.server.store.compact_revision)

    def add(self, info: WatchInfo, predicate: Predicate, rv: int, initial: list[WatchEvent],
            on_event: Callable[[WatchEvent], None],
            on_close: Callable[[], None] | None) -> CacheWatcher:
        """A watcher for events after rv, first sent `initial` then the window's events."""
        if rv < self.oldest():
            status = resource_expired(f"too old resource version: {rv} ({self.oldest()})").status
            return CacheWatcher(self, info, predicate, rv, on_event, on_close,
                                [{"type": "ERROR", "object": status}])
        watcher = CacheWatcher(self, info, predicate, rv, on_event, on_close, initial)
        recent = []
        for ev in reversed(self.window):  # the window's events after rv, oldest first
            if ev.rev <= rv:
                break
            recent.append(ev)
        for ev in reversed(recent):
            watcher.offer(ev)
            ev.forget_decoded()
        if predicate.trigger is not None:
            self.by_trigger.setdefault(predicate.trigger, {})[info.id] = watcher
        else:
            self.watchers[info.id] = watcher
        return watcher

    def remove(self, watcher: CacheWatcher) -> None:
        self.watchers.pop(watcher.info.id, None)
        value = watcher.predicate.trigger
        if value is not None and value in self.by_trigger:
            self.by_trigger[value].pop(watcher.info.id, None)
            if not self.by_trigger[value]:
                del self.by_trigger[value]

    def _on_response(self, response: WatchResponse) -> None:
        if response.canceled:  # cannot happen to a synced watch; start over if it does
            self.server.restart_cacher(self.resource)
            return
        events = [self._cache_event(e.kv, e.prev_kv, e.type == "DELETE")
                  for e in response.events]
        if self.index_field is not None:  # the whole batch first: a watcher may list at once
            for ev in events:
                self._index_object(ev.key, ev.obj)
        for ev in events:
            if len(self.window) == self.window.maxlen:
                self.evicted = True
            self.window.append(ev)
            self._dispatch(ev)
        if self.on_change is not None and events:
            self.on_change(events)

    # ------------------------------------------------------------------ the index

    def fresh(self) -> bool:
        """Has the store watch been sent every change the store has made to its keys?"""
        return self._store_watch.caught_up()

    def by_index(self, value: str) -> list[str] | None:
        """The keys of the objects whose indexed field is value, in key order (store.ByIndex);
        None when this cache cannot serve the list: it has no index, or is not fresh."""
        if self.index_field is None or not self.fresh():
            return None
        return sorted(self.index.get(value, ()))

    def _index_object(self, key: str, obj: dict[str, Any] | None) -> None:
        """The index after key now holds obj (None: deleted)."""
        old = self._indexed.pop(key, None)
        if old is not None:
            keys = self.index[old]
            keys.discard(key)
            if not keys:
                del self.index[old]
        if obj is not None:
            value = _node_name(obj)  # NodeNameIndexFunc: the only index (INDEX_FIELDS)
            self._indexed[key] = value
            self.index.setdefault(value, set()).add(key)

    def _cache_event(self, kv: KeyValue, prev: KeyValue | None, deleted: bool) -> CacheEvent:
        rest = kv.key[len(self.prefix):]
        namespace = rest.split("/", 1)[0] if "/" in rest else ""
        return CacheEvent(kv.key, namespace, kv.mod_revision, None if deleted else kv.value,
                          prev.value if prev is not None else None)

    def _dispatch(self, ev: CacheEvent) -> None:
        for watcher in list(self.watchers.values()):
            watcher.offer(ev)
        if self.by_trigger:
            now, before = ev.triggers(self.resource)
            targets = dict(self.by_trigger.get(now, {}))
            if before != now:
                targets.update(self.by_trigger.get(before, {}))
            for watcher in targets.values():
                watcher.offer(ev)
        ev.forget_decoded()


def _node_name(pod: dict[str, Any] | None) -> str:
    """spec.nodeName ("" when absent): NodeNameTriggerFunc and NodeNameIndexFunc upstream."""
    return ((pod or {}).get("spec") or {}).get("nodeName") or ""
