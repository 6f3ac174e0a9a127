"""A keyed heap: pop the smallest, or reach any item by its key (pkg/scheduler/backend/heap).

The scheduling queue needs both: activeQ pops the most important pod, and an informer event must
find a queued pod by namespace/name to update or delete it. Python's heapq has no delete, so a
deleted or replaced entry stays in the list, marked stale, and is skipped when it surfaces.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

__all__ = ["KeyedHeap"]

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    def __init__(self) -> None:
        self._entries: list[list[Any]] = []  # [sort_key, seq, key, item, live]
        self._by_key: dict[str, list[Any]] = {}
        self._seq = itertools.count()  # equal sort keys pop in insertion order

    def add_or_update(self, key: str, sort_key: Any, item: T) -> None:
        old = self._by_key.get(key)
        if old is not None:
            old[4] = False
        entry = [sort_key, next(self._seq), key, item, True]
        self._by_key[key] = entry
        heapq.heappush(self._entries, entry)

    def get(self, key: str) -> T | None:
        entry = self._by_key.get(key)
        return None if entry is None else entry[3]

    def delete(self, key: str) -> bool:
        entry = self._by_key.pop(key, None)
        if entry is None:
            return False
        entry[4] = False
        return True

    def peek(self) -> T | None:
        self._drop_stale()
        return self._entries[0][3] if self._entries else None

    def pop(self) -> T | None:
        self._drop_stale()
        if not self._entries:
            return None
        entry = heapq.heappop(self._entries)
        del self._by_key[entry[2]]
        return entry[3]  # type: ignore[no-any-return]

    def _drop_stale(self) -> None:
        while self._entries and not self._entries[0][4]:
            heapq.heappop(self._entries)
        if len(self._entries) > 64 and len(self._entries) > 4 * len(self._by_key):
            # Mostly stale entries: rebuild so memory stays proportional to live items.
            self._entries = [e for e in self._entries if e[4]]
            heapq.heapify(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)

    def __iter__(self) -> Iterator[T]:
        """Live items in pop order (sorted; for listing, not for the hot path)."""
        return iter([e[3] for e in sorted(self._by_key.values())])
