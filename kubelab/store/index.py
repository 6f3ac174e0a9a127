"""The key index: every version of every key since the last compaction, and the keys in order.

etcd keeps a B-tree of keyIndex entries (server/storage/mvcc/index.go, key_index.go) whose
revisions point into a bolt database. We keep, per key, the list of its KeyValues in
mod_revision order, tombstones included, which is the same information in one place:
reading key k at revision r is "the last version of k with mod_revision <= r, unless it is a
tombstone".

Keys are Python strs. Comparing strs compares code points, which is the order of their UTF-8
bytes, so ranges sort exactly as etcd sorts byte keys.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from operator import attrgetter

from kubelab.store.kv import KeyValue

__all__ = ["KeyIndex"]

_mod_revision = attrgetter("mod_revision")


class KeyIndex:
    """Per-key version lists plus the sorted key list that range reads walk."""

    def __init__(self) -> None:
        # Invariant: each list is non-empty and sorted by mod_revision; a tombstone
        # (create_revision == 0) is only ever followed by a new generation's first version.
        self._versions: dict[str, list[KeyValue]] = {}
        self._sorted: list[str] = []
        # New keys wait here; they are merged into _sorted by the next range read. Sorting a
        # sorted list plus a short tail is nearly linear, and creates stay O(1).
        self._unsorted: list[str] = []

    def __len__(self) -> int:
        return len(self._versions)

    def latest(self, key: str) -> KeyValue | None:
        """The live version of key, or None if it does not exist now."""
        versions = self._versions.get(key)
        if versions is None:
            return None
        kv = versions[-1]
        return None if kv.create_revision == 0 else kv

    def get(self, key: str, revision: int) -> KeyValue | None:
        """The version of key that was live at revision, or None."""
        versions = self._versions.get(key)
        if versions is None:
            return None
        kv = versions[-1]
        if kv.mod_revision > revision:
            i = bisect_right(versions, revision, key=_mod_revision)
            if i == 0:
                return None
            kv = versions[i - 1]
        return None if kv.create_revision == 0 else kv

    def put(self, key: str, value: bytes, revision: int, lease: int) -> tuple[KeyValue,
                                                                            KeyValue | None]:
        """Record a put at revision; returns (new version, previous live version or None)."""
        versions = self._versions.get(key)
        if versions is None:
            versions = self._versions[key] = []
            self._unsorted.append(key)
            prev = None
        else:
            prev = versions[-1]
            if prev.create_revision == 0:
                prev = None
        if prev is None:
            kv = KeyValue(key, value, revision, revision, 1, lease)
        else:
            kv = KeyValue(key, value, prev.create_revision, revision, prev.version + 1, lease)
        versions.append(kv)
        return kv, prev

    def tombstone(self, key: str, revision: int) -> tuple[KeyValue, KeyValue]:
        """Record the delete of a live key; returns (tombstone, the version it ended)."""
        versions = self._versions[key]
        prev = versions[-1]
        assert prev.create_revision != 0, f"tombstone on deleted key {key!r}"
        kv = KeyValue(key, b"", 0, revision, 0)
        versions.append(kv)
        return kv, prev

    def keys(self, start: str, end: str | None) -> list[str]:
        """Keys ever seen (since compaction) in [start, end); end None: just start;
        end "\\0": every key >= start."""
        if end is None:
            return [start] if start in self._versions else []
        if self._unsorted:
            self._sorted.extend(self._unsorted)
            self._sorted.sort()
            self._unsorted.clear()
        lo = bisect_left(self._sorted, start)
        hi = len(self._sorted) if end == "\0" else bisect_left(self._sorted, end, lo)
        return self._sorted[lo:hi]

    def range(self, start: str, end: str | None, revision: int) -> list[KeyValue]:
        """Live versions at revision of the keys in [start, end), sorted by key."""
        found = []
        for key in self.keys(start, end):
            kv = self.get(key, revision)
            if kv is not None:
                found.append(kv)
        return found

    def compact(self, revision: int) -> None:
        """Forget versions older than revision, keeping each key's version live at revision.

        As etcd's keyIndex.compact, a tombstone is kept only when it is exactly at revision (a
        watcher starting there must still see that delete); a key left with no versions is
        removed.
        """
        gone = []
        for key, versions in self._versions.items():
            i = bisect_right(versions, revision, key=_mod_revision)  # versions[:i] are <= rev
            if i == 0:
                continue
            keep = i - 1
            last = versions[keep]
            if last.create_revision == 0 and last.mod_revision < revision:
                keep = i
            if keep:
                del versions[:keep]
            if not versions:
                gone.append(key)
        if gone:
            for key in gone:
                del self._versions[key]
            dropped = set(gone)
            self._sorted = [k for k in self._sorted if k not in dropped]
            self._unsorted = [k for k in self._unsorted if k not in dropped]

    def versions(self) -> Iterator[KeyValue]:
        """Every stored version, key by key: what a snapshot writes."""
        for key in sorted(self._versions):
            yield from self._versions[key]

    def load(self, kvs: list[KeyValue]) -> None:
        """Refill from versions in key, then mod_revision order (a snapshot's payload)."""
        for kv in kvs:
            self._versions.setdefault(kv.key, []).append(kv)
        self._sorted = sorted(self._versions)
