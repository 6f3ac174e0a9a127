"""The EndpointSlice controller: for every Service with a selector, EndpointSlices that list the
pods behind it (pkg/controller/endpointslice/endpointslice_controller.go and
kubernetes/endpointslice endpointslice_tracker.go).

Events only say which Services to look at again:
- a Service added, changed or deleted: that Service;
- a pod added, changed (its IP, readiness, labels or deletionTimestamp) or deleted: every
  Service of its namespace whose selector matches its old or new labels
  (getPodServiceMemberships);
- an EndpointSlice it manages changed or deleted by someone else: its Service, so the change
  is undone (the tracker knows which generations it wrote itself).

syncService reads the Service, its pods and its slices from the informers, refuses to work on a
slice cache that is behind its own writes (the tracker: "EndpointSlice informer cache is out
of date", retried with back-off) and hands the rest to the reconciler (reconciler.py), whose
plan it then writes: creates, updates, deletes. A deleted Service's slices go with it through
their ownerReference (the garbage collector).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.labels import Selector, selector_from_set
from kubelab.api.meta import split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.endpointslice.reconciler import Plan, reconcile
from kubelab.controllers.endpointslice.utils import (
    CONTROLLER_NAME,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    MAX_ENDPOINTS_PER_SLICE,
    service_controller_key,
)

__all__ = ["EndpointSliceController", "EndpointSliceTracker", "StaleInformerCache"]

DELETION_EXPECTED = -1


class StaleInformerCache(Exception):
    pass


def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


class EndpointSliceTracker:
    """endpointslice_tracker.go: the generation of each slice this controller last wrote,
    per Service, so it can tell its own echoes from others' changes and a stale cache."""

    def __init__(self) -> None:
        self.generations: dict[str, dict[str, int]] = {}   # service key -> slice uid -> generation

    @staticmethod
    def _service_key(slice_: Object) -> str:
        meta = slice_["metadata"]
        return f"{meta.get('namespace', '')}/{(meta.get('labels') or {}).get(LABEL_SERVICE_NAME, '')}"

    def update(self, slice_: Object) -> None:
        self.generations.setdefault(self._service_key(slice_), {})[slice_["metadata"]["uid"]] = \
            int(slice_["metadata"].get("generation", 1))

    def expect_deletion(self, slice_: Object) -> None:
        self.generations.setdefault(self._service_key(slice_), {})[slice_["metadata"]["uid"]] = \
            DELETION_EXPECTED

    def should_sync(self, slice_: Object) -> bool:
        """ShouldSync: a slice we did not write (or a newer generation than ours)."""
        known = self.generations.get(self._service_key(slice_), {})
        generation = known.get(slice_["metadata"].get("uid", ""))
        return generation is None or generation == DELETION_EXPECTED or \
            int(slice_["metadata"].get("generation", 1)) > generation

    def handle_deletion(self, slice_: Object) -> bool:
        """HandleDeletion: True if the deletion was not ours (the Service must be synced)."""
        known = self.generations.get(self._service_key(slice_), {})
        generation = known.pop(slice_["metadata"].get("uid", ""), None)
        return generation != DELETION_EXPECTED

    def stale_slices(self, service_key: str, slices: list[Object]) -> bool:
        """StaleSlices: the cache misses a slice we wrote, shows an older generation, or still
        shows one we deleted."""
        known = dict(self.generations.get(service_key, {}))
        for slice_ in slices:
            generation = known.pop(slice_["metadata"].get("uid", ""), None)
            if generation is None:
                continue
            if generation == DELETION_EXPECTED or generation > int(slice_["metadata"].get("generation", 1)):
                return True
        return any(g != DELETION_EXPECTED for g in known.values())

    def delete_service(self, service_key: str) -> None:
        self.generations.pop(service_key, None)


# What sync_service asks a reconciler (reconciler.go reconcile): the Service, the pods it
# selects, its slices and the most endpoints a slice may hold -> the writes to make.
Reconciler = Callable[[Object, list[Object], list[Object], int], Plan]


