"""DeltaFIFO: the queue between a reflector and an informer (client-go tools/cache/delta_fifo.go).

The reflector turns LIST and WATCH into add/update/delete/replace calls; the informer pops.
For each object key the FIFO keeps the Deltas (every change since the key was last popped,
oldest first), and keys come out in the order they first changed. So the informer sees
everything that happened to an object, and an object that changes a lot does not jump the line.

Three more things happen here that the informer relies on:

* replace(list) after a (re)list emits Replaced for every listed object and a Deleted
  tombstone, DeletedFinalStateUnknown, for every object the cache knew but the list lacks: its
  delete event was missed while the watch was down, so its final state is unknown;
* resync() emits Sync for every cached object that has nothing pending;
* has_synced() turns true once everything from the first replace has been popped;
* a transformer (DeltaFIFOOptions.Transformer, set by SharedIndexInformer.set_transform) sees
  every object once, as it enters: an informer keeps what it returns, not what was listed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from kubelab.client.indexer import KeyFunc, KeyFuncError, meta_namespace_key_func
from kubelab.sim.clock import Clock, Timer

__all__ = [
    "Added", "Deleted", "DeletedFinalStateUnknown", "Delta", "DeltaFIFO", "DeltaType", "Deltas",
    "FIFOClosedError", "KeyListerGetter", "PopProcessFunc", "Replaced", "RequeueError", "Sync",
    "TransformFunc", "Updated", "deletion_handling_meta_namespace_key_func",
]

# TransformFunc (tools/cache/controller.go): given an object as it was listed or watched,
# return the object to keep. It may change its argument (the object is the informer's own).
TransformFunc = Callable[[Any], Any]


class DeltaType(StrEnum):
    Added = "Added"
    Updated = "Updated"
    Deleted = "Deleted"
    Replaced = "Replaced"  # listed by a (re)list: may or may not have changed
    Sync = "Sync"  # a periodic resync: nothing changed


Added, Updated, Deleted = DeltaType.Added, DeltaType.Updated, DeltaType.Deleted
Replaced, Sync = DeltaType.Replaced, DeltaType.Sync


@dataclass(frozen=True)
class Delta:
    """One change: its type, and the object after it (for Deleted: its last known state)."""

    type: DeltaType
    object: Any


class Deltas(list[Delta]):
    """Every change to one object since it was last popped, oldest first."""

    def oldest(self) -> Delta | None:
        return self[0] if self else None

    def newest(self) -> Delta | None:
        return self[-1] if self else None


@dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """A deletion seen only by its absence from a relist. obj is the last state we knew,
    which may be stale (or None if even that is unknown)."""

    key: str
    obj: Any


class KeyListerGetter(Protocol):
    """What the FIFO needs of the informer's cache ("known objects"); an Indexer qualifies."""

    def list_keys(self) -> list[str]: ...

    def get_by_key(self, key: str) -> tuple[Any, bool]: ...


class RequeueError(Exception):
    """Raised by a pop() process function to put the deltas back (client-go's ErrRequeue).

    pop() then re-raises `err`, if given. Upstream removed ErrRequeue in 2025 (v0.33): a
    requeued key goes to the back of the line, so the informer's view moves back in time.
    kubelab keeps it to teach that trade-off; the reference informer does not use it.
    """

    def __init__(self, err: Exception | None = None) -> None:
        super().__init__(str(err) if err else "the popped item should be requeued")
        self.err = err


class FIFOClosedError(Exception):
    """client-go's ErrFIFOClosed: pop() on a closed, empty queue."""

    def __init__(self) -> None:
        super().__init__("DeltaFIFO: manipulating with closed queue")


# process(deltas, is_in_initial_list): handles one key's deltas; may raise RequeueError.
PopProcessFunc = Callable[[Deltas, bool], None]


