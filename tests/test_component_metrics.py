"""/metrics of the API server, the controller manager and the scheduler (kubelab/cluster/
prometheus.py over the components' own counts): upstream's names, help texts with their
stability prefix, labels and bucket bounds; values that follow a known workload; the workqueue
metrics as client-go's metrics_test.go checks them, on the simulated clock."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubelab import Cluster
from kubelab.apiserver.flowcontrol.maxinflight import MaxInFlightFilter
from kubelab.client.workqueue import RateLimitingQueue
from kubelab.sim.clock import Clock

Families = dict[str, tuple[str, str, list[tuple[str, dict[str, str], float]]]]


def parse(text: str) -> Families:
    """name -> (type, help, samples), through prometheus_client's own parser."""
    return {f.name: (f.type, f.documentation, [(s.name, s.labels, s.value) for s in f.samples])
            for f in text_string_to_metric_families(text)}


def value(families: Families, family: str, sample: str | None = None, /, **labels: str) -> float:
    """The sum over the samples (of `sample`, default: the family's name) whose labels include
    `labels`."""
    _, _, samples = families[family]
    want = sample or family
    return sum(v for n, ls, v in samples if n == want and labels.items() <= ls.items())


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    """A Deployment of 3 replicas, and a pod no node can hold."""
    c = Cluster(nodes=1, apf=True)
    c.run(1)
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge"},
             "spec": {"containers": [{"name": "c", "image": "nginx",
                                      "resources": {"requests": {"cpu": "1000"}}}]}})
    c.run(5)
    return c


def test_the_api_servers_etcd_and_inflight_metrics(cluster: Cluster) -> None:
    before = parse(cluster.scrape("apiserver"))
    cluster.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}})
    cluster.client.get("configmaps", "m")
    cluster.client.delete("configmaps", "m")
    after = parse(cluster.scrape())
    kind, help_text, _ = after["etcd_request_duration_seconds"]
    assert (kind, help_text) == ("histogram", "[ALPHA] Etcd request latency in seconds for each "
                                 "operation and object type.")
    assert after["etcd_requests"][:2] == ("counter", "[ALPHA] Etcd request counts for each "
                                          "operation and object type.")
    cm = {"group": "", "resource": "configmaps"}
    for operation, n in (("create", 1), ("get", 1), ("delete", 1)):
        grew = value(after, "etcd_requests", "etcd_requests_total", operation=operation, **cm) - \
            value(before, "etcd_requests", "etcd_requests_total", operation=operation, **cm)
        assert grew == n, operation
    les = [s[1]["le"] for s in after["etcd_request_duration_seconds"][2]
           if s[0].endswith("_bucket") and s[1]["operation"] == "create" and s[1]["resource"] == "configmaps"]
    assert les[:3] == ["0.005", "0.025", "0.05"] and les[-2:] == ["60", "+Inf"]
    assert after["apiserver_storage_objects"][1].startswith("[STABLE] [DEPRECATED, consider using "
                                                            "apiserver_resource_objects instead]")
    deployments = len(cluster.client.list("deployments")["items"])  # web, coredns
    assert value(after, "apiserver_resource_objects", group="apps", resource="deployments") == \
        value(after, "apiserver_storage_objects", resource="deployments.apps") == deployments >= 2
    kind, help_text, samples = after["apiserver_current_inflight_requests"]
    assert (kind, help_text) == ("gauge", "[STABLE] Maximal number of currently used inflight "
                                 "request limit of this apiserver per request kind in last second.")
    assert sorted(s[1]["request_kind"] for s in samples) == ["mutating", "readOnly"]
    for name in ("apiserver_flowcontrol_current_executing_requests",
                 "apiserver_flowcontrol_current_inqueue_requests"):
        assert after[name][0] == "gauge" and after[name][1].startswith("[BETA] Number of requests")


def test_the_controller_managers_workqueues(cluster: Cluster) -> None:
    got = parse(cluster.scrape("controller-manager"))
    assert got["workqueue_depth"][:2] == ("gauge", "[BETA] Current depth of workqueue")
    assert got["workqueue_adds"][:2] == ("counter", "[BETA] Total number of adds handled by workqueue")
    assert got["workqueue_retries"][0] == "counter"
    names = {s[1]["name"] for s in got["workqueue_depth"][2]}
    assert {"replicaset", "deployment", "endpoint_slice", "garbage_collector_attempt_to_delete",
            "certificate"} <= names
    # The Deployment's ReplicaSet was synced as its pods appeared; every add was handed out.
    assert value(got, "workqueue_adds", "workqueue_adds_total", name="replicaset") >= 3
    assert value(got, "workqueue_depth", name="replicaset") == 0
    gets = value(got, "workqueue_queue_duration_seconds", "workqueue_queue_duration_seconds_count",
                 name="replicaset")
    assert gets == value(got, "workqueue_work_duration_seconds",
                         "workqueue_work_duration_seconds_count", name="replicaset") > 0
    les = [s[1]["le"] for s in got["workqueue_work_duration_seconds"][2]
           if s[0].endswith("_bucket") and s[1]["name"] == "replicaset"]
    assert les == ["1e-06", "9.999999999999999e-06", "9.999999999999999e-05", "0.001", "0.01",
                   "0.1", "1", "10", "100", "1000", "+Inf"]  # as Go prints them (x10 in turn)


