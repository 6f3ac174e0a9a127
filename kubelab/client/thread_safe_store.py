"""Objects by key, plus indices (client-go tools/cache/thread_safe_store.go, index.go).

An index answers "which keys have this indexed value?" without scanning every object: the
"namespace" index maps "default" to the keys of every object in namespace default, a
"nodeName" index maps "node-1" to the keys of the pods bound to node-1. Every add, update and
delete keeps all indices up to date, so readers (listers, controllers) only look things up.

kubelab is single-threaded, so there is no lock; the name is kept so the Go source maps 1:1.
"""

from __future__ import annotations

import builtins  # these classes have a list() method (Store.List): annotations say builtins.list
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["IndexFunc", "Indexers", "ThreadSafeStore"]

# Computes the indexed values of an object (usually one, possibly none or several).
IndexFunc = Callable[[Any], list[str]]
# Index name -> the function that computes it.
Indexers = dict[str, IndexFunc]
# Indexed value -> keys having that value. The keys are a dict used as an ordered set: a Python
# set of strings iterates in a different order in every process (hash randomization), and
# by_index must answer the same way on every run.
Index = dict[str, dict[str, None]]


class ThreadSafeStore:
    """threadSafeMap: a key -> object map whose indices follow every change.

    Stored objects are shared with every reader and must be treated as read-only.
    """

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, Any] = {}
        self._indexers: Indexers = dict(indexers or {})
        self._indices: dict[str, Index] = {name: {} for name in self._indexers}

    def add(self, key: str, obj: Any) -> None:
        self.update(key, obj)

    def update(self, key: str, obj: Any) -> None:
        self._update_indices(self._items.get(key), obj, key)
        self._items[key] = obj

    def delete(self, key: str) -> None:
        if key in self._items:
            self._update_indices(self._items[key], None, key)
            del self._items[key]

    def get(self, key: str) -> tuple[Any, bool]:
        """(object, True), or (None, False) when nothing is stored under key."""
        if key in self._items:
            return self._items[key], True
        return None, False

    def list(self) -> list[Any]:
        """Every object, in the order keys were first stored (Go's map order is random)."""
        return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        return list(self._items)

    def replace(self, items: Mapping[str, Any], resource_version: str = "") -> None:
        """Swap in a whole new set of objects and rebuild every index.

        resource_version is the list's resourceVersion; it is accepted for the Store
        interface and not kept (the reflector tracks it).
        """
        indices: dict[str, Index] = {name: {} for name in self._indexers}
        for key, obj in items.items():  # compute everything first: an error changes nothing
            for name, index in indices.items():
                for value in self._index_values(name, obj, key):
                    index.setdefault(value, {})[key] = None
        self._items = dict(items)
        self._indices = indices

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """Objects sharing at least one indexed value with obj, on the named index."""
        index = self._index(index_name)
        keys: dict[str, None] = {}
        for value in self._index_values(index_name, obj, "<query>"):
            keys.update(index.get(value, {}))
        return [self._items[key] for key in keys]

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        """Keys of the objects whose indexed values include indexed_value, sorted."""
        return sorted(self._index(index_name).get(indexed_value, {}))

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value the named index currently holds."""
        return list(self._indices.get(index_name, {}))

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        """Objects whose indexed values include indexed_value, e.g. by_index("namespace", "default")."""
        return [self._items[key] for key in self._index(index_name).get(indexed_value, {})]

    def get_indexers(self) -> Indexers:
        return dict(self._indexers)

    def add_indexers(self, new_indexers: Mapping[str, IndexFunc]) -> None:
        """Add indices, even after objects are stored: existing objects are indexed at once."""
        conflict = sorted(set(self._indexers) & set(new_indexers))
        if conflict:
            raise ValueError(f"indexer conflict: {conflict}")
        indices: dict[str, Index] = {name: {} for name in new_indexers}
        self._indexers.update(new_indexers)
        try:
            for key, obj in self._items.items():
                for name, index in indices.items():
                    for value in self._index_values(name, obj, key):
                        index.setdefault(value, {})[key] = None
        except Exception:
            for name in new_indexers:
                del self._indexers[name]
            raise
        self._indices.update(indices)

    def __len__(self) -> int:
        return len(self._items)

    def resync(self) -> None:
        """Nothing to do: a store has no pending notifications (Store interface)."""

    def _index(self, index_name: str) -> Index:
        if index_name not in self._indexers:
            raise ValueError(f"Index with name {index_name} does not exist")
        return self._indices[index_name]

    def _index_values(self, name: str, obj: Any, key: str) -> Iterable[str]:
        try:
            return self._indexers[name](obj)
        except Exception as err:
            raise ValueError(f'unable to calculate an index entry for key "{key}" '
                             f'on index "{name}": {err}') from err

    def _update_indices(self, old: Any, new: Any, key: str) -> None:
        # Compute every index's old and new values before touching any index, so an index
        # function that fails on `new` leaves the store as it was.
        changes = []
        for name in self._indexers:
            old_values = set(self._index_values(name, old, key)) if old is not None else set()
            new_values = list(self._index_values(name, new, key)) if new is not None else []
            changes.append((self._indices[name], old_values, new_values))
        for index, old_values, new_values in changes:
            for value in old_values.difference(new_values):
                keys = index[value]
                del keys[key]
                if not keys:
                    del index[value]  # no empty sets left behind for deleted values
            for value in new_values:
                index.setdefault(value, {})[key] = None
