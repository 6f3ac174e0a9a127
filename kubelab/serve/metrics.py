"""GET /metrics: the API server's metrics in Prometheus' text format, written by prometheus_client.

The counts are apiserver/metrics.py's, kept as requests finish; a scrape turns them into metric
families (a custom collector on a registry of its own, so nothing global is touched) and
prometheus_client writes the exposition format. Names, labels and help texts are
kube-apiserver's (k8s.io/apiserver/pkg/endpoints/metrics/metrics.go, storage's
apiserver_storage_objects, flowcontrol's metrics.go, watch_cache's counters).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from kubelab.apiserver import APIServer
from kubelab.apiserver.flowcontrol import APFController
from kubelab.apiserver.metrics import DURATION_BUCKETS, open_watches, storage_objects

__all__ = ["CONTENT_TYPE", "exposition"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_LABELS = ["verb", "dry_run", "group", "version", "resource", "subresource", "scope"]


class _APIServerCollector(Collector):
    def __init__(self, server: APIServer) -> None:
        self.server = server

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily | HistogramMetricFamily]:
        metrics = self.server.metrics
        total = CounterMetricFamily(
            "apiserver_request", "[STABLE] Counter of apiserver requests broken out for each verb, dry run "
            "value, group, version, resource, scope, component, and HTTP response code.",
            labels=[*_LABELS, "component", "code"])
        for (labels, code), count in sorted(metrics.total.items()):
            total.add_metric([*labels, "apiserver", code], count)
        yield total
        durations = HistogramMetricFamily(
            "apiserver_request_duration_seconds", "[STABLE] Response latency distribution in seconds for "
            "each verb, dry run value, group, version, resource, subresource, scope and component.",
            labels=[*_LABELS, "component"])
        for labels, histogram in sorted(metrics.durations.items()):
            cumulative = list(accumulate(histogram.buckets))
            buckets = [(f"{edge:g}", n) for edge, n in zip(DURATION_BUCKETS, cumulative, strict=True)]
            durations.add_metric([*labels, "apiserver"], [*buckets, ("+Inf", histogram.count)],
                                 histogram.sum)
        yield durations
        yield from self._watches_and_objects()
        dispatched = CounterMetricFamily(
            "apiserver_flowcontrol_dispatched_requests", "[BETA] Number of requests executed by "
            "API Priority and Fairness subsystem", labels=["flow_schema", "priority_level"])
        for (flow_schema, level), count in sorted(metrics.dispatched.items()):
            dispatched.add_metric([flow_schema, level], count)
        yield dispatched
        rejected = CounterMetricFamily(
            "apiserver_flowcontrol_rejected_requests", "[BETA] Number of requests rejected by API "
            "Priority and Fairness subsystem", labels=["flow_schema", "priority_level", "reason"])
        apf = self.server.flowcontrol
        rejections = apf.rejections if isinstance(apf, APFController) else {}
        for (flow_schema, level, reason), count in sorted(rejections.items()):
            rejected.add_metric([flow_schema, level, reason], count)
        yield rejected

    def _watches_and_objects(self) -> Iterator[GaugeMetricFamily]:
        watches = GaugeMetricFamily(
            "apiserver_longrunning_requests", "[STABLE] Gauge of all active long-running apiserver "
            "requests broken out by verb, group, version, resource, scope and component. Not all "
            "requests are tracked this way.",
            labels=["verb", "group", "resource", "component"])
        for (group, resource), count in open_watches(self.server).items():
            watches.add_metric(["WATCH", group, resource, "apiserver"], count)
        yield watches
        objects = GaugeMetricFamily("apiserver_storage_objects", "[STABLE] Number of stored "
                                    "objects at the time of last check split by kind. In case "
                                    "of a fetching error, the value will be -1.", labels=["resource"])
        for resource, count in storage_objects(self.server).items():
            objects.add_metric([resource], count)
        yield objects


def exposition(server: APIServer) -> bytes:
    """The text a scrape of `server`'s /metrics gets."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_APIServerCollector(server))
    return generate_latest(registry)
