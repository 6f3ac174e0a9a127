"""StatefulSets and ReplicationControllers through `kubelab serve`, judged by the real kubectl
(get, describe, scale, rollout) and the official Python client (its e2e tests of the
ReplicationController API, typed and dynamic: kubernetes-client/python
kubernetes/e2e_test/test_client.py and kubernetes/base/dynamic/test_client.py,
test_replication_controller_apis)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from serve_helpers import Served, serving

kubernetes = pytest.importorskip("kubernetes")

WEB = """apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: nginx
  replicas: 2
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve"), "--nodes", "1", "--speed", "8")


def _until(check: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.2)


def test_kubectl_gets_describes_scales_and_rolls_out_a_stateful_set(served: Served) -> None:
    assert served.kubectl("apply", "-f", "-", stdin=WEB).stdout.strip() == "statefulset.apps/web created"

    def ready() -> bool:
        rows = served.kubectl("get", "sts", "web", "--no-headers").stdout.split()
        return rows[:2] == ["web", "2/2"]
    _until(ready)
    table = served.kubectl("get", "statefulsets", "-o", "wide").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert table[1].split()[3:] == ["nginx", "nginx:1.27"]
    pods = served.kubectl("get", "pods", "-l", "app=nginx", "-o", "name").stdout.split()
    assert pods == ["pod/web-0", "pod/web-1"]
    described = served.kubectl("describe", "sts", "web").stdout
    assert "Replicas:           2 desired | 2 total" in described
    assert "create Pod web-1 in StatefulSet web successful" in described
    assert served.kubectl("rollout", "status", "sts/web", "--watch=false").stdout.strip() == \
        "partitioned roll out complete: 2 new pods have been updated..."
    assert served.kubectl("scale", "sts", "web", "--replicas=1").stdout.strip() == \
        "statefulset.apps/web scaled"
    _until(lambda: served.kubectl("get", "pods", "-l", "app=nginx", "-o", "name").stdout.split() ==
           ["pod/web-0"])
    history = served.kubectl("rollout", "history", "sts/web").stdout.splitlines()
    assert history[:3] == ["statefulset.apps/web ", "REVISION  CHANGE-CAUSE", "1         <none>"]
    assert served.kubectl("rollout", "restart", "sts/web").stdout.strip() == "statefulset.apps/web restarted"
    _until(lambda: [line.split()[0] for line in served.kubectl(
        "rollout", "history", "sts/web").stdout.splitlines()[2:] if line.strip()] == ["1", "2"])
    assert served.kubectl("rollout", "undo", "sts/web").stdout.strip() == "statefulset.apps/web rolled back"
    _until(lambda: "kubectl.kubernetes.io/restartedAt" not in
           served.kubectl("get", "sts", "web", "-o", "jsonpath={.spec.template.metadata}").stdout)
    api = served.kubectl("api-resources", "--api-group=apps", "--no-headers").stdout
    assert any(line.split()[:2] == ["statefulsets", "sts"] for line in api.splitlines())


def test_the_official_clients_replication_controller_e2e(served: Served) -> None:
    client = kubernetes.config.new_client_from_config(config_file=str(served.kubeconfig))
    api = kubernetes.client.CoreV1Api(client)
    name = "frontend-e2e"
    rc_manifest = {
        "apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"labels": {"name": name}, "name": name},
        "spec": {"replicas": 2, "selector": {"name": name},
                 "template": {"metadata": {"labels": {"name": name}},
                              "spec": {"containers": [{"image": "nginx", "name": "nginx", "ports": [
                                  {"containerPort": 80, "protocol": "TCP"}]}]}}}}
    resp = api.create_namespaced_replication_controller(body=rc_manifest, namespace="default")
    assert resp.metadata.name == name and resp.spec.replicas == 2
    resp = api.read_namespaced_replication_controller(name=name, namespace="default")
    assert resp.metadata.name == name and resp.spec.replicas == 2
    _until(lambda: (api.read_namespaced_replication_controller_status(name, "default")
                    .status.ready_replicas or 0) == 2)
    table = served.kubectl("get", "rc", name, "-o", "wide", "--no-headers").stdout.split()
    assert table[:4] == [name, "2", "2", "2"] and table[5:] == ["nginx", "nginx", f"name={name}"]
    described = served.kubectl("describe", "rc", name).stdout
    assert "Replicas:     2 current / 2 desired" in described and "Created pod: frontend-e2e-" in described
    assert served.kubectl("scale", "rc", name, "--replicas=1").stdout.strip() == \
        f"replicationcontroller/{name} scaled"
    api.delete_namespaced_replication_controller(name=name, namespace="default",
                                                 propagation_policy="Background")
    _until(lambda: not api.list_namespaced_pod("default", label_selector=f"name={name}").items)
    apps = kubernetes.client.AppsV1Api(client)  # and a StatefulSet through the typed client
    assert [s.metadata.name for s in apps.list_namespaced_stateful_set("default").items] == ["web"]
    scale = apps.read_namespaced_stateful_set_scale("web", "default")
    assert scale.spec.replicas == 1 and scale.status.selector == "app=nginx"


def test_the_dynamic_clients_replication_controller_e2e(served: Served) -> None:
    from kubernetes.dynamic import DynamicClient

    client = DynamicClient(kubernetes.config.new_client_from_config(config_file=str(served.kubeconfig)))
    api = client.resources.get(api_version="v1", kind="ReplicationController")
    name = "frontend-dynamic"
    rc_manifest = {
        "apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"labels": {"name": name}, "name": name},
        "spec": {"replicas": 2, "selector": {"name": name},
                 "template": {"metadata": {"labels": {"name": name}},
                              "spec": {"containers": [{"image": "nginx", "name": "nginx", "ports": [
                                  {"containerPort": 80, "protocol": "TCP"}]}]}}}}
    resp = api.create(body=rc_manifest, namespace="default")
    assert resp.metadata.name == name and resp.spec.replicas == 2
    resp = api.get(name=name, namespace="default")
    assert resp.metadata.name == name and resp.spec.replicas == 2
    api.delete(name=name, namespace="default", propagation_policy="Background")
    sts = client.resources.get(api_version="apps/v1", kind="StatefulSet")
    assert sts.get(name="web", namespace="default").spec.serviceName == "nginx"
