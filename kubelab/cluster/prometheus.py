"""The components' /metrics in Prometheus' text format, written by prometheus_client.

The components count as they work, in plain numbers and virtual seconds (apiserver/metrics.py,
client/workqueue/queue.py, scheduler/metrics.py); a scrape turns them into metric families (a
custom collector on a registry of its own, so nothing global is touched) and prometheus_client
writes the exposition format. Names, help texts (with the stability prefix component-base puts
in front), labels and bucket bounds are upstream's 1.34 ones:

* kube-apiserver: k8s.io/apiserver pkg/endpoints/metrics/metrics.go (apiserver_request_total,
  apiserver_request_duration_seconds, apiserver_longrunning_requests,
  apiserver_current_inflight_requests), pkg/storage/etcd3/metrics/metrics.go
  (etcd_request_duration_seconds, etcd_requests_total, apiserver_storage_objects and
  apiserver_resource_objects),
  pkg/util/flowcontrol/metrics/metrics.go (apiserver_flowcontrol_*);
* kube-controller-manager: k8s.io/component-base/metrics/prometheus/workqueue/metrics.go
  (workqueue_*{name}, one series per queue name);
* kube-scheduler: pkg/scheduler/metrics/metrics.go.

Departures: the gauges are read at the scrape, not maintained between scrapes
(apiserver_current_inflight_requests is upstream's high-water mark of the last second; here
the requests executing at that instant); only these families are written, none of the Go
runtime's or process' ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from kubelab.apiserver import APIServer
from kubelab.apiserver.flowcontrol import APFController
from kubelab.apiserver.metrics import (
    flowcontrol_requests,
    inflight_requests,
    open_watches,
    storage_objects,
)
from kubelab.client.workqueue import DelayingQueue, Queue
from kubelab.controllers.manager import ControllerManager
from kubelab.scheduler import Scheduler
from kubelab.scheduler.metrics import pending_pods
from kubelab.sim.histogram import Histogram

__all__ = ["CONTENT_TYPE", "component_exposition", "exposition", "metrics_of"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_LABELS = ["verb", "dry_run", "group", "version", "resource", "subresource", "scope"]


def _le(bound: float) -> str:
    """A bucket bound as Go writes it (strconv 'g', shortest): 0.005, 1, 1e-06."""
    text = repr(float(bound))
    return text[:-2] if text.endswith(".0") else text


def _histogram(family: HistogramMetricFamily, labels: list[str], histogram: Histogram) -> None:
    cumulative = accumulate(histogram.buckets)
    buckets = [(_le(b), n) for b, n in zip(histogram.bounds, cumulative, strict=True)]
    family.add_metric(labels, [*buckets, ("+Inf", histogram.count)], histogram.sum)


# ---------------------------------------------------------------------- kube-apiserver

class _APIServerCollector(Collector):
    def __init__(self, server: APIServer) -> None:
        self.server = server

    def collect(self) -> Iterator[Metric]:
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
            _histogram(durations, [*labels, "apiserver"], histogram)
        yield durations
        inflight = GaugeMetricFamily(
            "apiserver_current_inflight_requests", "[STABLE] Maximal number of currently used "
            "inflight request limit of this apiserver per request kind in last second.",
            labels=["request_kind"])
        for kind, count in inflight_requests(self.server).items():
            inflight.add_metric([kind], count)
        yield inflight
        yield from self._watches_and_objects()
        yield from self._etcd()
        yield from self._flowcontrol()

    def _watches_and_objects(self) -> Iterator[GaugeMetricFamily]:
        watches = GaugeMetricFamily(
            "apiserver_longrunning_requests", "[STABLE] Gauge of all active long-running apiserver "
            "requests broken out by verb, group, version, resource, scope and component. Not all "
            "requests are tracked this way.",
            labels=["verb", "group", "resource", "component"])
        for (group, resource), count in open_watches(self.server).items():
            watches.add_metric(["WATCH", group, resource, "apiserver"], count)
        yield watches
        counted = "Number of stored objects at the time of last check split by kind. In case of " \
            "a fetching error, the value will be -1."
        # 1.34 deprecates apiserver_storage_objects (its help says so) for apiserver_resource_objects.
        objects = GaugeMetricFamily("apiserver_storage_objects", "[STABLE] [DEPRECATED, consider "
                                    f"using apiserver_resource_objects instead] {counted}",
                                    labels=["resource"])
        by_group = GaugeMetricFamily("apiserver_resource_objects", f"[ALPHA] {counted}",
                                     labels=["group", "resource"])
        for (group, resource), count in storage_objects(self.server).items():
            objects.add_metric([f"{resource}.{group}" if group else resource], count)
            by_group.add_metric([group, resource], count)
        yield objects
        yield by_group

    def _etcd(self) -> Iterator[Metric]:
        labels = ["operation", "group", "resource"]
        durations = HistogramMetricFamily(
            "etcd_request_duration_seconds", "[ALPHA] Etcd request latency in seconds for each "
            "operation and object type.", labels=labels)
        total = CounterMetricFamily(
            "etcd_requests", "[ALPHA] Etcd request counts for each operation and object type.",
            labels=labels)
        for key, histogram in sorted(self.server.metrics.etcd.items()):
            _histogram(durations, list(key), histogram)
            total.add_metric(list(key), histogram.count)
        yield durations
        yield total

    def _flowcontrol(self) -> Iterator[Metric]:
        apf = self.server.flowcontrol  # without APF the families are there, with no series
        dispatched = CounterMetricFamily(
            "apiserver_flowcontrol_dispatched_requests", "[BETA] Number of requests executed by "
            "API Priority and Fairness subsystem", labels=["flow_schema", "priority_level"])
        for (flow_schema, level), count in sorted(self.server.metrics.dispatched.items()):
            dispatched.add_metric([flow_schema, level], count)
        yield dispatched
        rejected = CounterMetricFamily(
            "apiserver_flowcontrol_rejected_requests", "[BETA] Number of requests rejected by API "
            "Priority and Fairness subsystem", labels=["flow_schema", "priority_level", "reason"])
        rejections = apf.rejections if isinstance(apf, APFController) else {}
        for (flow_schema, level, reason), count in sorted(rejections.items()):
            rejected.add_metric([flow_schema, level, reason], count)
        yield rejected
        executing, waiting = flowcontrol_requests(self.server)
        for name, help_text, counts in (
                ("apiserver_flowcontrol_current_executing_requests", "[BETA] Number of requests in "
                 "initial (for a WATCH) or any (for a non-WATCH) execution stage in the API "
                 "Priority and Fairness subsystem", executing),
                ("apiserver_flowcontrol_current_inqueue_requests", "[BETA] Number of requests "
                 "currently pending in queues of the API Priority and Fairness subsystem", waiting)):
            gauge = GaugeMetricFamily(name, help_text, labels=["flow_schema", "priority_level"])
            for (level, flow_schema), count in counts.items():
                gauge.add_metric([flow_schema, level], count)
            yield gauge


# ---------------------------------------------------------------------- kube-controller-manager

_WORKQUEUE_HELP = {
    "depth": "[BETA] Current depth of workqueue",
    "adds": "[BETA] Total number of adds handled by workqueue",
    "queue_duration_seconds": "[BETA] How long in seconds an item stays in workqueue before "
                              "being requested.",
    "work_duration_seconds": "[BETA] How long in seconds processing an item from workqueue takes.",
    "unfinished_work_seconds": "[BETA] How many seconds of work has done that is in progress and "
                               "hasn't been observed by work_duration. Large values indicate stuck "
                               "threads. One can deduce the number of stuck threads by observing "
                               "the rate at which this increases.",
    "longest_running_processor_seconds": "[BETA] How many seconds has the longest running "
                                         "processor for workqueue been running.",
    "retries": "[BETA] Total number of retries handled by workqueue",
}


def _sum(histograms: Iterable[Histogram]) -> Histogram:
    merged: Histogram | None = None
    for h in histograms:
        if merged is None:
            merged = Histogram(h.bounds)
        merged.buckets = [a + b for a, b in zip(merged.buckets, h.buckets, strict=True)]
        merged.count += h.count
        merged.sum += h.sum
    assert merged is not None
    return merged


class _WorkqueueCollector(Collector):
    """The workqueue_* families of the given queues; queues sharing a name share its series."""

    def __init__(self, queues: Iterable[tuple[str, Queue[Any]]]) -> None:
        self.by_name: dict[str, list[Queue[Any]]] = {}
        for name, queue in queues:
            if name:  # an unnamed queue has no metrics upstream either
                self.by_name.setdefault(name, []).append(queue)

    def collect(self) -> Iterator[Metric]:
        def family(kind: Callable[..., Any], key: str) -> Any:
            return kind(f"workqueue_{key}", _WORKQUEUE_HELP[key], labels=["name"])
        depth, adds = family(GaugeMetricFamily, "depth"), family(CounterMetricFamily, "adds")
        queued = family(HistogramMetricFamily, "queue_duration_seconds")
        work = family(HistogramMetricFamily, "work_duration_seconds")
        unfinished = family(GaugeMetricFamily, "unfinished_work_seconds")
        longest = family(GaugeMetricFamily, "longest_running_processor_seconds")
        retries = family(CounterMetricFamily, "retries")
        for name, queues in sorted(self.by_name.items()):
            depth.add_metric([name], sum(q.depth() for q in queues))
            adds.add_metric([name], sum(q.adds for q in queues))
            _histogram(queued, [name], _sum(q.queue_duration for q in queues))
            _histogram(work, [name], _sum(q.work_duration for q in queues))
            unfinished.add_metric([name], sum(q.unfinished_work_seconds() for q in queues))
            longest.add_metric([name], max(q.longest_running_processor_seconds() for q in queues))
            retries.add_metric([name], sum(q.retries for q in queues if isinstance(q, DelayingQueue)))
        yield from (depth, adds, queued, work, unfinished, longest, retries)


# ---------------------------------------------------------------------- kube-scheduler

class _SchedulerCollector(Collector):
    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    def collect(self) -> Iterator[Metric]:
        metrics = self.scheduler.metrics
        attempts = CounterMetricFamily(
            "scheduler_schedule_attempts", "[STABLE] Number of attempts to schedule pods, by the "
            "result. 'unschedulable' means a pod could not be scheduled, while 'error' means an "
            "internal scheduler problem.", labels=["result", "profile"])
        durations = HistogramMetricFamily(
            "scheduler_scheduling_attempt_duration_seconds", "[STABLE] Scheduling attempt latency "
            "in seconds (scheduling algorithm + binding)", labels=["result", "profile"])
        for (result, profile), histogram in sorted(metrics.attempts.items()):
            attempts.add_metric([result, profile], histogram.count)
            _histogram(durations, [result, profile], histogram)
        yield attempts
        yield durations
        pending = GaugeMetricFamily(
            "scheduler_pending_pods", "[STABLE] Number of pending pods, by the queue type. 'active' "
            "means number of pods in activeQ; 'backoff' means number of pods in backoffQ; "
            "'unschedulable' means number of pods in unschedulablePods that the scheduler "
            "attempted to schedule and failed; 'gated' is the number of unschedulable pods that "
            "the scheduler never attempted to schedule because they are gated.", labels=["queue"])
        for queue, count in pending_pods(self.scheduler.queue).items():
            pending.add_metric([queue], count)
        yield pending
        sli = HistogramMetricFamily(
            "scheduler_pod_scheduling_sli_duration_seconds", "[BETA] E2e latency for a pod being "
            "scheduled, from the time the pod enters the scheduling queue an d might involve "
            "multiple scheduling attempts.", labels=["attempts"])  # (upstream's "an d")
        for label, histogram in sorted(metrics.sli.items()):
            _histogram(sli, [label], histogram)
        yield sli
        incoming = CounterMetricFamily(
            "scheduler_queue_incoming_pods", "[STABLE] Number of pods added to scheduling queues "
            "by event and queue type.", labels=["queue", "event"])
        for (queue, event), count in sorted(metrics.incoming.items()):
            incoming.add_metric([queue, event], count)
        yield incoming


def _write(collector: Collector) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return generate_latest(registry)


def exposition(server: APIServer) -> bytes:
    """The text a scrape of `server`'s /metrics gets."""
    return _write(_APIServerCollector(server))


