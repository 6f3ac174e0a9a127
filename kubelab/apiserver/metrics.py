"""The API server's request metrics, counted as requests finish (what /metrics exposes).

k8s.io/apiserver/pkg/endpoints/metrics/metrics.go: every request, watches too, adds one to
apiserver_request_total and one observation to apiserver_request_duration_seconds, labelled with
CleanVerb (GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE), the group, version, resource,
subresource, scope (resource, namespace or cluster), dry_run and, for the total, the code.
The duration is virtual: what the request waited for the store plus any injected delay.
The counts are plain numbers here; kubelab/serve/metrics.py writes them in Prometheus' text
format with prometheus_client, so nothing in the simulation imports it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubelab.api.request import Request
from kubelab.apiserver.auth.audit import AuditRecord

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["DURATION_BUCKETS", "RequestMetrics", "open_watches", "storage_objects"]

# metrics.go requestLatencies' buckets (seconds).
DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0,
                    5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0)
_VERBS = {"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST", "update": "PUT",
          "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE"}
# (verb, dry_run, group, version, resource, subresource, scope)
Labels = tuple[str, str, str, str, str, str, str]


@dataclass
class Histogram:
    buckets: list[int] = field(default_factory=lambda: [0] * len(DURATION_BUCKETS))
    count: int = 0
    sum: float = 0.0

    def observe(self, seconds: float) -> None:
        at = bisect.bisect_left(DURATION_BUCKETS, seconds)
        if at < len(self.buckets):
            self.buckets[at] += 1  # cumulated when written out
        self.count += 1
        self.sum += seconds


@dataclass
class RequestMetrics:
    total: dict[tuple[Labels, str], int] = field(default_factory=dict)      # (labels, code)
    durations: dict[Labels, Histogram] = field(default_factory=dict)
    # API Priority and Fairness: (flow schema, priority level) -> requests it executed (the
    # rejections are counted where they happen: flowcontrol/apf_controller.py)
    dispatched: dict[tuple[str, str], int] = field(default_factory=dict)

    def observe(self, request: Request, record: AuditRecord, seconds: float) -> None:
        verb = _VERBS.get(request.verb, request.verb.upper())
        if verb == "PATCH" and request.options.get("patchType") == "apply":
            verb = "APPLY"
        scope = "resource" if request.name else "namespace" if request.namespace else "cluster"
        labels = (verb, "All" if request.dry_run else "", request.group, request.version,
                  request.resource, request.subresource, scope)
        key = (labels, str(record.code))
        self.total[key] = self.total.get(key, 0) + 1
        self.durations.setdefault(labels, Histogram()).observe(seconds)
        if record.priority_level and record.code != 429:
            flow = (record.flow_schema, record.priority_level)
            self.dispatched[flow] = self.dispatched.get(flow, 0) + 1


def storage_objects(server: APIServer) -> dict[str, int]:
    """apiserver_storage_objects: the keys under each served resource's prefix, counted by etcd
    (storage's ObjectCountTracker asks for key counts; no object is read)."""
    counts: dict[str, int] = {}
    for served in server.served:
        info = served.info
        name = f"{info.resource}.{info.group}" if info.group else info.resource
        if name not in counts:
            counts[name] = server.store.range(served.prefix, prefix=True, count_only=True).count
    return dict(sorted(counts.items()))


def open_watches(server: APIServer) -> dict[tuple[str, str], int]:
    """apiserver_longrunning_requests{verb="WATCH"}: the open watches per (group, resource)."""
    counts = {gr: len(cacher.open_watchers()) for gr, cacher in server.served.cachers.items()}
    return {gr: n for gr, n in sorted(counts.items()) if n}
