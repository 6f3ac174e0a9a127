"""Admission webhooks against `kubelab serve`: kopf's admission example registers its
webhook configurations and is called on create (a `url` webhook: a real HTTPS POST from the
edge, its caBundle checked), and the real kubectl prints the configurations with upstream's
columns (NAME WEBHOOKS AGE)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import Served, serving

from kubelab.serve.certs import make_serving_certs

kubernetes = pytest.importorskip("kubernetes")

KEX_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "kopfexamples.kopf.dev"},
    "spec": {"group": "kopf.dev", "scope": "Namespaced",
             "names": {"plural": "kopfexamples", "singular": "kopfexample", "kind": "KopfExample",
                       "shortNames": ["kopfexes", "kopfex", "kexes", "kex"]},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve-webhooks"), "--nodes", "1", "--speed", "4")


@pytest.fixture(scope="module")
def api_client(served: Served) -> Any:
    return kubernetes.config.new_client_from_config(config_file=str(served.kubeconfig))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _kex(name: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
            "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def _wait_for_configurations(custom: Any, admission: Any, timeout: float = 40) -> tuple[Any, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            validating = admission.read_validating_webhook_configuration("auto.kopf.dev")
            mutating = admission.read_mutating_webhook_configuration("auto.kopf.dev")
        except kubernetes.client.ApiException:
            time.sleep(0.5)
            continue
        if validating.webhooks and mutating.webhooks:
            return validating, mutating
        time.sleep(0.5)
    raise AssertionError("kopf did not register its webhook configurations")


def test_kopfs_admission_example_registers_its_webhooks_and_is_called(
        served: Served, api_client: Any, tmp_path: Path) -> None:
    pytest.importorskip("kopf")
    certs = make_serving_certs()
    for name, data in (("ca.pem", certs.ca_pem), ("cert.pem", certs.cert_pem),
                       ("key.pem", certs.key_pem)):
        (tmp_path / name).write_bytes(data)
    kubernetes.client.ApiextensionsV1Api(api_client).create_custom_resource_definition(KEX_CRD)
    env = dict(served.env(), KUBELAB_WEBHOOK_PORT=str(_free_port()),
               KUBELAB_WEBHOOK_CERT=str(tmp_path / "cert.pem"),
               KUBELAB_WEBHOOK_KEY=str(tmp_path / "key.pem"), KUBELAB_WEBHOOK_CA=str(tmp_path / "ca.pem"))
    operator = subprocess.Popen(
        [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default",
         str(Path(__file__).parent / "data" / "kopf_admission.py")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    custom = kubernetes.client.CustomObjectsApi(api_client)
    admission = kubernetes.client.AdmissionregistrationV1Api(api_client)
    try:
        validating, mutating = _wait_for_configurations(custom, admission)
        names = sorted(w.name for w in validating.webhooks)
        # kopf's own conventions (build_webhooks), defaulted by the API server
        hook = validating.webhooks[0]
        assert hook.client_config.url.startswith("https://127.0.0.1:") and hook.client_config.ca_bundle
        assert hook.failure_policy == "Fail" and hook.timeout_seconds == 30
        assert [w.name for w in mutating.webhooks] == ["mutate1.auto.kopf.dev"]

        def create(name: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> Any:
            return custom.create_namespaced_custom_object("kopf.dev", "v1", "default",
                                                          "kopfexamples", _kex(name, spec, labels))

        created = create("ok", {"field": "fine"}, {"somelabel": "somevalue"})
        assert created["spec"] == {"field": "fine", "injected": 123}  # mutate1's patch
        assert create("plain", {"field": "fine"})["spec"] == {"field": "fine"}  # objectSelector
        with pytest.raises(kubernetes.client.ApiException) as denied:
            create("bad", {"field": "wrong"})
        status = json.loads(denied.value.body)
        assert status["message"] == ('admission webhook "validate1.auto.kopf.dev" denied the '
                                     "request: Meh! I don't like it. Change the field.")
        with pytest.raises(kubernetes.client.ApiException) as lazy:
            create("lazy", {"field": "not-allowed"})
        assert lazy.value.status == 555 and "I'm too lazy anyway. Go away!" in \
            json.loads(lazy.value.body)["message"]
        listed = custom.list_namespaced_custom_object("kopf.dev", "v1", "default", "kopfexamples")
        assert sorted(o["metadata"]["name"] for o in listed["items"]) == ["ok", "plain"]
    finally:
        operator.kill()  # no clean-up: its configurations stay behind
        log, _ = operator.communicate(timeout=30)
    assert names == ["authhook.auto.kopf.dev", "validate1.auto.kopf.dev",
                     "validate2.spec.field.auto.kopf.dev"], log
    # kopf is gone, its webhooks are not: failurePolicy Fail now fails every create, closed
    with pytest.raises(kubernetes.client.ApiException) as down:
        custom.create_namespaced_custom_object("kopf.dev", "v1", "default", "kopfexamples",
                                               _kex("after", {"field": "fine"}))
    message = json.loads(down.value.body)["message"]
    assert down.value.status == 500, message
    assert message.startswith('Internal error occurred: failed calling webhook "authhook.auto.kopf.dev": '
                              'failed to call webhook: Post "https://127.0.0.1:'), message
    assert message.endswith("/authhook?timeout=30s\": dial tcp 127.0.0.1:"
                            f"{env['KUBELAB_WEBHOOK_PORT']}: connect: connection refused"), message
    admission.delete_mutating_webhook_configuration("auto.kopf.dev")
    admission.delete_validating_webhook_configuration("auto.kopf.dev")
    created = custom.create_namespaced_custom_object("kopf.dev", "v1", "default", "kopfexamples",
                                                     _kex("after", {"field": "wrong"}))
    assert created["metadata"]["name"] == "after"


def test_the_real_kubectl_prints_webhook_configurations(served: Served) -> None:
    manifest = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": "two-hooks"}, "webhooks": [
                    {"name": f"hook-{i}.kubelab.dev", "sideEffects": "None",
                     "admissionReviewVersions": ["v1"], "failurePolicy": "Ignore",
                     "clientConfig": {"service": {"namespace": "default", "name": "nowhere"}},
                     "rules": [{"operations": ["CREATE"], "apiGroups": ["example.com"],
                                "apiVersions": ["v1"], "resources": ["things"]}]} for i in (1, 2)]}
    served.kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    out = served.kubectl("get", "validatingwebhookconfigurations", "two-hooks").stdout.splitlines()
    assert out[0].split() == ["NAME", "WEBHOOKS", "AGE"]
    assert out[1].split()[:2] == ["two-hooks", "2"]
    empty = served.kubectl("get", "mutatingwebhookconfigurations", "-o", "name").stdout
    assert "two-hooks" not in empty
    described = served.kubectl("get", "validatingwebhookconfiguration", "two-hooks", "-o",
                               "jsonpath={.webhooks[0].timeoutSeconds} {.webhooks[0].matchPolicy} "
                               "{.webhooks[0].clientConfig.service.port}").stdout
    assert described == "10 Equivalent 443"  # the v1 defaults
