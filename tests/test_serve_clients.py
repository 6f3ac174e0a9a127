"""The official Python client, kopf, raw HTTP and bad input against `kubelab serve`."""

from __future__ import annotations

import asyncio
import base64
import gzip
import http.client
import json
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from serve_helpers import Served, serving

kubernetes = pytest.importorskip("kubernetes")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve"), "--nodes", "1", "--speed", "4")


@pytest.fixture(scope="module")
def api_client(served: Served) -> Any:
    return kubernetes.config.new_client_from_config(config_file=str(served.kubeconfig))


class Raw:
    """One HTTPS connection to the server, trusting its CA, as the admin."""

    def __init__(self, served: Served) -> None:
        config = yaml.safe_load(served.kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        self.context = ssl.create_default_context(cadata=ca)
        self.token = config["users"][0]["user"]["token"]
        url = urlparse(served.url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443

    def connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=10)

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, dict[str, Any]]:
        conn = self.connect()
        conn.request(method, path, body=body, headers={"Authorization": f"Bearer {self.token}",
                                                      "Content-Type": content_type})
        response = conn.getresponse()
        data = json.loads(response.read() or b"{}")
        conn.close()
        return response.status, data


def test_the_official_client_lists_creates_and_watches(api_client: Any) -> None:
    core = kubernetes.client.CoreV1Api(api_client)
    apps = kubernetes.client.AppsV1Api(api_client)
    # kubelab serve's cluster has kind's control-plane node beside its one worker.
    assert [n.metadata.name for n in core.list_node().items] == ["control-plane", "node-1"]
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-python"}, "data": {"k": "v"}}
    created = core.create_namespaced_config_map("default", body)
    assert created.metadata.resource_version and created.data == {"k": "v"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "py"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "py"}},
                           "template": {"metadata": {"labels": {"app": "py"}},
                                        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}
    assert apps.create_namespaced_deployment("default", deployment).spec.replicas == 1
    watch = kubernetes.watch.Watch()
    seen = []
    stream = watch.stream(core.list_namespaced_pod, "default", label_selector="app=py", timeout_seconds=15)
    for event in stream:
        seen.append((event["type"], event["object"].status.phase))
        if event["object"].status.phase == "Running":
            watch.stop()
            break
    assert seen[0][0] == "ADDED" and seen[-1] == ("MODIFIED", "Running"), seen
    with pytest.raises(kubernetes.client.ApiException) as err:
        core.read_namespaced_pod("nope", "default")
    assert err.value.status == 404
    assert json.loads(err.value.body)["message"] == 'pods "nope" not found'


def test_bad_input_gets_a_status_and_stores_nothing(served: Served) -> None:
    raw = Raw(served)
    broken = b'{"apiVersion": "v1", "kind":'
    code, status = raw.request("POST", "/api/v1/namespaces/default/configmaps", broken)
    assert (code, status["kind"], status["reason"]) == (400, "Status", "BadRequest")
    assert status["message"].startswith("couldn't get version/kind; json parse error")
    code, status = raw.request("GET", "/api/v1/nosuchthings")
    assert (code, status["reason"]) == (404, "NotFound")
    code, status = raw.request("GET", "/nowhere/at/all")
    assert code == 404 and status["message"] == "the server could not find the requested resource"
    code, status = raw.request("PATCH", "/api/v1/namespaces/default/configmaps/from-python", b"{}",
                               content_type="text/plain")
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    big = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                      "data": {"x": "y" * 4_000_000}}).encode()
    code, status = raw.request("POST", "/api/v1/namespaces/default/configmaps", big)
    assert code == 413 and status["reason"] == "RequestEntityTooLarge"
    code, listing = raw.request("GET", "/api/v1/namespaces/default/configmaps")
    assert code == 200 and "big" not in [c["metadata"]["name"] for c in listing["items"]]


def test_a_request_that_may_not_be_made_is_not_decoded(served: Served) -> None:
    raw = Raw(served)
    raw.token = yaml.safe_load(served.kubeconfig.read_text())["users"][1]["user"]["token"]  # viewer
    code, status = raw.request("POST", "/api/v1/namespaces/default/configmaps", b"{not json")
    assert (code, status["reason"]) == (403, "Forbidden")  # authorization comes before decoding
    code, status = raw.request("POST", "/api/v1/namespaces/default/configmaps", b"a: [1",
                               content_type="application/yaml")
    assert code == 403