def deletion_handling_meta_namespace_key_func(obj: Any) -> str:
    """DeletionHandlingMetaNamespaceKeyFunc: a tombstone's key, else meta_namespace_key_func."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key_func(obj)


def dedup_deltas(deltas: Deltas) -> None:
    """Merge the last two deltas if they are the same event: today, two deletions. The one
    with more information wins: a real Deleted over a DeletedFinalStateUnknown tombstone."""
    if len(deltas) < 2:
        return
    b, a = deltas[-2], deltas[-1]
    if a.type == Deleted and b.type == Deleted:
        keep = a if isinstance(b.object, DeletedFinalStateUnknown) else b
        deltas[-2:] = [keep]


class DeltaFIFO:
    """A FIFO of object keys, each holding that object's Deltas.

    emit_delta_type_replaced=True (what shared informers use) makes replace() emit Replaced;
    False gives the old behaviour, Sync. known_objects is the informer's cache: it decides which
    keys replace() tombstones, which deletes are worth reporting, and what resync() emits.
    """

    def __init__(
        self,
        key_function: KeyFunc = meta_namespace_key_func,
        known_objects: KeyListerGetter | None = None,
        emit_delta_type_replaced: bool = True,
        clock: Clock | None = None,
        name: str = "DeltaFIFO",
        transformer: TransformFunc | None = None,
    ) -> None:
        self.key_function = key_function
        self.transformer = transformer
        self.known_objects = known_objects
        self.emit_delta_type_replaced = emit_delta_type_replaced
        self.name = name
        self._clock = clock
        # A key is in _queue if and only if it is in _items; _queue has no duplicates and
        # every Deltas in _items has at least one Delta.
        self._items: dict[str, Deltas] = {}
        self._queue: deque[str] = deque()
        # populated: the first replace() happened, or add/update/delete came first.
        self._populated = False
        # How many keys of the first replace() have not been popped yet.
        self._initial_population_count = 0
        self._closed = False
        self._ready_callbacks: list[Callable[[], None]] = []
        self._wake: Timer | None = None

    def key_of(self, obj: Any) -> str:
        """The key function, plus the keys of Deltas and DeletedFinalStateUnknown."""
        if isinstance(obj, Deltas):
            newest = obj.newest()
            if newest is None:
                raise KeyFuncError(obj, "0 length Deltas object; can't get key")
            obj = newest.object
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        try:
            return self.key_function(obj)
        except KeyFuncError:
            raise
        except Exception as err:
            raise KeyFuncError(obj, err) from err

    def has_synced(self) -> bool:
        """True once add/update/delete came first, or the first replace() is all popped."""
        return self._populated and self._initial_population_count == 0

    def add(self, obj: Any) -> None:
        self._populated = True
        self._queue_action(Added, obj)

    def update(self, obj: Any) -> None:
        self._populated = True
        self._queue_action(Updated, obj)

    def delete(self, obj: Any) -> None:
        """Queue a Deleted delta, unless the object is unknown both here and in known_objects
        (a relist already reported its deletion: don't report it twice)."""
        key = self.key_of(obj)
        self._populated = True
        if key not in self._items:
            if self.known_objects is None:
                return
            _, exists = self.known_objects.get_by_key(key)
            if not exists:
                return
        self._queue_action(Deleted, obj)

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        """A (re)list result: Replaced (or Sync) for each object, then tombstones for the keys
        we knew, queued or cached, that the list lacks. resource_version is unused, as
        upstream."""
        action = Replaced if self.emit_delta_type_replaced else Sync
        listed = [(self.key_of(obj), obj) for obj in objects]  # a bad object changes nothing
        keys = {key for key, _ in listed}
        for _, obj in listed:
            self._queue_action(action, obj)

        queued_deletions = 0
        # Keys with pending deltas: the last object we heard of is their newest delta's. We
        # walk them in FIFO order (upstream ranges over a Go map, in random order).
        for key in list(self._queue):
            if key in keys:
                continue
            newest = self._items[key][-1].object
            if isinstance(newest, DeletedFinalStateUnknown):
                newest = newest.obj
            queued_deletions += 1
            self._queue_action(Deleted, DeletedFinalStateUnknown(key, newest))
        # Keys only the cache knows: the last object we heard of is the cached one.
        if self.known_objects is not None:
            for key in self.known_objects.list_keys():
                if key in keys or key in self._items:
                    continue
                cached, exists = self.known_objects.get_by_key(key)
                queued_deletions += 1
                self._queue_action(Deleted, DeletedFinalStateUnknown(key, cached if exists else None))

        if not self._populated:
            self._populated = True
            self._initial_population_count = len(keys) + queued_deletions

    def resync(self) -> None:
        """Queue Sync for every known object with no pending deltas (those would carry a
        newer state than the cache's, and a Sync would go back in time)."""
        if self.known_objects is None:
            return
        for key in self.known_objects.list_keys():
            obj, exists = self.known_objects.get_by_key(key)
            if exists and not self._items.get(self.key_of(obj)):
                self._queue_action(Sync, obj)

    def pop(self, process: PopProcessFunc) -> Deltas | None:
        """Take the oldest key's Deltas off the queue and hand them to process.

        process(deltas, is_in_initial_list) runs before pop returns, as under client-go's lock.
        If it raises RequeueError the deltas go back (at the end of the line, unless the key
        was queued again meanwhile) and pop re-raises its err, if any; any other exception
        propagates and the deltas are gone. Go's Pop blocks on an empty queue; ours returns
        None (see on_ready), or raises FIFOClosedError once closed.
        """
        if not self._queue:
            if self._closed:
                raise FIFOClosedError()
            return None
        is_in_initial_list = not self.has_synced()
        key = self._queue.popleft()
        if self._initial_population_count > 0:
            self._initial_population_count -= 1
        deltas = self._items.pop(key)
        try:
            process(deltas, is_in_initial_list)
        except RequeueError as requeue:
            self._add_if_not_present(key, deltas)
            if requeue.err is not None:
                raise requeue.err from requeue
        return deltas

    def close(self) -> None:
        """Let the consumer stop: pop() on an empty closed queue raises FIFOClosedError."""
        self._closed = True
        self._signal()

    def is_closed(self) -> bool:
        return self._closed

    def on_ready(self, callback: Callable[[], None]) -> None:
        """Wake callback() (via clock.call_later(0); one wake-up per burst) when a key is
        queued or the FIFO closes, as Go's cond.Broadcast wakes a blocked Pop. The consumer
        should pop() until it returns None. Needs DeltaFIFO(clock=...)."""
        if self._clock is None:
            raise ValueError("DeltaFIFO.on_ready needs a clock: DeltaFIFO(..., clock=clock)")
        self._ready_callbacks.append(callback)
        if self._queue or self._closed:
            self._signal()

    # Inspection (upstream keeps these for its tests; handy in notebooks).

    def list_keys(self) -> list[str]:
        """Queued keys, in the order they will be popped."""
        return list(self._queue)

    def get_by_key(self, key: str) -> tuple[Deltas | None, bool]:
        """A copy of key's pending Deltas and True, or (None, False)."""
        if key in self._items:
            return Deltas(self._items[key]), True
        return None, False

    def __len__(self) -> int:
        return len(self._queue)

    def __repr__(self) -> str:
        return f"<{self.name} keys={list(self._queue)!r} synced={self.has_synced()}>"

    def _queue_action(self, action: DeltaType, obj: Any) -> None:
        key = self.key_of(obj)
        # Every object comes through here once: the place for the transformer. A tombstone
        # and a Sync carry an object that went through it already (queueActionInternalLocked).
        if self.transformer is not None and action != Sync \
                and not isinstance(obj, DeletedFinalStateUnknown):
            obj = self.transformer(obj)
        deltas = self._items.get(key)
        if deltas is None:
            deltas = self._items[key] = Deltas()
            self._queue.append(key)
            self._signal()
        deltas.append(Delta(action, obj))
        dedup_deltas(deltas)

    def _add_if_not_present(self, key: str, deltas: Deltas) -> None:
        self._populated = True
        if key in self._items:
            return
        self._items[key] = deltas
        self._queue.append(key)
        self._signal()

    def _signal(self) -> None:
        if self._clock is not None and self._ready_callbacks and self._wake is None:
            self._wake = self._clock.call_later(0, self._wake_up)

    def _wake_up(self) -> None:
        self._wake = None
        if self._queue or self._closed:
            for callback in list(self._ready_callbacks):
                callback()
