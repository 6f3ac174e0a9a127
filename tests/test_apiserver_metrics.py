"""The API server's /metrics (kubelab/apiserver/metrics.py counts, kubelab/serve/metrics.py
writes them with prometheus_client): upstream's names and labels, counts that follow the
requests, a restart that starts from zero, APF's rejections, and RBAC on the path."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from serve_helpers import Served, serving

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.serve.metrics import exposition

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(c: Cluster) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(exposition(c.apiserver).decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(got: Samples, name: str, **labels: str) -> float:
    """The sum over every sample of `name` whose labels include `labels`."""
    return sum(v for (n, ls), v in got.items() if n == name and set(labels.items()) <= set(ls))


def test_requests_are_counted_with_upstreams_labels() -> None:
    c = Cluster(nodes=1)
    c.run(1)
    before = samples(c)
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}})
    c.client.get("configmaps", "m")
    with pytest.raises(ApiError):
        c.client.get("configmaps", "nope")
    after = samples(c)
    common = {"group": "", "version": "v1", "resource": "configmaps", "component": "apiserver",
              "dry_run": "", "subresource": ""}
    for verb, scope, code, n in (("POST", "namespace", "201", 1), ("GET", "resource", "200", 1),
                                 ("GET", "resource", "404", 1)):
        labels = {**common, "verb": verb, "scope": scope, "code": code}
        assert value(after, "apiserver_request_total", **labels) - \
            value(before, "apiserver_request_total", **labels) == n
    # (a difference: the anatomy's root-CA publisher reads configmaps too)
    count = value(after, "apiserver_request_duration_seconds_count", verb="GET", resource="configmaps")
    assert count - value(before, "apiserver_request_duration_seconds_count", verb="GET",
                         resource="configmaps") == 2
    assert value(after, "apiserver_request_duration_seconds_bucket", verb="GET",
                 resource="configmaps", le="+Inf") == count
    assert value(after, "apiserver_storage_objects", resource="configmaps") >= 1
    assert value(after, "apiserver_longrunning_requests", verb="WATCH", resource="pods") > 0


def test_a_restarted_api_server_counts_from_zero() -> None:
    c = Cluster(nodes=1)
    c.run(1)
    assert value(samples(c), "apiserver_request_total") > 0
    c.faults.crash("apiserver")
    c.faults.restart("apiserver")
    assert value(samples(c), "apiserver_request_total", verb="POST") < 5


def test_priority_and_fairness_rejections_are_counted_with_their_reason() -> None:
    c = Cluster(nodes=1, seed=1)
    c.apiserver.enable_priority_and_fairness(server_concurrency_limit=25)  # as test_apf_panel
    c.run(1)
    flood = c.faults.flood("noisy-tenant", per_second=6000, seconds=2, resource="configmaps")
    c.run(3)
    got = samples(c)
    rejected = {dict(ls)["reason"]: v for (n, ls), v in got.items()
                if n == "apiserver_flowcontrol_rejected_requests_total"
                and dict(ls)["priority_level"] == "global-default"}
    assert sum(rejected.values()) == flood.rejected > 0
    assert set(rejected) <= {"queue-full", "concurrency-limit", "time-out"}
    assert value(got, "apiserver_flowcontrol_dispatched_requests_total",
                 priority_level="global-default") > 0
    assert value(got, "apiserver_request_total", code="429", resource="configmaps") == flood.rejected


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("metrics"), "--nodes", "1", "--no-anatomy")


def test_the_real_kubectl_reads_metrics_and_a_viewer_may_not(served: Served) -> None:
    text = served.kubectl("get", "--raw", "/metrics").stdout
    assert "# TYPE apiserver_request_total counter" in text
    assert 'apiserver_request_total{code="200",component="apiserver"' in text
    refused = served.kubectl("--context", "kubelab-viewer", "get", "--raw", "/metrics", check=False)
    assert refused.returncode == 1
    assert 'Error from server (Forbidden): forbidden: User "viewer" cannot get path "/metrics"' \
        in refused.stderr
