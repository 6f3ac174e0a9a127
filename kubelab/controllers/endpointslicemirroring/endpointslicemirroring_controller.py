"""The EndpointSlice mirroring controller: EndpointSlices for the hand-made Endpoints of a
Service without a selector, so that kube-proxy (which reads only slices) routes to them
(pkg/controller/endpointslicemirroring: endpointslicemirroring_controller.go, reconciler.go,
utils.go).

Its queue holds Endpoints keys. A Service, an Endpoints object or a slice it manages (label
endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io) changing
brings its key back. syncEndpoints deletes the mirrored slices when the Service is gone or has a
selector (the EndpointSlice controller's then), when the Endpoints are gone, or when they must
not be mirrored (shouldMirror: the label endpointslice.kubernetes.io/skip-mirror: "true", as
the `kubernetes` Endpoints carry, or a leader-election annotation). Otherwise each subset's
addresses (at most 1000 per subset, --mirroring-max-endpoints-per-subset) become endpoints,
ready or not, grouped by their ports and address type, one slice per group: named
<endpoints>-<random>, labelled as the Endpoints plus kubernetes.io/service-name and managed-by,
annotated as the Endpoints less last-change-trigger-time and last-applied-configuration, and
owned by the Endpoints.

Like the endpoints controller it runs only with Cluster(anatomy=True). Departures: one slice per
group (upstream packs up to --mirroring-max-endpoints-per-slice and recycles slices across
groups); no stale-cache tracker; the slice's endpoints keep the order of the Endpoints.
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller as Loop
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.endpointslice.utils import LABEL_MANAGED_BY, LABEL_SERVICE_NAME

__all__ = ["CONTROLLER_NAME", "LABEL_SKIP_MIRROR", "Controller"]

CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
LABEL_SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
MAX_ENDPOINTS_PER_SUBSET = 1000
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
DROPPED_ANNOTATIONS = ("endpoints.kubernetes.io/last-change-trigger-time",
                       "kubectl.kubernetes.io/last-applied-configuration")


def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


def _key(obj: Object) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


def should_mirror(endpoints: Object | None) -> bool:
    """shouldMirror: not skip-mirror, not a leader-election record."""
    if endpoints is None:
        return False
    meta = endpoints["metadata"]
    return (meta.get("labels") or {}).get(LABEL_SKIP_MIRROR) != "true" and \
        LEADER_ANNOTATION not in (meta.get("annotations") or {})


def address_to_endpoint(address: Object, ready: bool) -> Object:
    """addressToEndpoint."""
    endpoint: Object = {"addresses": [address["ip"]], "conditions": {"ready": ready}}
    for field in ("targetRef", "nodeName", "hostname"):
        if address.get(field):
            endpoint[field] = address[field]
    return endpoint


def ep_ports_to_eps_ports(ports: list[Object]) -> list[Object]:
    """epPortsToEpsPorts: the same ports, in EndpointSlice's shape."""
    out = []
    for port in ports:
        converted: Object = {"name": port.get("name", ""), "port": port.get("port"),
                             "protocol": port.get("protocol", "TCP")}
        if port.get("appProtocol"):
            converted["appProtocol"] = port["appProtocol"]
        out.append(converted)
    return out


def desired_slices(endpoints: Object) -> dict[str, tuple[str, list[Object], list[Object]]]:
    """reconcile's first half: (ports, address type) -> (address type, ports, endpoints)."""
    desired: dict[str, tuple[str, list[Object], list[Object]]] = {}
    for subset in endpoints.get("subsets") or []:
        ports = ep_ports_to_eps_ports(subset.get("ports") or [])
        count = 0
        for field, ready in (("addresses", True), ("notReadyAddresses", False)):
            for address in subset.get(field) or []:
                if count >= MAX_ENDPOINTS_PER_SUBSET:
                    break
                count += 1
                address_type = "IPv6" if ":" in address.get("ip", "") else "IPv4"
                key = json.dumps([address_type, ports], sort_keys=True)
                group = desired.setdefault(key, (address_type, ports, []))
                group[2].append(address_to_endpoint(address, ready))
    return desired


def new_endpoint_slice(endpoints: Object, address_type: str, ports: list[Object],
                       items: list[Object]) -> Object:
    """newEndpointSlice: generateName <endpoints>-, owned by the Endpoints."""
    meta = endpoints["metadata"]
    labels = {**(meta.get("labels") or {}), LABEL_SERVICE_NAME: meta["name"],
              LABEL_MANAGED_BY: CONTROLLER_NAME}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k not in DROPPED_ANNOTATIONS}
    slice_meta: Object = {"generateName": f"{meta['name']}-", "namespace": meta.get("namespace", ""),
                          "labels": labels,
                          "ownerReferences": [{"apiVersion": "v1", "kind": "Endpoints",
                                               "name": meta["name"], "uid": meta.get("uid", ""),
                                               "controller": True, "blockOwnerDeletion": True}]}
    if annotations:
        slice_meta["annotations"] = annotations
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": slice_meta,
            "addressType": address_type, "ports": ports, "endpoints": items}