def test_the_schedulers_attempts_and_queues(cluster: Cluster) -> None:
    got = parse(cluster.scrape("scheduler"))
    bound = [p for p in cluster.client.list("pods", "default")["items"] if p["spec"].get("nodeName")]
    kind, help_text, _ = got["scheduler_schedule_attempts"]
    assert kind == "counter" and help_text.startswith("[STABLE] Number of attempts to schedule pods")
    profile = {"profile": "default-scheduler"}
    scheduled = value(got, "scheduler_schedule_attempts", "scheduler_schedule_attempts_total",
                      result="scheduled", **profile)
    assert scheduled == cluster.components["scheduler"].scheduled >= len(bound) == 3
    assert value(got, "scheduler_schedule_attempts", "scheduler_schedule_attempts_total",
                 result="unschedulable", **profile) >= 1
    assert value(got, "scheduler_pending_pods", queue="unschedulable") == 1
    assert {s[1]["queue"] for s in got["scheduler_pending_pods"][2]} == {
        "active", "backoff", "unschedulable", "gated"}
    assert value(got, "scheduler_scheduling_attempt_duration_seconds",
                 "scheduler_scheduling_attempt_duration_seconds_count", result="scheduled") == scheduled
    assert value(got, "scheduler_pod_scheduling_sli_duration_seconds",
                 "scheduler_pod_scheduling_sli_duration_seconds_count") == scheduled
    assert value(got, "scheduler_queue_incoming_pods", "scheduler_queue_incoming_pods_total",
                 queue="unschedulable", event="ScheduleAttemptFailure") >= 1
    assert value(got, "scheduler_queue_incoming_pods", "scheduler_queue_incoming_pods_total",
                 queue="active", event="UnschedulablePodAdd") >= 4  # EventUnscheduledPodAdd.Label()


def test_a_component_without_metrics_is_refused(cluster: Cluster) -> None:
    with pytest.raises(ValueError, match="no metrics for 'kubelet/node-1'"):
        cluster.scrape("kubelet/node-1")


def test_workqueue_metrics_follow_an_item_through_the_queue() -> None:
    """client-go metrics_test.go TestMetrics, on the simulated clock."""
    clock = Clock()
    q: RateLimitingQueue[str] = RateLimitingQueue(clock, name="test")
    q.add("foo")
    assert (q.adds, q.depth()) == (1, 1)
    clock.run(until=50e-6)
    item, _ = q.get()
    assert item == "foo" and q.depth() == 0
    assert (q.queue_duration.count, q.queue_duration.sum) == (1, pytest.approx(50e-6))
    clock.run(until=80e-6)
    assert q.unfinished_work_seconds() == pytest.approx(30e-6)
    assert q.longest_running_processor_seconds() == pytest.approx(30e-6)
    q.add("foo")  # added again while processed: counted, waiting for done()
    assert (q.adds, q.depth()) == (2, 1)
    clock.run(until=110e-6)
    q.done("foo")
    assert (q.work_duration.count, q.work_duration.sum) == (1, pytest.approx(60e-6))
    assert q.unfinished_work_seconds() == 0 and q.longest_running_processor_seconds() == 0
    clock.run(until=135e-6)
    q.get()
    assert q.queue_duration.count == 2 and q.queue_duration.sum == pytest.approx(50e-6 + 55e-6)
    q.add_rate_limited("bar")
    assert q.retries == 1


def test_the_max_inflight_filter_counts_executing_requests_by_kind() -> None:
    """Without APF (apf="max-inflight") the gauge reads the filter's two pools; APF's families
    are there with no series."""
    c = Cluster(nodes=1, apf="max-inflight")
    c.run(1)
    limiter = c.apiserver.flowcontrol
    assert isinstance(limiter, MaxInFlightFilter)
    pools = limiter.pools
    got = parse(c.scrape())
    for kind in ("readOnly", "mutating"):
        assert value(got, "apiserver_current_inflight_requests", request_kind=kind) == \
            pools[kind].requests_executing
    assert got["apiserver_flowcontrol_current_executing_requests"][2] == []
