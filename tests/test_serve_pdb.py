"""The real kubectl against `kubelab serve`: CronJobs and PodDisruptionBudgets print upstream's
columns, and `kubectl drain` waits for a disruption budget, retrying each refused eviction every
5 s as k8s.io/kubectl pkg/drain does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from serve_helpers import KUBECTL, Served, serving

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (make installs it)")

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx:1.27}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve"), "--nodes", "2", "--speed", "2")


def test_get_cronjobs_and_pdbs_with_upstreams_columns(served: Served) -> None:
    served.kubectl("create", "cronjob", "hello", "--image=busybox:1.36", "--schedule=*/5 * * * *")
    rows = served.kubectl("get", "cronjobs").stdout.splitlines()
    assert rows[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST",
                               "SCHEDULE", "AGE"]
    assert rows[1].split()[:10] == ["hello", "*/5", "*", "*", "*", "*", "<none>", "False", "0",
                                    "<none>"]
    assert "Concurrency Policy:" in served.kubectl("describe", "cronjob", "hello").stdout
    refused = served.kubectl("create", "cronjob", "bad", "--image=busybox",
                             "--schedule=61 * * * *", check=False)
    assert 'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61' \
        in refused.stderr


def test_drain_retries_evictions_the_budget_refuses(served: Served) -> None:
    # Both replicas on node-1: node-2 is cordoned while they start.
    served.kubectl("cordon", "node-2")
    served.kubectl("apply", "-f", "-", stdin=WEB)
    served.kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=60s",
                   timeout=90)
    served.kubectl("uncordon", "node-2")
    rows = served.kubectl("get", "pdb").stdout.splitlines()
    assert rows[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED",
                               "DISRUPTIONS", "AGE"]
    assert rows[1].split()[:4] == ["web", "1", "N/A", "1"]
    drained = served.kubectl("drain", "node-1", "--ignore-daemonsets", "--timeout=90s",
                             timeout=120)
    assert "node/node-1 drained" in drained.stdout
    # One pod may go at once: the second eviction is refused until the first pod's
    # replacement is Ready on node-2, and drain says so before it retries.
    retries = [line for line in drained.stderr.splitlines() if "will retry after 5s" in line]
    assert retries, drained.stderr
    assert retries[0].startswith('error when evicting pods/"web-') and retries[0].endswith(
        '-n "default" (will retry after 5s): Cannot evict pod as it would violate the pod\'s '
        "disruption budget.")
    described = served.kubectl("describe", "pdb", "web").stdout
    assert "Min available:  1" in described


def test_the_official_python_client_reads_both_kinds(served: Served) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    api_client = kubernetes.config.new_client_from_config(config_file=str(served.kubeconfig))
    batch = kubernetes.client.BatchV1Api(api_client)
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "py"},
            "spec": {"schedule": "@hourly", "timeZone": "Europe/Paris", "jobTemplate": {"spec": {
                "template": {"spec": {"restartPolicy": "Never",
                                      "containers": [{"name": "c", "image": "busybox"}]}}}}}}
    created = batch.create_namespaced_cron_job("default", body)
    assert (created.spec.concurrency_policy, created.spec.successful_jobs_history_limit,
            created.spec.time_zone) == ("Allow", 3, "Europe/Paris")
    policy = kubernetes.client.PolicyV1Api(api_client)
    pdb = policy.create_namespaced_pod_disruption_budget("default", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "py"},
        "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "nothing"}}}})
    assert pdb.spec.max_unavailable == "25%" and pdb.status.disruptions_allowed == 0
    listed = policy.list_namespaced_pod_disruption_budget("default").items
    assert "py" in {p.metadata.name for p in listed}
    with pytest.raises(kubernetes.client.ApiException) as err:
        batch.create_namespaced_cron_job("default", {**body, "metadata": {"name": "tz"},
                                                     "spec": {**body["spec"], "timeZone": "Local"}})
    assert err.value.status == 422
