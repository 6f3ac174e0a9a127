"""What a reconciler reads through, and a log of what it sends.

Cache is controller-runtime's cache reader (pkg/cache/internal/cache_reader.go): get and list
answered from the informers' indexers, with no API request. The objects are the cache's own,
shared and read-only: deep_copy one before changing it. The first read of a kind starts its
informer, as controller-runtime's informer cache does; the Operator starts the ones it watches
before the first reconcile.

RequestLog sits between a Client and the API and writes down every request (verb, resource,
namespace, name), so a notebook or a grader can show what one reconcile cost.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object
from kubelab.api.labels import parse_selector
from kubelab.api.request import API, ConnectionRefused, Request, WatchEvent, WatchHandle
from kubelab.client.shared_informer import SharedIndexInformer, SharedInformerFactory

__all__ = ["Cache", "RequestLog"]


class Cache:
    def __init__(self, informers: SharedInformerFactory) -> None:
        self.informers = informers

    def informer(self, resource: str) -> SharedIndexInformer:
        return self.informers.informer_for(resource)

    def get(self, resource: str, name: str, namespace: str = "") -> Object | None:
        """The cached object, or None if the cache has none of that name."""
        key = f"{namespace}/{name}" if namespace else name
        obj, exists = self.informer(resource).indexer.get_by_key(key)
        return obj if exists else None

    def list(self, resource: str, namespace: str = "", label_selector: str = "") -> list[Object]:
        lister = self.informer(resource).lister
        selector = parse_selector(label_selector) if label_selector else None
        items = lister.by_namespace(namespace).list(selector) if namespace else lister.list(selector)
        return sorted(items, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))

    def has_synced(self) -> bool:
        return self.informers.has_synced()


class RequestLog:
    """An API in front of an API: records each request, then passes it on unchanged. A request
    whose connect was refused never left: it is not recorded."""

    def __init__(self, api: API) -> None:
        self.api = api
        self.entries: list[tuple[str, str, str, str]] = []

    @staticmethod
    def describe(entry: tuple[str, str, str, str]) -> str:
        verb, resource, namespace, name = entry
        return " ".join(x for x in (verb, resource, f"{namespace}/{name}" if name else namespace) if x)

    def handle(self, request: Request) -> Object:
        resource = f"{request.resource}/{request.subresource}" if request.subresource else request.resource
        name = request.name
        if not name and request.verb == "create" and isinstance(request.body, dict):
            name = str((request.body.get("metadata") or {}).get("name") or "")
        at = len(self.entries)
        self.entries.append((request.verb, resource, request.namespace, name))
        try:
            return self.api.handle(request)
        except ConnectionRefused:
            del self.entries[at]
            raise

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        at = len(self.entries)
        self.entries.append(("watch", request.resource, request.namespace, ""))
        try:
            return self.api.watch(request, on_event, on_close)
        except ConnectionRefused:
            del self.entries[at]
            raise
