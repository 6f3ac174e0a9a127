"""What the store keeps and what watchers receive: KeyValue, Event, WatchResponse.

The shapes follow etcd's api/mvccpb/kv.proto and etcdserverpb.WatchResponse. Every record is
immutable, so a reader can never change stored state through the object it was handed; values
are bytes for the same reason (the API server stores encoded JSON, as it does in etcd).

They are NamedTuples rather than frozen dataclasses: every write makes a KeyValue and an
Event, and a tuple is several times cheaper to build. A tuple of strs, bytes and ints is also
left alone by Python's cyclic garbage collector, which matters for a store that keeps every
version since the last compaction.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["DELETE", "PUT", "Event", "EventType", "KeyValue", "WatchResponse"]

EventType = Literal["PUT", "DELETE"]
PUT: EventType = "PUT"
DELETE: EventType = "DELETE"


class KeyValue(NamedTuple):
    """One version of one key.

    A deleted key is recorded as a tombstone: a KeyValue with create_revision == 0, version == 0,
    an empty value and mod_revision == the revision of the delete (as etcd does, see
    server/storage/mvcc/kvstore_txn.go delete and watchable_store_txn.go).
    """

    key: str
    value: bytes
    create_revision: int  # revision that created this generation of the key; 0 for a tombstone
    mod_revision: int     # revision of this very write
    version: int          # 1 on create, +1 per put; a delete ends the generation
    lease: int = 0        # lease ID attached to the key (0: none); leases do not expire here


class Event(NamedTuple):
    """One change, as a watcher sees it. For a DELETE, kv is the tombstone."""

    type: EventType
    kv: KeyValue
    prev_kv: KeyValue | None = None  # the key before this change; None on create


class WatchResponse(NamedTuple):
    """A batch of events for one watcher, in revision order.

    header_revision is the store revision this watcher has now seen everything up to.
    A canceled response carries no events; compact_revision != 0 says why: the watch asked for
    history older than the compaction point (etcd's WatchResponse.compact_revision).
    """

    events: tuple[Event, ...]
    header_revision: int
    compact_revision: int = 0
    canceled: bool = False
    cancel_reason: str = ""