class Controller:
    NAME = "endpointslice-mirroring-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 workers: int = 5) -> None:
        self.ctx, self.client = ctx, ctx.client
        self.loop = Loop(self.NAME, self.sync_endpoints, ctx.clock, workers=workers,
                         trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        self.queue = self.loop.queue
        services = informers.informer_for("services")
        endpoints = informers.informer_for("endpoints")
        slices = informers.informer_for("endpointslices")
        self.service_lister, self.endpoints_lister, self.slice_lister = \
            services.lister, endpoints.lister, slices.lister
        enqueue = ResourceEventHandler(lambda o: self.queue.add(_key(o)),
                                       lambda _old, cur: self.queue.add(_key(cur)),
                                       lambda o: self.queue.add(_key(_tombstone(o))))
        services.add_event_handler(enqueue)
        endpoints.add_event_handler(enqueue)
        slices.add_event_handler(ResourceEventHandler(
            self._on_slice, lambda _old, cur: self._on_slice(cur),
            lambda o: self._on_slice(_tombstone(o))))

    def run(self) -> None:
        self.loop.run()

    def stop(self) -> None:
        self.loop.stop()

    def _on_slice(self, slice_: Object) -> None:
        """queueEndpointsForEndpointSlice: only the slices this controller manages."""
        labels = slice_["metadata"].get("labels") or {}
        if labels.get(LABEL_MANAGED_BY) == CONTROLLER_NAME and labels.get(LABEL_SERVICE_NAME):
            self.queue.add(f"{slice_['metadata'].get('namespace', '')}/{labels[LABEL_SERVICE_NAME]}")

    def _mirrored(self, namespace: str, name: str) -> list[Object]:
        return [s for s in self.slice_lister.by_namespace(namespace).list()
                if (s["metadata"].get("labels") or {}).get(LABEL_MANAGED_BY) == CONTROLLER_NAME
                and (s["metadata"].get("labels") or {}).get(LABEL_SERVICE_NAME) == name]

    def delete_mirrored_slices(self, namespace: str, name: str) -> None:
        for slice_ in self._mirrored(namespace, name):
            try:
                self.client.delete("endpointslices", slice_["metadata"]["name"], namespace)
            except ApiError as err:
                if err.code != 404:
                    raise

    def sync_endpoints(self, key: str) -> None:
        namespace, name = split_key(key)
        service, exists = self.service_lister.indexer.get_by_key(key)
        if not exists or (service.get("spec") or {}).get("selector"):
            self.delete_mirrored_slices(namespace, name)
            return
        endpoints, exists = self.endpoints_lister.indexer.get_by_key(key)
        if not exists or not should_mirror(endpoints):
            self.delete_mirrored_slices(namespace, name)
            return
        self.reconcile(endpoints, self._mirrored(namespace, name))

    def reconcile(self, endpoints: Object, existing: list[Object]) -> None:
        """Keep a slice whose group is wanted and whose content matches, update one whose
        content changed, create the missing groups, delete the rest."""
        desired = desired_slices(endpoints)
        by_group: dict[str, list[Object]] = {}
        for slice_ in sorted(existing, key=lambda s: s["metadata"]["name"]):
            group = json.dumps([slice_.get("addressType"), slice_.get("ports") or []], sort_keys=True)
            by_group.setdefault(group, []).append(slice_)
        namespace = endpoints["metadata"].get("namespace", "")
        for group, (address_type, ports, items) in desired.items():
            want = new_endpoint_slice(endpoints, address_type, ports, items)
            current = by_group.pop(group, [])
            if not current:
                self.client.create(want)
                continue
            first, extra = current[0], current[1:]
            meta = first["metadata"]
            if first.get("endpoints") != items or meta.get("labels") != want["metadata"]["labels"] \
                    or (meta.get("annotations") or {}) != want["metadata"].get("annotations", {}):
                updated = {**first, "endpoints": items,
                           "metadata": {**meta, "labels": want["metadata"]["labels"]}}
                if want["metadata"].get("annotations"):
                    updated["metadata"]["annotations"] = want["metadata"]["annotations"]
                else:
                    updated["metadata"].pop("annotations", None)
                self.client.update(updated)
            by_group[group] = extra
        for leftover in by_group.values():
            for slice_ in leftover:
                self.client.delete("endpointslices", slice_["metadata"]["name"], namespace)
