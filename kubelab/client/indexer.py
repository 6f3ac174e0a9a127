"""The informer's local cache: a Store with indices (client-go tools/cache/store.go, index.go).

An Indexer turns an object into its key with a key function (`namespace/name`), keeps it in a
ThreadSafeStore, and answers lookups by key or by index without asking the API server. It is
what listers read and what a controller means by "the cache".

Objects in the cache are shared and read-only: every get, list and by_index returns the very
dicts the informer stored. Copy before you change one (kubelab.api.meta.deep_copy), exactly as
client-go says; changing a cached object in place corrupts every other reader's view.
"""

from __future__ import annotations

import builtins  # these classes have a list() method (Store.List): annotations say builtins.list
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubelab.api.meta import namespace_key, split_key
from kubelab.client.thread_safe_store import Indexers, IndexFunc, ThreadSafeStore

__all__ = [
    "NAMESPACE_INDEX",
    "IndexFunc",
    "Indexer",
    "Indexers",
    "KeyFunc",
    "KeyFuncError",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
]

KeyFunc = Callable[[Any], str]

# The lookup name of the most common index: objects by metadata.namespace.
NAMESPACE_INDEX = "namespace"


class KeyFuncError(ValueError):
    """client-go's cache.KeyError (renamed: KeyError is a Python builtin)."""

    def __init__(self, obj: Any, err: object) -> None:
        super().__init__(f"couldn't create key for object {obj!r}: {err}")
        self.obj = obj
        self.err = err


def _metadata(obj: Any) -> Mapping[str, Any]:
    # meta.Accessor: anything that is not an object with metadata has "no meta".
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(meta, Mapping):
        raise ValueError(f"object has no meta: {obj!r}")
    return meta


def meta_namespace_key_func(obj: Any) -> str:
    """MetaNamespaceKeyFunc: `namespace/name`, or `name` for cluster-scoped objects.

    A str is taken as an already computed key (client-go's ExplicitKey).
    """
    if isinstance(obj, str):
        return obj
    _metadata(obj)
    return namespace_key(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """SplitMetaNamespaceKey: `ns/name` -> ("ns", "name"); `name` -> ("", "name")."""
    return split_key(key)


def meta_namespace_index_func(obj: Any) -> list[str]:
    """MetaNamespaceIndexFunc: index objects by metadata.namespace."""
    return [_metadata(obj).get("namespace") or ""]


class Indexer:
    """cache.Indexer (NewIndexer(keyFunc, indexers)): a Store plus named indices.

    With no indexers it is a plain cache.Store (NewStore(keyFunc)). The arguments come in the
    other order than NewIndexer's, because the key function is nearly always the default:
    Indexer({"namespace": meta_namespace_index_func}). get/get_by_key return (object, exists)
    like client-go's (item, exists, err); bad input raises KeyFuncError.
    """

    def __init__(
        self,
        indexers: Mapping[str, IndexFunc] | None = None,
        key_func: KeyFunc = meta_namespace_key_func,
    ) -> None:
        self.key_func = key_func
        self._storage = ThreadSafeStore(indexers)

    def key_of(self, obj: Any) -> str:
        try:
            return self.key_func(obj)
        except KeyFuncError:
            raise
        except Exception as err:
            raise KeyFuncError(obj, err) from err

    def add(self, obj: Any) -> None:
        self._storage.add(self.key_of(obj), obj)

    def update(self, obj: Any) -> None:
        self._storage.update(self.key_of(obj), obj)

    def delete(self, obj: Any) -> None:
        self._storage.delete(self.key_of(obj))

    def get(self, obj: Any) -> tuple[Any, bool]:
        """The stored object with obj's key: (object, True), or (None, False)."""
        return self._storage.get(self.key_of(obj))

    def get_by_key(self, key: str) -> tuple[Any, bool]:
        return self._storage.get(key)

    def list(self) -> list[Any]:
        return self._storage.list()

    def list_keys(self) -> builtins.list[str]:
        return self._storage.list_keys()

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        """Make the cache hold exactly `objects` (what a relist returned)."""
        items = {self.key_of(obj): obj for obj in objects}
        self._storage.replace(items, resource_version)

    def resync(self) -> None:
        self._storage.resync()

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        return self._storage.index(index_name, obj)

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        return self._storage.index_keys(index_name, indexed_value)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        return self._storage.list_index_func_values(index_name)

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        return self._storage.by_index(index_name, indexed_value)

    def get_indexers(self) -> Indexers:
        return self._storage.get_indexers()

    def add_indexers(self, new_indexers: Mapping[str, IndexFunc]) -> None:
        self._storage.add_indexers(new_indexers)

    def __len__(self) -> int:
        return len(self._storage)

    def __repr__(self) -> str:
        return f"<Indexer objects={len(self)} indexers={sorted(self.get_indexers())}>"
