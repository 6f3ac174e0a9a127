"""The resource quota controller: keep each ResourceQuota's status.hard and status.used true
(kubernetes pkg/controller/resourcequota/resource_quota_controller.go and
resource_quota_monitor.go, with pkg/quota/v1's CalculateUsage: kubelab/api/quota/).

- A quota is synced when it is added, when its spec.hard changes (its status changes are this
  controller's and the admission plugin's own, and are ignored), and in a full resync of every
  quota each --resource-quota-sync-period (5 minutes). A quota whose status does not yet hold
  its spec's hard limits, or lacks the usage of one of them, goes to the missing-usage queue,
  which has its own workers (addQuota).
- syncResourceQuota: status.hard becomes spec.hard; status.used is what the namespace uses of
  each hard resource some evaluator measures (the pods, services, claims and object counts in
  the quota's scopes), kept to the hard names; the status is written only when it changed.
- Replenishment (the QuotaMonitor): a pod that ends (QuotaV1Pod turns false), a Service whose
  type changes, a claim whose allocated size changes, or any of them deleted, requeues the
  quotas of its namespace that limit that resource, so the usage the admission plugin charged
  is given back.

kubelab's departures: pods, services and claims are read from the controller manager's shared
informers, as upstream; the other counted resources (configmaps, secrets, count/<resource>) are
listed from the API server when a quota that limits them syncs, not watched by a monitor of
their own: their deletions are given back at the next full resync. A cluster without quotas
therefore watches only resourcequotas more.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.api.quota import Evaluator, ObjectCountEvaluator, calculate_usage, new_evaluators
from kubelab.api.quota.core import quota_v1_pod
from kubelab.api.quota.generic import scope_selectors_from_quota
from kubelab.api.quota.resources import equals, mask, parse_resource_list, to_json
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.listers import list_all_by_namespace
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.sim.clock import Timer

__all__ = ["RESOURCE_QUOTA_SYNC_PERIOD", "ResourceQuotaController"]

RESOURCE_QUOTA_SYNC_PERIOD = 5 * 60.0  # --resource-quota-sync-period
CONCURRENT_RESOURCE_QUOTA_SYNCS = 5     # --concurrent-resource-quota-syncs
WATCHED = ("pods", "services", "persistentvolumeclaims")


def _unwrap(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class ResourceQuotaController:
    NAME = "resourcequota-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.controller = self._loop(self.NAME)
        self.missing_usage = self._loop(f"{self.NAME}-missing-usage")
        quotas = informers.informer_for("resourcequotas")
        self.rq_indexer = quotas.indexer
        quotas.add_event_handler(ResourceEventHandler(
            self.add_quota, self._update_quota, self.controller.enqueue))
        # The QuotaMonitor's informers, shared with the other controllers.
        self.listers = {r: informers.informer_for(r).indexer for r in WATCHED}
        for resource in WATCHED:
            informers.informer_for(resource).add_event_handler(self._monitor(resource))
        self.registry: dict[tuple[str, str], Evaluator] = {
            e.group_resource(): e for e in new_evaluators(self._list, lambda: self.clock.now)}
        self._timer: Timer | None = None

    def _loop(self, name: str) -> Controller:
        return Controller(name, self.sync_resource_quota_from_key, self.ctx.clock,
                          workers=CONCURRENT_RESOURCE_QUOTA_SYNCS, trace=self.ctx.trace,
                          client=self.ctx.client, cost=self.ctx.sync_cost)

    def _monitor(self, resource: str) -> ResourceEventHandler:
        """The QuotaMonitor's handlers for one resource: updates through its filter, deletes."""
        def updated(old: Any, new: Any) -> None:
            self._resource_updated(resource, old, new)

        def deleted(obj: Any) -> None:
            self.replenish_quota(resource, _unwrap(obj))
        return ResourceEventHandler(None, updated, deleted)

    def run(self) -> None:
        self.controller.run()
        self.missing_usage.run()
        self._timer = self.clock.call_later(RESOURCE_QUOTA_SYNC_PERIOD, self.enqueue_all,
                                            background=True)

    def stop(self) -> None:
        self.controller.stop()
        self.missing_usage.stop()
        if self._timer is not None:
            self._timer.cancel()

    # ------------------------------------------------------------------ events

    def enqueue_all(self) -> None:
        """enqueueAll: the full resync of every quota."""
        for quota in self.rq_indexer.list():
            self.controller.enqueue(quota)
        self._timer = self.clock.call_later(RESOURCE_QUOTA_SYNC_PERIOD, self.enqueue_all,
                                            background=True)

    def add_quota(self, quota: Object) -> None:
        """addQuota: a quota whose intent is not yet in its status goes first."""
        status = quota.get("status") or {}
        hard = parse_resource_list(status.get("hard"))
        if not equals(parse_resource_list((quota.get("spec") or {}).get("hard")), hard):
            self.missing_usage.enqueue(quota)
            return
        used = status.get("used") or {}
        for name in hard:
            if name not in used and any(e.matching_resources([name]) for e in self._evaluators(hard)):
                self.missing_usage.enqueue(quota)
                return
        self.controller.enqueue(quota)

    def _update_quota(self, old: Object, cur: Object) -> None:
        """Only a change of spec.hard drives a sync; status changes are ignored."""
        if not equals(parse_resource_list((old.get("spec") or {}).get("hard")),
                      parse_resource_list((cur.get("spec") or {}).get("hard"))):
            self.add_quota(cur)

    def _resource_updated(self, resource: str, old: Object, new: Object) -> None:
        """The monitor's update filter (install.DefaultUpdateFilter)."""
        if resource == "pods":
            now = self.clock.now
            changed = quota_v1_pod(old, now) and not quota_v1_pod(new, now)
        elif resource == "services":
            changed = (old.get("spec") or {}).get("type") != (new.get("spec") or {}).get("type")
        else:  # RequiresQuotaReplenish: the size allocated to the claim changed
            def size(pvc: Object) -> Any:
                return ((pvc.get("status") or {}).get("allocatedResources") or {}).get("storage")
            changed = size(old) != size(new)
        if changed:
            self.replenish_quota(resource, new)

    def replenish_quota(self, resource: str, obj: Any) -> None:
        """replenishQuota: requeue the namespace's quotas that limit this resource."""
        if not isinstance(obj, dict):
            return
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        evaluator = self.registry[("", resource)]
        for quota in list_all_by_namespace(self.rq_indexer, namespace):
            if evaluator.matching_resources(parse_resource_list((quota.get("status") or {}).get("hard"))):
                self.controller.enqueue(quota)

    # ------------------------------------------------------------------ sync

    def sync_resource_quota_from_key(self, key: str) -> None:
        quota, exists = self.rq_indexer.get_by_key(key)
        if exists:
            self.sync_resource_quota(quota)

    def sync_resource_quota(self, quota: Object) -> None:
        """syncResourceQuota: status.hard from spec.hard, status.used recalculated."""
        status = quota.get("status") or {}
        spec_hard = parse_resource_list((quota.get("spec") or {}).get("hard"))
        dirty = not equals(spec_hard, parse_resource_list(status.get("hard"))) or \
            status.get("hard") is None or status.get("used") is None
        used = parse_resource_list(status.get("used"))
        namespace = quota["metadata"].get("namespace", "")
        new_usage = calculate_usage(namespace, spec_hard, self._evaluators(spec_hard),
                                    scope_selectors_from_quota(quota))
        used = mask({**used, **new_usage}, spec_hard)
        dirty = dirty or not equals(used, parse_resource_list(status.get("used")))
        if not dirty:
            return
        usage = deep_copy(quota)
        usage["status"] = {"hard": to_json(spec_hard), "used": to_json(used)}
        try:
            self.client.update_status(usage)
        except ApiError as err:
            if err.code != 404:  # a conflict: the loop retries with the informer's newer copy
                raise

    def _evaluators(self, hard: Any) -> list[Evaluator]:
        """The registry, plus an object count evaluator for each count/<resource>.<group> the
        quota names that no evaluator measures yet (the monitor's on-demand evaluators)."""
        for name in hard:
            if not name.startswith("count/"):
                continue
            resource, _, group = name[len("count/"):].partition(".")
            if (group, resource) in self.registry:
                continue
            try:
                info = self.client.resource(f"{resource}.{group}" if group else resource)
            except ApiError:
                continue
            if info.group == group and info.namespaced:
                self.registry[(group, resource)] = ObjectCountEvaluator(group, resource, self._list)
        return list(self.registry.values())

    def _list(self, group: str, resource: str, namespace: str) -> list[Object]:
        """The evaluators' lister: the shared informers' caches, else the API server."""
        if not group and resource in self.listers:
            return list_all_by_namespace(self.listers[resource], namespace)
        name = f"{resource}.{group}" if group else resource
        items: list[Object] = self.client.list(name, namespace)["items"]
        return items
