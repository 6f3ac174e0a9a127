"""The course's sample controllers (notebook 03): copy every ConfigMap `x` to `x-copy`.

Two ways to write the same controller, to see why Kubernetes is level-triggered:

- ConfigMapCopier follows kubernetes/sample-controller's controller.go: event handlers only
  enqueue a key; sync_handler(key) reads the *current* source and copy from the informer's
  cache and makes the copy match. Whatever events were lost, duplicated or reordered, the
  next sync of the key (a later event, a resync, a relist) repairs it.
- EdgeTriggeredCopier acts on each event itself: on add it creates, on update it copies the
  event's data, on delete it deletes. Lose one event and it stays wrong, forever.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory

__all__ = ["SUFFIX", "ConfigMapCopier", "EdgeTriggeredCopier", "copies_match"]

SUFFIX = "-copy"


def _copy_of(source: dict[str, Any]) -> dict[str, Any]:
    meta = source["metadata"]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": meta["name"] + SUFFIX, "namespace": meta.get("namespace", "default"),
                         "labels": {"copied-from": meta["name"]}},
            "data": dict(source.get("data") or {})}


class ConfigMapCopier:
    """Level-triggered: reconcile from the cache, for the key, whatever happened."""

    def __init__(self, ctx: ComponentContext, *, namespace: str = "", resync_period: float = 30.0,
                 cost: float = 0.01) -> None:
        self.ctx = ctx
        self.name = ctx.name
        self.factory = SharedInformerFactory(ctx.client, ctx.clock, resync_period=resync_period,
                                             namespace=namespace, rand=ctx.rand, trace=ctx.trace,
                                             name=ctx.name)
        self.informer = self.factory.informer_for("configmaps")
        self.controller = Controller(ctx.name, self.sync_handler, ctx.clock, cost=cost,
                                     trace=ctx.trace)
        self.informer.add_event_handler(self.controller.handler())

    def start(self) -> None:
        self.factory.start()
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()
        self.factory.stop()

    def _cached(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            obj: dict[str, Any] = self.informer.lister.by_namespace(namespace).get(name)
            return obj
        except ApiError:
            return None

    def sync_handler(self, key: str) -> None:
        namespace, name = key.split("/")
        name = name.removesuffix(SUFFIX)
        source = self._cached(namespace, name)
        copy = self._cached(namespace, name + SUFFIX)
        client = self.ctx.client
        if source is None:
            if copy is not None:
                client.delete("configmaps", name + SUFFIX, namespace)
        elif copy is None:
            client.create(_copy_of(source), namespace)
        elif copy.get("data") != source.get("data"):
            updated = deep_copy(copy)          # the cache's object is read-only
            updated["data"] = dict(source.get("data") or {})
            client.update(updated)             # a stale cache gives 409: the queue retries


class EdgeTriggeredCopier:
    """Edge-triggered: trust each event. Shown for contrast; do not write controllers so."""

    def __init__(self, ctx: ComponentContext, *, namespace: str = "") -> None:
        self.ctx = ctx
        self.name = ctx.name
        self.factory = SharedInformerFactory(ctx.client, ctx.clock, namespace=namespace, rand=ctx.rand,
                                             trace=ctx.trace, name=ctx.name)
        self.informer = self.factory.informer_for("configmaps")
        self.informer.add_event_handler(ResourceEventHandler(
            on_add=self.on_add, on_update=self.on_update, on_delete=self.on_delete))
        self.errors = 0

    def start(self) -> None:
        self.factory.start()

    def stop(self) -> None:
        self.factory.stop()

    def _try(self, action: Any, *args: Any) -> None:
        try:
            action(*args)
        except ApiError:
            self.errors += 1   # no queue, no retry: the moment has passed

    def on_add(self, obj: dict[str, Any]) -> None:
        if not obj["metadata"]["name"].endswith(SUFFIX):
            self._try(self.ctx.client.create, _copy_of(obj))

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if not new["metadata"]["name"].endswith(SUFFIX):
            meta = new["metadata"]
            self._try(self.ctx.client.patch, "configmaps", meta["name"] + SUFFIX,
                      {"data": dict(new.get("data") or {})}, meta.get("namespace", "default"))

    def on_delete(self, obj: Any) -> None:
        meta = obj.get("metadata", {}) if isinstance(obj, dict) else {}
        if meta and not meta["name"].endswith(SUFFIX):
            self._try(self.ctx.client.delete, "configmaps", meta["name"] + SUFFIX,
                      meta.get("namespace", "default"))


def copies_match(configmaps: list[dict[str, Any]], prefix: str = "") -> bool:
    """Desired == actual: every source named `prefix...` has an identical copy and vice versa."""
    items = {o["metadata"]["name"]: o.get("data") for o in configmaps
             if o["metadata"]["name"].startswith(prefix)}
    sources = {n: d for n, d in items.items() if not n.endswith(SUFFIX)}
    copies = {n.removesuffix(SUFFIX): d for n, d in items.items() if n.endswith(SUFFIX)}
    return sources == copies
