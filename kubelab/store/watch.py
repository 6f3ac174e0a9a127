"""Watchers: every change, in order, exactly once, delivered later on the clock.

Follows etcd's watchable store (server/storage/mvcc/watchable_store.go, watcher_group.go):
- the event log holds every change since the compaction point, in revision order (etcd reads
  the same thing from its backend, which is keyed by revision);
- a watcher remembers next_rev, the first revision it has not been sent (etcd's minRev);
- a new watcher with an old start revision is *unsynced*: it first replays the log. Once it has
  been sent everything committed it is *synced* and gets each new batch as it commits;
- an unsynced watcher whose next_rev is below the compaction point is canceled with
  compact_revision set (etcd: watchable_store.go syncWatchers / watcher_group.go chooseAll);
  it must relist, which the Kubernetes API server reports as 410 Gone.
A synced watcher is never canceled by a compaction: etcd has already pushed the events into its
channel. We get the same guarantee by never trimming from the log an event that a synced watcher
has not been sent yet, so a watcher that is current when compaction happens misses nothing.

Delivery runs in its own clock callback (call_later(0) after a commit), never inside a writer's
call, and batches every revision committed since the watcher's last batch.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from operator import attrgetter

from kubelab.sim import Clock, Trace
from kubelab.store.kv import Event, WatchResponse

__all__ = ["WatchCallback", "WatchHub", "Watcher"]

WatchCallback = Callable[[WatchResponse], None]
_revision = attrgetter("kv.mod_revision")
_COMPACTED = "mvcc: required revision has been compacted"


class Watcher:
    """One watch. Call cancel() to stop it; no response arrives after that."""

    def __init__(self, hub: WatchHub, watch_id: int, start: str, end: str | None,
                 callback: WatchCallback, prev_kv: bool, next_rev: int, synced: bool) -> None:
        self.id = watch_id
        self.key = start
        self.range_end = end        # None: just `key`; "\0": every key >= key
        self.prev_kv = prev_kv
        self.next_rev = next_rev    # first revision not yet sent to this watcher
        self.synced = synced        # sent everything committed; its events are kept in the log
        self.canceled = False
        self.callback = callback
        self._hub = hub

    def cancel(self) -> None:
        self._hub.remove(self)

    def caught_up(self) -> bool:
        """Has every change to this watcher's keys been sent to it? What etcd's answer to a
        progress request tells a client (watchable_store.go progressIfSync: a progress
        notification at the current revision): the API server's consistent reads from its
        watch cache ask this (cacher.go, watch_cache.go waitUntilFreshAndBlock)."""
        return self._hub.caught_up(self)

    def overlaps(self, lowest: str, highest: str) -> bool:
        """Could a key between lowest and highest (inclusive) be one this watcher watches?"""
        start, end = self.key, self.range_end
        if end is None:
            return lowest <= start <= highest
        return highest >= start and (end == "\0" or lowest < end)

    def select(self, events: list[Event]) -> list[Event]:
        """This watcher's share of events, with prev_kv dropped unless it asked for it."""
        start, end = self.key, self.range_end
        if end is None:
            mine = [e for e in events if e.kv.key == start]
        elif end == "\0":
            mine = [e for e in events if e.kv.key >= start]
        else:
            mine = [e for e in events if start <= e.kv.key < end]
        if self.prev_kv:
            return mine
        return [e if e.prev_kv is None else Event(e.type, e.kv) for e in mine]

    def __repr__(self) -> str:
        state = "canceled" if self.canceled else "synced" if self.synced else "unsynced"
        return f"<Watcher {self.id} {self.key!r}..{self.range_end!r} next_rev={self.next_rev} {state}>"