class EndpointSliceController:
    NAME = "endpointslice-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 max_endpoints_per_slice: int = MAX_ENDPOINTS_PER_SLICE, workers: int = 5,
                 reconcile_fn: Reconciler | None = None) -> None:
        """reconcile_fn: another reconciler, (service, pods, slices, max) -> a Plan (exercise
        9.1's check plugs the learner's in here); None: reconciler.py's."""
        self.ctx, self.client = ctx, ctx.client
        self.reconcile_fn: Reconciler = reconcile_fn or reconcile
        self.max_endpoints_per_slice = max_endpoints_per_slice
        self.recorder = ctx.recorder(self.NAME)
        self.tracker = EndpointSliceTracker()
        self.controller = Controller(self.NAME, self.sync_service, ctx.clock, workers=workers,
                                     trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        self.queue = self.controller.queue
        services = informers.informer_for("services")
        pods = informers.informer_for("pods")
        slices = informers.informer_for("endpointslices")
        self.service_lister, self.pod_lister, self.slice_lister = \
            services.lister, pods.lister, slices.lister
        services.add_event_handler(ResourceEventHandler(
            self.controller.enqueue, lambda _old, cur: self.controller.enqueue(cur),
            self._delete_service))
        pods.add_event_handler(ResourceEventHandler(self._add_pod, self._update_pod,
                                                    self._delete_pod))
        slices.add_event_handler(ResourceEventHandler(self._on_slice, lambda _o, cur: self._on_slice(cur),
                                                      self._delete_slice))
        self.writes = 0   # API writes made: creates, updates and deletes of slices
        # ServiceSelectorCache (pkg/controller/util/endpoint): each Service's parsed selector,
        # kept while its selector stays the same.
        self.selectors: dict[str, tuple[dict[str, str], Selector]] = {}

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    # ------------------------------------------------------------------ event handlers

    def _delete_service(self, obj: Any) -> None:
        service = _tombstone(obj)
        self.controller.enqueue(service)

    def selector(self, service: Object) -> Selector | None:
        """ServiceSelectorCache.Get/Update: the Service's selector, parsed once."""
        wanted = (service.get("spec") or {}).get("selector")
        if not wanted:
            return None
        key = f"{service['metadata'].get('namespace', '')}/{service['metadata']['name']}"
        cached = self.selectors.get(key)
        if cached is None or cached[0] != wanted:
            cached = self.selectors[key] = (dict(wanted), selector_from_set(wanted))
        return cached[1]

    def _pod_services(self, pod: Object) -> set[str]:
        """getPodServiceMemberships: the Services of the pod's namespace that select it."""
        meta = pod["metadata"]
        namespace, labels = meta.get("namespace", ""), meta.get("labels") or {}
        keys = set()
        for service in self.service_lister.by_namespace(namespace).list():
            selector = self.selector(service)
            if selector is not None and selector.matches(labels):
                keys.add(f"{namespace}/{service['metadata']['name']}")
        return keys

    def _add_pod(self, pod: Object) -> None:
        for key in self._pod_services(pod):
            self.queue.add(key)

    def _update_pod(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        keys = self._pod_services(cur)
        if old["metadata"].get("labels") != cur["metadata"].get("labels"):
            keys |= self._pod_services(old)
        for key in sorted(keys):
            self.queue.add(key)

    def _delete_pod(self, obj: Any) -> None:
        pod = _tombstone(obj)
        if pod:
            self._add_pod(pod)

    def _managed(self, slice_: Object) -> str | None:
        """ManagedByController, then ServiceControllerKey: the key of the slice's Service, or
        None for a slice another controller manages or one without a service-name label."""
        if (slice_["metadata"].get("labels") or {}).get(LABEL_MANAGED_BY) != CONTROLLER_NAME:
            return None
        try:
            return service_controller_key(slice_)
        except ValueError:
            return None

    def _on_slice(self, slice_: Object) -> None:
        key = self._managed(slice_)
        if key is not None and self.tracker.should_sync(slice_):
            self.queue.add(key)

    def _delete_slice(self, obj: Any) -> None:
        slice_ = _tombstone(obj)
        key = self._managed(slice_) if slice_ else None
        if key is not None and self.tracker.handle_deletion(slice_):
            self.queue.add(key)

    # ------------------------------------------------------------------ sync

    def sync_service(self, key: str) -> None:
        namespace, name = split_key(key)
        service, exists = self.service_lister.indexer.get_by_key(key)
        if not exists:
            self.tracker.delete_service(key)
            self.selectors.pop(key, None)
            return  # its slices go with it (ownerReferences)
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName" or not spec.get("selector"):
            return  # not ours: selector-less Services have hand-made slices
        selector = self.selector(service)
        assert selector is not None
        pods = [p for p in self.pod_lister.by_namespace(namespace).list()
                if selector.matches(p["metadata"].get("labels") or {})]
        slices = [s for s in self.slice_lister.by_namespace(namespace).list()
                  if self._managed(s) == key and not s["metadata"].get("deletionTimestamp")]
        if self.tracker.stale_slices(key, slices):
            raise StaleInformerCache("EndpointSlice informer cache is out of date")
        plan = self.reconcile_fn(service, pods, slices, self.max_endpoints_per_slice)
        try:
            self.apply(plan)
        except ApiError as err:
            self.recorder.event(service, "Warning", "FailedToUpdateEndpointSlices",
                                f"Error updating Endpoint Slices for Service {namespace}/{name}: "
                                f"{err.message}")
            raise

    def apply(self, plan: Plan) -> None:
        """finalize's writes: creates, then updates, then deletes, each noted in the tracker."""
        for slice_ in plan.create:
            self.writes += 1
            self.tracker.update(self.client.create(slice_))
        for slice_ in plan.update:
            self.writes += 1
            self.tracker.update(self.client.update(slice_))
        for slice_ in plan.delete:
            self.writes += 1
            meta = slice_["metadata"]
            self.tracker.expect_deletion(slice_)
            try:
                self.client.delete("endpointslices", meta["name"], meta.get("namespace", ""))
            except ApiError as err:
                if err.code != 404:
                    raise
