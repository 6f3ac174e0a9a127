"""SharedIndexInformer and the factory that shares one per resource.

Follows client-go tools/cache/shared_informer.go and informers/factory.go. A Reflector fills a
DeltaFIFO; the informer pops it, keeps the Indexer (the local cache every lister reads, with
zero API calls) up to date, then tells each registered handler: on_add, on_update, on_delete.
Components in one process share one informer, and so one LIST+WATCH, per resource.

Objects handed to handlers and returned by listers are the cache's own: read-only. Copy before
you change one (kubelab.api.deep_copy), exactly as client-go asks.

set_transform (SetTransform) changes each object once, as it enters the DeltaFIFO, before the
cache keeps it; a factory made with transform= (informers.WithTransform) sets it on every
informer it makes. transform_strip_managed_fields is the `trim` kube-controller-manager sets
on its whole factory (cmd/kube-controller-manager/app/controllermanager.go
CreateControllerContext, kubernetes#118455: "Informer transform to trim ManagedFields for memory
efficiency"); no controller reads managedFields from a cache. In 1.34 the other components keep
them: kube-scheduler's newPodInformer sets the same trim, but its factory's InformerFor
overwrites it with the factory's own nil transform (kubernetes#132367, fixed after 1.34), and
the kubelet's and kube-proxy's informers have none.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubelab.client.client import Client
from kubelab.client.delta_fifo import (
    DeletedFinalStateUnknown,
    DeltaFIFO,
    Deltas,
    DeltaType,
    TransformFunc,
)
from kubelab.client.indexer import Indexer, IndexFunc, meta_namespace_index_func
from kubelab.client.listers import GenericLister
from kubelab.client.reflector import Reflector
from kubelab.sim.clock import Clock
from kubelab.sim.trace import Trace

__all__ = ["ResourceEventHandler", "SharedIndexInformer", "SharedInformerFactory",
           "transform_strip_managed_fields"]


def transform_strip_managed_fields(obj: Any) -> Any:
    """Drop metadata.managedFields: only server-side apply reads them, and it reads the
    stored object, never a cache. Tombstones and objects without metadata pass unchanged."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        del meta["managedFields"]
    return obj

@dataclass
class ResourceEventHandler:
    """ResourceEventHandlerFuncs: any of the three may be left out."""

    on_add: Callable[[Any], None] | None = None
    on_update: Callable[[Any, Any], None] | None = None
    on_delete: Callable[[Any], None] | None = None


class SharedIndexInformer:
    def __init__(
        self,
        client: Client,
        resource: str,
        clock: Clock,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
        resync_period: float = 0.0,
        indexers: Mapping[str, IndexFunc] | None = None,
        rand: random.Random | None = None,
        trace: Trace | None = None,
        name: str = "",
    ) -> None:
        self.resource = resource
        self.clock = clock
        info = client.resource(resource)
        self.indexer = Indexer({"namespace": meta_namespace_index_func, **(indexers or {})})
        self.lister = GenericLister(self.indexer, info.resource, info.group)
        self._fifo = DeltaFIFO(known_objects=self.indexer, clock=clock,
                               name=f"DeltaFIFO/{info.resource}")
        self.reflector = Reflector(client, info.resource, self._fifo, clock, namespace=namespace,
                                   label_selector=label_selector, field_selector=field_selector,
                                   resync_period=resync_period, rand=rand, trace=trace,
                                   name=f"{name or 'informer'}/reflector")
        self._handlers: list[ResourceEventHandler] = []
        self._started = False
        self._fifo.on_ready(self._process_queue)

    def add_event_handler(self, handler: ResourceEventHandler) -> None:
        """Register a handler; if the informer already runs, it is told of every cached object
        with on_add first, as client-go's AddEventHandler does."""
        self._handlers.append(handler)
        if self._started and handler.on_add is not None:
            for obj in self.indexer.list():
                handler.on_add(obj)

    def set_transform(self, handler: TransformFunc | None) -> None:
        """SetTransform: every object the informer receives goes through handler before it is
        cached or handed to a handler. Only before run(), as upstream."""
        if self._started:
            raise RuntimeError("informer has already started")
        self._fifo.transformer = handler

    def run(self) -> None:
        if self._started:
            return
        self._started = True
        self.reflector.run()

    def stop(self) -> None:
        self.reflector.stop()
        self._fifo.close()
        self._started = False

    def has_synced(self) -> bool:
        """True once the first LIST has been fully delivered to the cache and the handlers."""
        return self._fifo.has_synced()

    def get_store(self) -> Indexer:
        return self.indexer

    # ------------------------------------------------------------------ HandleDeltas

    def _process_queue(self) -> None:
        while not self._fifo.is_closed():
            if self._fifo.pop(self._handle_deltas) is None:
                return

    def _handle_deltas(self, deltas: Deltas, is_in_initial_list: bool) -> None:
        for delta in deltas:
            obj = delta.object
            if delta.type == DeltaType.Deleted:
                if not isinstance(obj, DeletedFinalStateUnknown):
                    self.indexer.delete(obj)
                else:
                    old, exists = self.indexer.get_by_key(obj.key)
                    if exists:
                        self.indexer.delete(old)
                self._notify("delete", obj)
                continue
            old, exists = self.indexer.get(obj)
            if exists:
                self.indexer.update(obj)
                self._notify("update", old, obj)
            else:
                self.indexer.add(obj)
                self._notify("add", obj)

    def _notify(self, what: str, *objs: Any) -> None:
        for handler in list(self._handlers):
            fn = {"add": handler.on_add, "update": handler.on_update,
                  "delete": handler.on_delete}[what]
            if fn is not None:
                fn(*objs)


class SharedInformerFactory:
    """One informer per resource for everything in one process (a component). transform
    (informers.WithTransform) is set on each informer the factory makes."""

    def __init__(self, client: Client, clock: Clock, *, resync_period: float = 0.0,
                 namespace: str = "", rand: random.Random | None = None,
                 trace: Trace | None = None, name: str = "",
                 transform: TransformFunc | None = None) -> None:
        self.client, self.clock = client, clock
        self.transform = transform
        self.resync_period, self.namespace = resync_period, namespace
        self.rand, self.trace, self.name = rand, trace, name
        self._informers: dict[tuple[str, str], SharedIndexInformer] = {}

    def informer_for(self, resource: str, *, field_selector: str = "",
                     indexers: Mapping[str, IndexFunc] | None = None) -> SharedIndexInformer:
        resource = self.client.resource(resource).resource
        key = (resource, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            informer = SharedIndexInformer(
                self.client, resource, self.clock, namespace=self.namespace,
                field_selector=field_selector, resync_period=self.resync_period,
                indexers=indexers, rand=self.rand, trace=self.trace, name=self.name)
            if self.transform is not None:
                informer.set_transform(self.transform)
            self._informers[key] = informer
        elif indexers:
            informer.indexer.add_indexers(indexers)
        return informer

    def start(self) -> None:
        for informer in self._informers.values():
            informer.run()

    def stop(self) -> None:
        for informer in self._informers.values():
            informer.stop()

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    @property
    def informers(self) -> dict[tuple[str, str], SharedIndexInformer]:
        return dict(self._informers)
