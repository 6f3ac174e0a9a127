"""The endpoints controller: for every Service with a selector, the core/v1 Endpoints object of
the same name listing its pods (pkg/controller/endpoint/endpoints_controller.go).

Events only say which Services to look at again:
- a Service added, changed or deleted: that Service;
- a pod added, changed (labels, hostname, deletionTimestamp, readiness or IPs:
  podEndpointsChanged) or deleted: the Services of its namespace that select it
  (GetPodServiceMemberships; both the old and the new ones when its labels changed);
- an Endpoints object deleted: its Service, so it is written again;
- at start (checkLeftoverEndpoints): every Endpoints object, so one whose Service is gone is
  deleted.

syncService turns each pod that should be listed (ShouldPodBeInEndpoints: running, with an IP,
not terminating unless the Service publishes not-ready addresses) into one subset per Service
port (its targetPort resolved with FindPort), ready in `addresses` or not in
`notReadyAddresses`, repacks them (repack.py), and writes the Endpoints when the subsets, the
labels or the over-capacity annotation differ: labels are the Service's (plus
service.kubernetes.io/headless without a ClusterIP), annotations
`endpoints.kubernetes.io/last-change-trigger-time` (trigger_time_tracker.py) and, past 1000
addresses, `endpoints.kubernetes.io/over-capacity: truncated` with the addresses cut to 1000
(truncateEndpoints: ready ones first, each subset keeping its share).

kube-controller-manager's `endpoints-controller` is on by default upstream; in kubelab only
Cluster(anatomy=True) runs it (controller_descriptor.py: disabled_by_default), so the clusters
of the course and their traces stay as they were. Departures: single-stack IPv4 (the pod's
first IPv4 address, as utils.get_endpoint_addresses reads it); no endpointUpdatesBatchPeriod.
"""

from __future__ import annotations

import math
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.labels import Selector, selector_from_set
from kubelab.api.meta import rfc3339, split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.endpoint.repack import repack_subsets
from kubelab.controllers.endpoint.trigger_time_tracker import TriggerTimeTracker
from kubelab.controllers.endpointslice.utils import (
    LABEL_HEADLESS,
    find_port,
    get_endpoint_addresses,
    is_pod_ready,
    is_service_ip_set,
    should_pod_be_in_endpoints,
)

__all__ = ["ENDPOINTS_LAST_CHANGE_TRIGGER_TIME", "ENDPOINTS_OVER_CAPACITY", "MAX_CAPACITY",
           "EndpointController"]

MAX_CAPACITY = 1000  # maxCapacity: the most addresses one Endpoints object lists
ENDPOINTS_LAST_CHANGE_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
ENDPOINTS_OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
TRUNCATED = "truncated"
# resourcelock.LeaderElectionRecordAnnotationKey
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"


def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


def _key(obj: Object) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


def pod_to_endpoint_address(pod: Object) -> Object | None:
    """podToEndpointAddressForService: the pod's IP, node and a reference to it."""
    ips = get_endpoint_addresses(pod.get("status") or {})
    if not ips:
        return None
    meta = pod["metadata"]
    address: Object = {"ip": ips[0]}
    if (pod.get("spec") or {}).get("nodeName"):
        address["nodeName"] = pod["spec"]["nodeName"]
    address["targetRef"] = {"kind": "Pod", "namespace": meta.get("namespace", ""),
                            "name": meta["name"], "uid": meta.get("uid", "")}
    return address


def should_set_hostname(pod: Object, service: Object) -> bool:
    """ShouldSetHostname: the pod names this Service as its subdomain."""
    spec = pod.get("spec") or {}
    return bool(spec.get("hostname")) and spec.get("subdomain") == service["metadata"]["name"] \
        and pod["metadata"].get("namespace") == service["metadata"].get("namespace")


def endpoint_port_from_service_port(service_port: Object, port: int) -> Object:
    """endpointPortFromServicePort: the Service port's name and protocol, the pod's number."""
    out: Object = {"name": service_port.get("name", ""), "port": port,
                   "protocol": service_port.get("protocol", "TCP")}
    if service_port.get("appProtocol"):
        out["appProtocol"] = service_port["appProtocol"]
    return out


def add_endpoint_subset(subsets: list[Object], pod: Object, address: Object, port: Object | None,
                        tolerate_unready: bool) -> tuple[int, int]:
    """addEndpointSubset: one subset of this address and port; (ready, not ready) added."""
    ports = [port] if port is not None else []
    if tolerate_unready or is_pod_ready(pod):
        subsets.append({"addresses": [address], "ports": ports})
        return 1, 0
    subsets.append({"notReadyAddresses": [address], "ports": ports})
    return 0, 1


def _count(subsets: list[Object]) -> tuple[int, int]:
    return (sum(len(s.get("addresses") or []) for s in subsets),
            sum(len(s.get("notReadyAddresses") or []) for s in subsets))


