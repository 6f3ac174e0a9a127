"""Real kubectl and the official Python client against `kubelab serve` (the anatomy on): the
deprecated core/v1 Endpoints with their warning, the `kubernetes` Endpoints the API server
keeps, and /openapi/v2 (kubelab/serve/openapi.py swagger_document)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import kubernetes  # type: ignore[import-untyped]
import pytest
from serve_helpers import KUBECTL, Served, serving

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (make installs it)")

WARNING = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve"), "--nodes", "1", "--speed", "4")


def _control_plane_ip(served: Served) -> str:
    node = json.loads(served.kubectl("get", "node", "control-plane", "-o", "json").stdout)
    return next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")


def test_kubectl_get_endpoints_warns_and_lists_the_api_server(served: Served) -> None:
    ip = _control_plane_ip(served)
    done = served.kubectl("get", "endpoints", "kubernetes")
    assert done.stderr == WARNING
    lines = [line.split() for line in done.stdout.splitlines()]
    assert lines[0] == ["NAME", "ENDPOINTS", "AGE"]
    assert lines[1][:2] == ["kubernetes", f"{ip}:6443"]
    described = served.kubectl("describe", "endpoints", "kubernetes")
    assert described.stderr == WARNING
    text = [line.split() for line in described.stdout.splitlines()]
    assert ["Addresses:", ip] in text and ["https", "6443", "TCP"] in text
    assert ["Labels:", "endpointslice.kubernetes.io/skip-mirror=true"] in text


def test_openapi_v2_is_swagger_json_or_protobuf_as_accepted(served: Served) -> None:
    doc = json.loads(served.kubectl("get", "--raw", "/openapi/v2").stdout)
    assert doc["swagger"] == "2.0" and doc["info"]["version"] == "v1.34.0"
    endpoints = doc["definitions"]["io.k8s.api.core.v1.Endpoints"]
    assert endpoints["x-kubernetes-group-version-kind"] == [
        {"group": "", "version": "v1", "kind": "Endpoints"}]
    subset = endpoints["properties"]["subsets"]["items"]
    assert subset == {"$ref": "#/definitions/io.k8s.api.core.v1.EndpointSubset"}
    listing = doc["paths"]["/api/v1/namespaces/{namespace}/endpoints"]["get"]
    assert listing["x-kubernetes-action"] == "list"
    assert listing["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.Endpoints"}
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert {"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": True} in \
        patch["parameters"]
    client = kubernetes.config.new_client_from_config(str(served.kubeconfig))
    try:
        url = f"{client.configuration.host}/openapi/v2"
        auth = dict(client.configuration.api_key)  # the kubeconfig's bearer token, if any
        protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
        answer = client.call_api("GET", url, header_params={"Accept": protobuf, **auth})
        assert answer.status == 200
        assert answer.getheader("Content-Type") == \
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        answer.read()
        assert answer.data[:5] == b"\x0a\x032.0"  # field 1 (swagger), 3 bytes: "2.0"
        refused = client.call_api("GET", url, header_params={"Accept": "text/html", **auth})
        assert refused.status == 406  # nothing acceptable: kube-openapi's 406
        answer = client.call_api("GET", url, header_params={
            "Accept": "text/html, application/json;q=0.5", **auth})
        assert answer.status == 200
        answer.read()
        assert json.loads(answer.data)["swagger"] == "2.0"
    finally:
        client.close()


def test_kubectl_explain_reads_openapi_v2_in_protobuf(served: Served) -> None:
    """client-go's OpenAPISchema asks for the protobuf form only; kubectl parses it."""
    done = served.kubectl("explain", "endpoints.subsets", "--output=plaintext-openapiv2")
    lines = [line.split() for line in done.stdout.splitlines() if line.strip()]
    assert lines[:3] == [["KIND:", "Endpoints"], ["VERSION:", "v1"], ["RESOURCE:", "subsets", "<[]Object>"]]
    fields = lines[lines.index(["FIELDS:"]) + 1:]
    assert fields == [["addresses", "<[]Object>"], ["notReadyAddresses", "<[]Object>"],
                      ["ports", "<[]Object>"]]
    replicas = served.kubectl("explain", "deployments.spec.replicas", "--output=plaintext-openapiv2")
    assert "FIELD:    replicas <integer>" in replicas.stdout
