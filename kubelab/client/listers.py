"""Listers: read-only views of an informer's cache (client-go tools/cache/listers.go and the
generated k8s.io/client-go/listers, e.g. PodLister and PodNamespaceLister).

A controller reads through a lister instead of calling the API server: `lister.list(selector)`
and `lister.by_namespace("default").get("web-1")` are answered from memory. What they return
is the cached object itself, read-only: copy it (kubelab.api.meta.deep_copy) before changing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kubelab.api import errors
from kubelab.client.indexer import NAMESPACE_INDEX, Indexer

__all__ = [
    "NAMESPACE_ALL",
    "GenericLister",
    "GenericNamespaceLister",
    "SelectorLike",
    "list_all",
    "list_all_by_namespace",
]

# metav1.NamespaceAll: the empty namespace means every namespace.
NAMESPACE_ALL = ""


class SelectorLike(Protocol):
    """Anything with labels.Selector's Matches: kubelab.api.labels selectors qualify."""

    def matches(self, labels: Mapping[str, str]) -> bool: ...


def _labels(obj: Any) -> Mapping[str, str]:
    labels: Mapping[str, str] = (obj.get("metadata") or {}).get("labels") or {}
    return labels


def list_all(store: Indexer, selector: SelectorLike | None = None) -> list[Any]:
    """ListAll: the objects in store whose labels match selector (None matches everything).

    client-go calls an appendFn for each match; returning the list is the Python equivalent.
    """
    if selector is None:
        return store.list()
    return [obj for obj in store.list() if selector.matches(_labels(obj))]


def list_all_by_namespace(
    indexer: Indexer, namespace: str, selector: SelectorLike | None = None
) -> list[Any]:
    """ListAllByNamespace: as list_all, in one namespace, through the namespace index.

    NAMESPACE_ALL ("") lists every namespace. Without a namespace index it falls back to a
    scan of every object, as client-go does (there it also logs a warning).
    """
    if namespace == NAMESPACE_ALL:
        return list_all(indexer, selector)
    if NAMESPACE_INDEX in indexer.get_indexers():
        items = indexer.by_index(NAMESPACE_INDEX, namespace)
    else:
        items = [obj for obj in indexer.list()
                 if (obj.get("metadata") or {}).get("namespace", "") == namespace]
    if selector is None:
        return items
    return [obj for obj in items if selector.matches(_labels(obj))]


class GenericLister:
    """cache.GenericLister over an Indexer, for one resource (e.g. "pods", "deployments"/"apps").

    get(name) looks up a cluster-scoped object by name; for namespaced objects use
    by_namespace(ns).get(name). A miss raises the API's NotFound: `pods "web-1" not found`.
    """

    def __init__(self, indexer: Indexer, resource: str, group: str = "") -> None:
        self.indexer = indexer
        self.resource = resource
        self.group = group

    def list(self, selector: SelectorLike | None = None) -> list[Any]:
        """Objects in every namespace whose labels match selector (None: all of them)."""
        return list_all(self.indexer, selector)

    def get(self, name: str) -> Any:
        obj, exists = self.indexer.get_by_key(name)
        if not exists:
            raise errors.not_found(self.resource, name, self.group)
        return obj

    def by_namespace(self, namespace: str) -> GenericNamespaceLister:
        return GenericNamespaceLister(self.indexer, namespace, self.resource, self.group)


class GenericNamespaceLister:
    """cache.GenericNamespaceLister: list and get within one namespace."""

    def __init__(self, indexer: Indexer, namespace: str, resource: str, group: str = "") -> None:
        self.indexer = indexer
        self.namespace = namespace
        self.resource = resource
        self.group = group

    def list(self, selector: SelectorLike | None = None) -> list[Any]:
        return list_all_by_namespace(self.indexer, self.namespace, selector)

    def get(self, name: str) -> Any:
        obj, exists = self.indexer.get_by_key(f"{self.namespace}/{name}")
        if not exists:
            raise errors.not_found(self.resource, name, self.group)
        return obj