def truncate_endpoints(endpoints: Object) -> bool:
    """truncateEndpoints: past MAX_CAPACITY addresses, keep MAX_CAPACITY, ready ones first;
    each subset keeps its share (rounded up, the last subset gets what is left)."""
    subsets = endpoints.get("subsets") or []
    total_ready, total_not_ready = _count(subsets)
    if total_ready + total_not_ready <= MAX_CAPACITY:
        return False
    truncate_ready = total_ready > MAX_CAPACITY
    limit, total = (MAX_CAPACITY, total_ready) if truncate_ready else \
        (MAX_CAPACITY - total_ready, total_not_ready)
    can_be_added = limit
    for subset in subsets:
        field = "addresses" if truncate_ready else "notReadyAddresses"
        in_subset = len(subset.get(field) or [])
        to_be_added = min(math.ceil(in_subset / total * limit), can_be_added)
        subset[field] = (subset.get(field) or [])[:to_be_added]
        if truncate_ready:
            subset["notReadyAddresses"] = []
        can_be_added -= len(subset[field])
    return True


def capacity_annotation_set_correctly(annotations: dict[str, str], subsets: list[Object]) -> bool:
    """capacityAnnotationSetCorrectly: subsets over capacity must still be truncated; under
    it, the annotation must be gone."""
    if sum(_count(subsets)) > MAX_CAPACITY:
        return False
    return ENDPOINTS_OVER_CAPACITY not in annotations


def _compact(subsets: list[Object]) -> list[Object]:
    """The subsets as the API returns them: empty lists are omitted (omitempty)."""
    return [{k: v for k, v in s.items() if v} for s in subsets]


def pod_endpoints_changed(old: Object, cur: Object) -> tuple[bool, bool]:
    """podEndpointsChanged: (the pod's endpoint changed, its labels or hostname changed)."""
    def host(pod: Object) -> tuple[Any, Any]:
        spec = pod.get("spec") or {}
        return spec.get("hostname"), spec.get("subdomain")

    labels_changed = old["metadata"].get("labels") != cur["metadata"].get("labels") or \
        host(old) != host(cur)
    if old["metadata"].get("deletionTimestamp") != cur["metadata"].get("deletionTimestamp"):
        return True, labels_changed
    if is_pod_ready(old) != is_pod_ready(cur):
        return True, labels_changed
    ips = [[p.get("ip") for p in (pod.get("status") or {}).get("podIPs") or ()] for pod in (old, cur)]
    return ips[0] != ips[1], labels_changed


