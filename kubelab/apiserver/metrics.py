"""The API server's request metrics, counted as requests finish (what /metrics exposes).

k8s.io/apiserver/pkg/endpoints/metrics/metrics.go: every request, watches too, adds one to
apiserver_request_total and one observation to apiserver_request_duration_seconds, labelled with
CleanVerb (GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE), the group, version, resource,
subresource, scope (resource, namespace or cluster), dry_run and, for the total, the code.
The duration is virtual: what the request waited for the store plus any injected delay.

The storage layer's calls to etcd are counted as k8s.io/apiserver pkg/storage/etcd3/store.go
records them (metrics.RecordEtcdRequest, pkg/storage/etcd3/metrics/metrics.go):
etcd_request_duration_seconds and etcd_requests_total by operation ("get", "list", "create",
"update", "delete"), group and resource, in virtual seconds (a read takes none; a write waits
for the disk, kubelab/store/disk.py). Lists served by the watch cache and the reads an update or
a delete starts from (the cacher's copy upstream) are not etcd requests.
apiserver_current_inflight_requests and APF's current_executing/inqueue gauges are read from
the filters when scraped.

The counts are plain numbers here; kubelab/cluster/prometheus.py writes them in Prometheus'
text format with prometheus_client, so nothing in the simulation imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubelab.api.request import Request
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.flowcontrol import APFController
from kubelab.apiserver.flowcontrol.maxinflight import NON_MUTATING_VERBS
from kubelab.sim.histogram import Histogram

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["DURATION_BUCKETS", "RequestMetrics", "flowcontrol_requests", "inflight_requests",
           "open_watches", "storage_objects"]

# metrics.go requestLatencies' buckets (seconds); etcd_request_duration_seconds has the same.
DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0,
                    5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0)
_VERBS = {"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST", "update": "PUT",
          "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE"}
# (verb, dry_run, group, version, resource, subresource, scope)
Labels = tuple[str, str, str, str, str, str, str]


@dataclass
class RequestMetrics:
    total: dict[tuple[Labels, str], int] = field(default_factory=dict)      # (labels, code)
    durations: dict[Labels, Histogram] = field(default_factory=dict)
    # API Priority and Fairness: (flow schema, priority level) -> requests it executed (the
    # rejections are counted where they happen: flowcontrol/apf_controller.py)
    dispatched: dict[tuple[str, str], int] = field(default_factory=dict)
    # (operation, group, resource) -> the storage layer's etcd requests and their durations
    etcd: dict[tuple[str, str, str], Histogram] = field(default_factory=dict)

    def observe(self, request: Request, record: AuditRecord, seconds: float) -> None:
        verb = _VERBS.get(request.verb, request.verb.upper())
        if verb == "PATCH" and request.options.get("patchType") == "apply":
            verb = "APPLY"
        scope = "resource" if request.name else "namespace" if request.namespace else "cluster"
        labels = (verb, "All" if request.dry_run else "", request.group, request.version,
                  request.resource, request.subresource, scope)
        key = (labels, str(record.code))
        self.total[key] = self.total.get(key, 0) + 1
        self.durations.setdefault(labels, Histogram(DURATION_BUCKETS)).observe(seconds)
        if record.priority_level and record.code != 429:
            flow = (record.flow_schema, record.priority_level)
            self.dispatched[flow] = self.dispatched.get(flow, 0) + 1

    def etcd_request(self, operation: str, group: str, resource: str, seconds: float) -> None:
        """metrics.RecordEtcdRequest: one call of the storage layer to etcd."""
        key = (operation, group, resource)
        self.etcd.setdefault(key, Histogram(DURATION_BUCKETS)).observe(seconds)


def storage_objects(server: APIServer) -> dict[tuple[str, str], int]:
    """apiserver_storage_objects and apiserver_resource_objects: the keys under each served
    resource's prefix, by (group, resource), counted by etcd (storage's ObjectCountTracker asks
    for key counts; no object is read)."""
    counts: dict[tuple[str, str], int] = {}
    for served in server.served:
        gr = (served.info.group, served.info.resource)
        if gr not in counts:
            counts[gr] = server.store.range(served.prefix, prefix=True, count_only=True).count
    return dict(sorted(counts.items(), key=lambda kv: _group_resource(*kv[0])))


def _group_resource(group: str, resource: str) -> str:
    """schema.GroupResource.String(): "pods", "deployments.apps"."""
    return f"{resource}.{group}" if group else resource


def open_watches(server: APIServer) -> dict[tuple[str, str], int]:
    """apiserver_longrunning_requests{verb="WATCH"}: the open watches per (group, resource)."""
    counts = {gr: len(cacher.open_watchers()) for gr, cacher in server.served.cachers.items()}
    return {gr: n for gr, n in sorted(counts.items()) if n}


def inflight_requests(server: APIServer) -> dict[str, int]:
    """apiserver_current_inflight_requests: the read-only and mutating requests executing now,
    in the max-inflight filter or under APF (both filters keep this watermark upstream)."""
    counts = {"mutating": 0, "readOnly": 0}
    if server.flowcontrol is not None:
        for queues in server.flowcontrol.queue_sets():
            for req in queues.running:
                verb = req.what.split(" ", 1)[0]
                counts["readOnly" if verb in NON_MUTATING_VERBS else "mutating"] += 1
    return counts


def flowcontrol_requests(server: APIServer) -> tuple[dict[tuple[str, str], int],
                                                     dict[tuple[str, str], int]]:
    """APF's current_executing_requests and current_inqueue_requests, by (priority level, flow
    schema). Empty unless APF is on (the max-inflight filter has no levels)."""
    executing: dict[tuple[str, str], int] = {}
    waiting: dict[tuple[str, str], int] = {}
    if not isinstance(server.flowcontrol, APFController):
        return executing, waiting
    for queues in server.flowcontrol.queue_sets():
        for counts, reqs in ((executing, queues.running),
                             (waiting, [r for q in queues.queues for r in q.waiting])):
            for req in reqs:
                key = (req.priority_level, req.flow.split("/", 1)[0])
                counts[key] = counts.get(key, 0) + 1
    return dict(sorted(executing.items())), dict(sorted(waiting.items()))