class WatchHub:
    """The event log and every watcher on it."""

    def __init__(self, clock: Clock, trace: Trace | None, revision: int) -> None:
        self._clock = clock
        self._trace = trace
        # Every change with revision >= the trim point, in revision order; several events of
        # one txn share a revision. The store appends to this very list.
        self.events: list[Event] = []
        self.committed = revision    # newest revision that is durable (see disk.py)
        self.compact_revision = 0
        self._watchers: list[Watcher] = []
        self._next_id = 1
        self._delivery_scheduled = False

    def __len__(self) -> int:
        return len(self._watchers)

    def add(self, start: str, end: str | None, start_revision: int, callback: WatchCallback,
            prev_kv: bool, current: int) -> Watcher:
        # etcd watchable_store.go watch(): 0 or a future revision is synced from the start.
        synced = start_revision == 0 or start_revision > current
        next_rev = max(start_revision, current + 1) if synced else start_revision
        watcher = Watcher(self, self._next_id, start, end, callback, prev_kv, next_rev, synced)
        self._next_id += 1
        self._watchers.append(watcher)
        if not synced and not self._delivery_scheduled:
            self._schedule()  # replay history in a later callback, like any delivery
        return watcher

    def remove(self, watcher: Watcher) -> None:
        if not watcher.canceled:
            watcher.canceled = True
            self._watchers.remove(watcher)

    def caught_up(self, watcher: Watcher) -> bool:
        if not watcher.synced or watcher.canceled:
            return False
        events = self.events
        unsent = events[bisect_left(events, watcher.next_rev, key=_revision):]
        return not unsent or not watcher.select(unsent)

    def commit(self, revision: int) -> None:
        """The disk made revision durable: its events may now be delivered."""
        self.committed = revision
        if self._watchers and not self._delivery_scheduled:
            self._schedule()

    def compact(self, revision: int) -> None:
        self.compact_revision = revision
        self._trim()

    def _schedule(self) -> None:
        self._delivery_scheduled = True
        self._clock.call_later(0, self._deliver)

    def _deliver(self) -> None:
        self._delivery_scheduled = False
        committed = self.committed
        events = self.events
        end = len(events)
        if events and events[-1].kv.mod_revision > committed:
            end = bisect_right(events, committed, key=_revision)
        # Watchers that have been sent the same revisions share one slice of the log (the
        # API server's watch caches, one per resource, are usually all at the same point).
        # The slice's lowest and highest key let most watchers skip it without looking at
        # each event (etcd finds a key's watchers by range; we test each watcher's range).
        pending: dict[int, tuple[list[Event], str, str]] = {}
        for watcher in tuple(self._watchers):  # a callback may add or cancel watchers
            rev = watcher.next_rev
            if rev > committed or watcher.canceled:
                continue
            if not watcher.synced:
                if rev < self.compact_revision:
                    self._cancel_compacted(watcher)
                    continue
                watcher.synced = True
            found = pending.get(rev)
            if found is None:
                unsent = events[bisect_left(events, rev, 0, end, key=_revision):end]
                keys = [e.kv.key for e in unsent] or [""]
                found = pending[rev] = (unsent, min(keys), max(keys))
            watcher.next_rev = committed + 1
            unsent, lowest, highest = found
            if unsent and watcher.overlaps(lowest, highest):
                batch = watcher.select(unsent)
                if batch:
                    watcher.callback(WatchResponse(tuple(batch), committed))
        self._trim()

    def _cancel_compacted(self, watcher: Watcher) -> None:
        self.remove(watcher)
        if self._trace is not None:
            self._trace.record("etcd", "watch-compacted", watcher.key, watch_id=watcher.id,
                               start_revision=watcher.next_rev,
                               compact_revision=self.compact_revision)
        watcher.callback(WatchResponse((), self.committed, self.compact_revision,
                                        canceled=True, cancel_reason=_COMPACTED))

    def _trim(self) -> None:
        """Drop log entries below the compaction point that no synced watcher still needs."""
        events = self.events
        floor = self.compact_revision
        if not events or events[0].kv.mod_revision >= floor:
            return
        for watcher in self._watchers:
            if watcher.synced and watcher.next_rev < floor:
                floor = watcher.next_rev
        del events[:bisect_left(events, floor, key=_revision)]