class EndpointController:
    NAME = "endpoints-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 workers: int = 5) -> None:
        self.ctx, self.client = ctx, ctx.client
        self.recorder = ctx.recorder("endpoint-controller")
        self.trigger_time_tracker = TriggerTimeTracker()
        self.controller = Controller(self.NAME, self.sync_service, ctx.clock, workers=workers,
                                     trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        self.queue = self.controller.queue
        services = informers.informer_for("services")
        pods = informers.informer_for("pods")
        endpoints = informers.informer_for("endpoints")
        self.service_lister, self.pod_lister, self.endpoints_lister = \
            services.lister, pods.lister, endpoints.lister
        services.add_event_handler(ResourceEventHandler(
            self.on_service_update, lambda _old, cur: self.on_service_update(cur),
            self.on_service_delete))
        pods.add_event_handler(ResourceEventHandler(self.add_pod, self.update_pod, self.delete_pod))
        endpoints.add_event_handler(ResourceEventHandler(None, None, self.on_endpoints_delete))
        # ServiceSelectorCache: each Service's parsed selector, while it stays the same.
        self.selectors: dict[str, tuple[dict[str, str], Selector]] = {}

    def run(self) -> None:
        self.check_leftover_endpoints()
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    # ------------------------------------------------------------------ event handlers

    def on_service_update(self, service: Object) -> None:
        self._selector(service)
        self.queue.add(_key(service))

    def on_service_delete(self, obj: Any) -> None:
        service = _tombstone(obj)
        self.selectors.pop(_key(service), None)
        self.queue.add(_key(service))

    def _selector(self, service: Object) -> Selector | None:
        wanted = (service.get("spec") or {}).get("selector")
        if not wanted:
            return None
        key = _key(service)
        cached = self.selectors.get(key)
        if cached is None or cached[0] != wanted:
            cached = self.selectors[key] = (dict(wanted), selector_from_set(wanted))
        return cached[1]

    def get_pod_service_memberships(self, pod: Object) -> set[str]:
        namespace = pod["metadata"].get("namespace", "")
        labels = pod["metadata"].get("labels") or {}
        keys = set()
        for service in self.service_lister.by_namespace(namespace).list():
            selector = self._selector(service)
            if selector is not None and selector.matches(labels):
                keys.add(_key(service))
        return keys

    def add_pod(self, pod: Object) -> None:
        for key in sorted(self.get_pod_service_memberships(pod)):
            self.queue.add(key)

    def update_pod(self, old: Object, cur: Object) -> None:
        """GetServicesToUpdateOnPodChange and determineNeededServiceUpdates: a changed pod
        updates its old and new Services; a relabelled one only those it joined or left."""
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        pod_changed, labels_changed = pod_endpoints_changed(old, cur)
        if not pod_changed and not labels_changed:
            return
        services = self.get_pod_service_memberships(cur)
        if labels_changed:
            old_services = self.get_pod_service_memberships(old)
            services = services | old_services if pod_changed else services ^ old_services
        for key in sorted(services):
            self.queue.add(key)

    def delete_pod(self, obj: Any) -> None:
        pod = _tombstone(obj)
        if pod:
            self.add_pod(pod)

    def on_endpoints_delete(self, obj: Any) -> None:
        self.queue.add(_key(_tombstone(obj)))

    def check_leftover_endpoints(self) -> None:
        """checkLeftoverEndpoints: every Endpoints object is looked at once, so one whose
        Service was deleted while the controller was down goes too (leader-election records
        excepted)."""
        for ep in self.endpoints_lister.list():
            if LEADER_ANNOTATION not in (ep["metadata"].get("annotations") or {}):
                self.queue.add(_key(ep))

    # ------------------------------------------------------------------ sync

    def sync_service(self, key: str) -> None:
        namespace, name = split_key(key)
        service, exists = self.service_lister.indexer.get_by_key(key)
        if not exists:
            # The Service is gone: its Endpoints go too (they would be collected anyway).
            try:
                self.client.delete("endpoints", name, namespace)
            except ApiError as err:
                if err.code != 404:
                    raise
            self.trigger_time_tracker.delete_service(namespace, name)
            return
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName" or not spec.get("selector"):
            return  # selector-less Services have hand-made Endpoints
        selector = self._selector(service)
        assert selector is not None
        pods = [p for p in self.pod_lister.by_namespace(namespace).list()
                if selector.matches(p["metadata"].get("labels") or {})]
        trigger_time = self.trigger_time_tracker.compute_endpoint_last_change_trigger_time(
            namespace, service, pods)
        publish_not_ready = bool(spec.get("publishNotReadyAddresses"))
        subsets: list[Object] = []
        for pod in pods:
            if not should_pod_be_in_endpoints(pod, publish_not_ready):
                continue
            address = pod_to_endpoint_address(pod)
            if address is None:
                continue
            if should_set_hostname(pod, service):
                address["hostname"] = pod["spec"]["hostname"]
            if not spec.get("ports"):
                if spec.get("clusterIP") == "None":  # headless without ports: addresses only
                    add_endpoint_subset(subsets, pod, address, None, publish_not_ready)
                continue
            for service_port in spec["ports"]:
                number = find_port(pod, service_port)
                if number is None:
                    continue  # "Failed to find port for service": this port is left out
                add_endpoint_subset(subsets, pod, address,
                                    endpoint_port_from_service_port(service_port, number),
                                    publish_not_ready)
        subsets = _compact(repack_subsets(subsets))
        self._write(service, subsets, trigger_time)

    def _write(self, service: Object, subsets: list[Object], trigger_time: float | None) -> None:
        meta = service["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        current, exists = self.endpoints_lister.indexer.get_by_key(f"{namespace}/{name}")
        if not exists:
            current = {"apiVersion": "v1", "kind": "Endpoints",
                       "metadata": {"name": name, "namespace": namespace,
                                    "labels": dict(meta.get("labels") or {})}}
        create = not current["metadata"].get("resourceVersion")
        compare_labels = dict(current["metadata"].get("labels") or {})
        compare_labels.pop(LABEL_HEADLESS, None)  # the controller's own label takes no part
        annotations = dict(current["metadata"].get("annotations") or {})
        if not create and (current.get("subsets") or []) == subsets and \
                compare_labels == (meta.get("labels") or {}) and \
                capacity_annotation_set_correctly(annotations, current.get("subsets") or []):
            return  # nothing to write
        new: Object = {**current, "metadata": dict(current["metadata"]),
                       "subsets": [dict(s) for s in subsets]}
        labels = dict(meta.get("labels") or {})
        if trigger_time is not None:
            annotations[ENDPOINTS_LAST_CHANGE_TRIGGER_TIME] = rfc3339(trigger_time)
        else:
            annotations.pop(ENDPOINTS_LAST_CHANGE_TRIGGER_TIME, None)
        if truncate_endpoints(new):
            annotations[ENDPOINTS_OVER_CAPACITY] = TRUNCATED
        else:
            annotations.pop(ENDPOINTS_OVER_CAPACITY, None)
        new["subsets"] = _compact(new["subsets"])
        if not is_service_ip_set(service):
            labels[LABEL_HEADLESS] = ""
        new["metadata"]["labels"] = labels
        if annotations:
            new["metadata"]["annotations"] = annotations
        else:
            new["metadata"].pop("annotations", None)
        try:
            if create:
                self.client.create(new)
            else:
                self.client.update(new)
        except ApiError as err:
            if create and err.code == 403:
                return  # the namespace is terminating: nothing to do
            if create:
                self.recorder.event(new, "Warning", "FailedToCreateEndpoint",
                                    f"Failed to create endpoint for service {namespace}/{name}: "
                                    f"{err.message}")
            else:
                self.recorder.event(new, "Warning", "FailedToUpdateEndpoint",
                                    f"Failed to update endpoint {namespace}/{name}: {err.message}")
            raise