def component_exposition(component: object) -> bytes:
    """The /metrics text of an API server, a controller manager or a scheduler."""
    if isinstance(component, APIServer):
        return exposition(component)
    if isinstance(component, ControllerManager):
        return _write(_WorkqueueCollector(component.workqueues()))
    if isinstance(component, Scheduler):
        return _write(_SchedulerCollector(component))
    raise TypeError(f"no metrics for {type(component).__name__}")


def metrics_of(apiservers: Iterable[APIServer], components: dict[str, Any], name: str) -> str:
    """Cluster.scrape(name): "apiserver" (the first live API server) or one by its name,
    "controller-manager", "scheduler" (the first replica when there are several) or a
    replica's name ("scheduler-2")."""
    servers = {s.name: s for s in apiservers}
    live = [s for s in servers.values() if s.running]
    if name == "apiserver" and live:
        return exposition(live[0]).decode()
    if name in servers:
        if not servers[name].running:
            raise ValueError(f"{name} is not running")
        return exposition(servers[name]).decode()
    for candidate in (name, f"{name}-1"):
        component = components.get(candidate)
        if isinstance(component, (ControllerManager, Scheduler)):
            return component_exposition(component).decode()
    known = ["apiserver", *servers, *(n for n, c in sorted(components.items())
                                      if isinstance(c, (ControllerManager, Scheduler)))]
    raise ValueError(f"no metrics for {name!r} (not running, or no /metrics in kubelab); "
                     f"known: {', '.join(dict.fromkeys(known))}")