def test_a_client_that_disconnects_mid_watch_leaves_the_server_serving(served: Served) -> None:
    raw = Raw(served)
    sockets = []
    for _ in range(20):
        plain = socket.create_connection((raw.host, raw.port))
        sock = raw.context.wrap_socket(plain, server_hostname=raw.host)
        sock.sendall(f"GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: {raw.host}\r\n"
                     f"Authorization: Bearer {raw.token}\r\n\r\n".encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sockets.append(sock)
    for sock in sockets:
        sock.close()  # gone without a word, mid-stream
    code, version = raw.request("GET", "/version")
    assert code == 200 and version["minor"] == "34"


def test_200_concurrent_watches_each_get_their_events_and_a_clean_close(served: Served) -> None:
    raw = Raw(served)

    async def watch() -> bytes:
        reader, writer = await asyncio.open_connection(raw.host, raw.port, ssl=raw.context)
        writer.write(f"GET /api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5 HTTP/1.1\r\n"
                     f"Host: {raw.host}\r\nAuthorization: Bearer {raw.token}\r\n\r\n".encode())
        body = b""
        while not body.endswith(b"\r\n0\r\n\r\n"):  # the last chunk: the server ended the stream
            body += await asyncio.wait_for(reader.read(65536), timeout=60)
        writer.close()
        return body

    async def all_watches() -> list[bytes]:
        return await asyncio.gather(*(watch() for _ in range(200)))

    bodies = asyncio.run(all_watches())
    for body in bodies:
        head, _, chunked = body.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"Transfer-Encoding: chunked" in head
        assert b'"name":"from-python"' in chunked
    code, version = raw.request("GET", "/version")
    assert code == 200 and version["minor"] == "34"  # and the server still answers


def test_unknown_verbs_get_a_status(served: Served) -> None:
    code, status = Raw(served).request("OPTIONS", "/api/v1/namespaces/default/configmaps")
    assert (code, status["kind"], status["reason"]) == (405, "Status", "MethodNotAllowed")


GREETING_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "greetings.kubelab.dev"},
    "spec": {"group": "kubelab.dev", "scope": "Namespaced",
             "names": {"plural": "greetings", "singular": "greeting", "kind": "Greeting"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_a_kopf_operator_reconciles_a_custom_resource(served: Served, api_client: Any) -> None:
    pytest.importorskip("kopf")
    kubernetes.client.ApiextensionsV1Api(api_client).create_custom_resource_definition(GREETING_CRD)
    operator = subprocess.Popen(
        [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default",
         str(Path(__file__).parent / "data" / "kopf_greeter.py")],
        env=served.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    custom = kubernetes.client.CustomObjectsApi(api_client)
    try:
        custom.create_namespaced_custom_object("kubelab.dev", "v1", "default", "greetings", {
            "apiVersion": "kubelab.dev/v1", "kind": "Greeting", "metadata": {"name": "hi"},
            "spec": {"who": "learner"}})
        deadline = time.monotonic() + 30
        status: dict[str, Any] = {}
        while time.monotonic() < deadline and not status:
            time.sleep(0.5)
            obj = custom.get_namespaced_custom_object("kubelab.dev", "v1", "default", "greetings", "hi")
            status = obj.get("status") or {}
    finally:
        operator.terminate()
        log, _ = operator.communicate(timeout=20)
    assert status == {"greet": {"message": "hello, learner"}}, log
    assert "Handler 'greet' succeeded" in log


# --- pye2e --- what the official client's own e2e tests (kubernetes/e2e_test/test_utils.py)
# ask of a cluster, asked here with our own objects.
def test_create_from_yaml_reads_the_conflict_in_the_servers_own_text(api_client: Any,
                                                                      tmp_path: Path) -> None:
    manifest = tmp_path / "twice.yaml"
    one = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "twice"},
           "spec": {"selector": {"matchLabels": {"app": "twice"}},
                    "template": {"metadata": {"labels": {"app": "twice"}},
                                 "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}
    manifest.write_text(yaml.safe_dump_all([one, one]))
    with pytest.raises(kubernetes.utils.FailToCreateError) as failed:
        kubernetes.utils.create_from_yaml(api_client, str(manifest))
    # FailToCreateError prints each ApiException's body as the server sent it: StatusDetails
    # in the Go struct's order (name, group, kind).
    assert str(failed.value) == (
        'Error from server (Conflict): {"kind":"Status","apiVersion":"v1","metadata":{},'
        '"status":"Failure","message":"deployments.apps \\"twice\\" already exists",'
        '"reason":"AlreadyExists","details":{"name":"twice","group":"apps",'
        '"kind":"deployments"},"code":409}\n')
    kubernetes.client.AppsV1Api(api_client).delete_namespaced_deployment("twice", "default")


def test_apiservices_are_served_by_apiregistration_v1(api_client: Any, tmp_path: Path) -> None:
    registration = kubernetes.client.ApiregistrationV1Api(api_client)
    manifest = tmp_path / "apiservice.yaml"
    manifest.write_text(yaml.safe_dump({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1beta1.example.kubelab.dev"},
        "spec": {"group": "example.kubelab.dev", "version": "v1beta1", "groupPriorityMinimum": 1000,
                 "versionPriority": 15, "insecureSkipTLSVerify": True,
                 "service": {"namespace": "example", "name": "api"}}}))
    kubernetes.utils.create_from_yaml(api_client, str(manifest))
    svc = registration.read_api_service("v1beta1.example.kubelab.dev")
    assert (svc.spec.group, svc.spec.version, svc.spec.service.name) == (
        "example.kubelab.dev", "v1beta1", "api")
    with pytest.raises(kubernetes.utils.FailToCreateError) as failed:
        kubernetes.utils.create_from_yaml(api_client, str(manifest))
    assert failed.value.api_exceptions[0].status == 409
    # ValidateAPIService: the name must be version.group.
    bad = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": "v1.example.kubelab.dev"},
           "spec": {"group": "example.kubelab.dev", "version": "v2", "groupPriorityMinimum": 1,
                    "versionPriority": 1}}
    with pytest.raises(kubernetes.client.ApiException) as invalid:
        registration.create_api_service(bad)
    assert invalid.value.status == 422
    assert json.loads(invalid.value.body)["message"] == (
        'APIService.apiregistration.k8s.io "v1.example.kubelab.dev" is invalid: '
        'metadata.name: Invalid value: "v1.example.kubelab.dev": must be '
        '`spec.version+"."+spec.group`: "v2.example.kubelab.dev"')
    names = [s.metadata.name for s in registration.list_api_service().items]
    assert "v1beta1.example.kubelab.dev" in names
    registration.delete_api_service("v1beta1.example.kubelab.dev")


def test_exec_over_the_clients_websocket_runs_substitutions_and_binary_pipes(api_client: Any) -> None:
    # test_client.py's test_pod_apis asks busybox for `$(seq 1 3)`, a gzip of a pipe read as
    # bytes, and uptime, through kubernetes.stream (the v5 channel protocol).
    from kubernetes.stream import stream
    core = kubernetes.client.CoreV1Api(api_client)
    core.create_namespaced_pod("default", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
        "spec": {"containers": [{"name": "box", "image": "busybox",
                                 "args": ["/bin/sh", "-c", "while true; do sleep 5; done"]}]}})
    deadline = time.monotonic() + 20
    while core.read_namespaced_pod("box", "default").status.phase != "Running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    kw = {"stderr": False, "stdin": False, "stdout": True, "tty": False}
    out = stream(core.connect_get_namespaced_pod_exec, "box", "default",
                 command=["/bin/sh", "-c", "for i in $(seq 1 3); do echo \"n=$i\"; done"], **kw)
    assert out == "n=1\nn=2\nn=3\n"
    packed = stream(core.connect_get_namespaced_pod_exec, "box", "default", binary=True,
                    command=["/bin/sh", "-c", 'echo -n "bytes through a pipe" | gzip'], **kw)
    assert gzip.decompress(packed) == b"bytes through a pipe"
    up = stream(core.connect_post_namespaced_pod_exec, "box", "default", command=["uptime"], **kw)
    assert " up " in up and up.endswith("load average: 0.00, 0.00, 0.00\n")
    core.delete_namespaced_pod("box", "default", grace_period_seconds=0)
