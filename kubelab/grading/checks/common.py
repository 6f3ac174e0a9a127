"""Small things the checks share: a store that counts what it is asked, and object builders."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kubelab.grading.shared import share

__all__ = ["StoreView", "configmap", "count_of", "patched", "pod"]


class StoreView:
    """The cluster's etcd as a submission sees it: the same methods, counted and watched.

    `after_read(key)` runs after every range or failed txn on a key: the place where a check
    lets another writer slip in between the learner's read and write.
    """

    def __init__(self, store: Any, after_read: Callable[[str], None] | None = None) -> None:
        self._store = store
        self._after_read = after_read
        self.ranges = 0
        self.txns = 0
        self.failed_txns = 0
        self.puts = 0
        self.watch_starts: list[int] = []

    @property
    def revision(self) -> int:
        return int(self._store.revision)

    @property
    def compact_revision(self) -> int:
        return int(self._store.compact_revision)

    def range(self, key: str, range_end: str | None = None, **kwargs: Any) -> Any:
        self.ranges += 1
        response = self._store.range(key, range_end, **kwargs)
        if self._after_read is not None:
            self._after_read(key)
        return response

    def txn(self, compares: Any = (), success: Any = (), failure: Any = ()) -> Any:
        self.txns += 1
        response = self._store.txn(compares, success, failure)
        if not response.succeeded:
            self.failed_txns += 1
            if self._after_read is not None and compares:
                self._after_read(compares[0].key)
        return response

    def put(self, key: str, value: bytes, **kwargs: Any) -> Any:
        self.puts += 1
        return self._store.put(key, value, **kwargs)

    def delete_range(self, key: str, range_end: str | None = None, **kwargs: Any) -> Any:
        self.puts += 1
        return self._store.delete_range(key, range_end, **kwargs)

    def watch(self, key: str, range_end: str | None = None, **kwargs: Any) -> Any:
        self.watch_starts.append(int(kwargs.get("start_revision", 0)))
        return self._store.watch(key, range_end, **kwargs)


share(StoreView, ("range", "txn", "put", "delete_range", "watch", "revision", "compact_revision"))


def configmap(name: str, data: dict[str, str], namespace: str = "default",
              labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def pod(name: str, *, labels: dict[str, str] | None = None, namespace: str = "default",
        containers: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": containers or [{"name": "app", "image": "nginx:1.27"}], **spec}}


def count_of(value: bytes) -> int:
    """data.count of an encoded ConfigMap, as the checks of exercise 1.1 keep it."""
    return int(json.loads(value)["data"]["count"])


@contextmanager
def patched(module: Any, name: str, value: Any) -> Iterator[None]:
    """Swap one kubelab function for the learner's for the duration of a check. The grading
    process runs one exercise of one submission and nothing else, so nobody else sees it."""
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)
