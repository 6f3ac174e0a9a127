"""The filter chain over HTTPS: nothing decoded before authorization, impersonation with the
real kubectl, query parameters checked before a watch starts, strict JSON."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelab import Cluster
from kubelab.apiserver.endpoints import wire
from kubelab.serve.server import kubectl_binary

RBAC = "rbac.authorization.k8s.io"


def _call(url: str, ca: str, token: str, method: str, path: str, body: bytes | None = None,
          content_type: str = "application/json") -> tuple[int, bytes]:
    host, port = url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(cadata=ca),
                                       timeout=20)
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def _served(tmp_path: Path, check: Callable[..., Any]) -> None:
    """Serve a fresh cluster and run check(call, server) on the loop."""
    c = Cluster(nodes=1, seed=0)

    async def main() -> None:
        c.serve(port=0, speed=10)
        config = yaml.safe_load(Path(c.kubeconfig(str(tmp_path / "kc.yaml"))).read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        tokens = {u["name"]: u["user"]["token"] for u in config["users"]}
        loop = asyncio.get_running_loop()

        async def call(who: str, method: str, path: str, body: bytes | None = None,
                       content_type: str = "application/json") -> tuple[int, Any]:
            code, data = await loop.run_in_executor(None, _call, c.server.url, ca, tokens.get(who, ""),
                                                    method, path, body, content_type)
            return code, data

        try:
            await check(call, c)
        finally:
            await c.server.stop()

    asyncio.run(main())


def _big_yaml() -> bytes:
    return ("apiVersion: v1\nkind: DeleteOptions\nitems:\n" + "".join(
        f"- name: item{i}\n  value: 'x{i}'\n" for i in range(8000))).encode()


def test_a_delete_body_is_decoded_only_after_authorization(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = wire.load_document

    def counting(text: str) -> Any:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(wire, "load_document", counting)
    body = _big_yaml()
    assert len(body) > 200_000

    async def check(call: Any, c: Cluster) -> None:
        path = "/api/v1/namespaces/default/configmaps/nothing"
        start = time.monotonic()
        code, _ = await call("anonymous", "DELETE", path, body, "application/yaml")
        assert code == 403 and calls == []  # system:anonymous may not delete: never parsed
        code, _ = await call("viewer", "DELETE", path, body, "application/yaml")
        assert code == 403 and calls == []
        assert time.monotonic() - start < 2
        c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone"}, "data": {}})
        options = b"apiVersion: v1\nkind: DeleteOptions\npropagationPolicy: Foreground\n"
        code, data = await call("kubernetes-admin", "DELETE", "/api/v1/namespaces/default/configmaps/gone",
                                options, "application/yaml")
        assert code == 200 and len(calls) == 1, data  # authorised: decoded once
        code, data = await call("kubernetes-admin", "DELETE", "/api/v1/namespaces/default/configmaps/gone",
                                b'{"dryRun": ["Bogus"]}')
        assert code == 400
        assert json.loads(data)["message"] == "unsupported dry run option \"['Bogus']\""

    _served(tmp_path, check)


def test_bad_query_parameters_are_a_400_before_the_watch_starts(tmp_path: Path) -> None:
    async def check(call: Any, c: Cluster) -> None:
        base = "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds="
        for bad in ("abc", "nan", "-inf", "1.5"):
            code, data = await call("kubernetes-admin", "GET", base + bad)
            status = json.loads(data)
            assert (code, status["reason"]) == (400, "BadRequest"), data
            assert status["message"] == f'strconv.ParseInt: parsing "{bad}": invalid syntax'
        code, data = await call("kubernetes-admin", "GET", base + "99999999999999999999")
        assert json.loads(data)["message"] == ('strconv.ParseInt: parsing "99999999999999999999": '
                                               "value out of range")
        code, data = await call("kubernetes-admin", "GET", "/api/v1/namespaces/default/configmaps?limit=x")
        assert (code, json.loads(data)["message"]) == (400, 'strconv.ParseInt: parsing "x": invalid syntax')
        code, data = await call("kubernetes-admin", "GET",
                                "/api/v1/namespaces/default/configmaps?resourceVersionMatch=Soon")
        assert code == 422
        assert json.loads(data)["message"] == (
            'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: '
            "resourceVersionMatch is forbidden unless resourceVersion is provided, "
            'resourceVersionMatch: Unsupported value: "Soon": supported values: "Exact", '
            '"NotOlderThan", ""]')
        c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen"}, "data": {}})
        code, data = await call("kubernetes-admin", "GET", base + "1")  # the stream, then its end
        assert code == 200 and b'"type":"ADDED"' in data

    _served(tmp_path, check)


def test_a_json_body_with_a_repeated_field_is_refused(tmp_path: Path) -> None:
    async def check(call: Any, c: Cluster) -> None:
        body = (b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "name": "b"},'
                b' "data": {"k": "1", "k": "2"}}')
        code, data = await call("kubernetes-admin", "POST", "/api/v1/namespaces/default/configmaps", body)
        assert code == 400
        assert json.loads(data)["message"] == (
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
            'duplicate field "metadata.name", duplicate field "data.k"')
        assert not c.exists("configmaps", "a") and not c.exists("configmaps", "b")
        code, data = await call("kubernetes-admin", "POST", "/api/v1/namespaces/default/configmaps",
                                b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NaN}}')
        assert (code, json.loads(data)["message"]) == (
            400, "couldn't get version/kind; json parse error: invalid character 'N' looking for "
            "beginning of value")

    _served(tmp_path, check)


@pytest.mark.skipif(kubectl_binary() is None, reason="kubectl is not installed (make installs it)")
def test_kubectl_as_impersonates(tmp_path: Path) -> None:
    async def check(call: Any, c: Cluster) -> None:
        kubectl = c.server.kubectl
        denied = await kubectl("create configmap made --as=viewer")
        assert ('configmaps is forbidden: User "viewer" cannot create resource "configmaps" in API '
                'group "" in the namespace "default"') in denied
        assert not c.exists("configmaps", "made")
        assert (await kubectl("auth can-i delete nodes")).startswith("yes")
        assert (await kubectl("auth can-i delete nodes --as=viewer")).strip().startswith("no")
        assert (await kubectl("auth can-i list pods --as=viewer")).strip() == "yes"
        # viewer may not impersonate anyone.
        refused = await kubectl("get pods --as=someone", context="kubelab-viewer")
        assert ('users "someone" is forbidden: User "viewer" cannot impersonate resource "users" in '
                'API group "" at the cluster scope') in refused
        # --as-group is the authority for the groups: system:masters may do anything.
        made = await kubectl("create configmap made --as=nobody --as-group=system:masters")
        assert "configmap/made created" in made
        record = next(r for r in reversed(c.apiserver.audit) if r.name == "made" and r.verb == "create")
        assert (record.user, record.impersonated_user) == ("kubernetes-admin", "nobody")
        assert record.impersonated_groups == ("system:masters", "system:authenticated")

    _served(tmp_path, check)


def test_bodies_are_one_json_line_and_a_status_has_the_go_structs_field_order(tmp_path: Path) -> None:
    """The JSON serializer writes with json.NewEncoder(w).Encode (a trailing newline), and a
    metav1.Status marshals its fields in the struct's order, leaving out the empty ones."""
    async def check(call: Callable[..., Any], c: Cluster) -> None:
        code, data = await call("kubernetes-admin", "GET", "/api/v1/namespaces/default/pods/nope")
        assert code == 404 and data.endswith(b"}\n") and data.count(b"\n") == 1
        assert list(json.loads(data)) == ["kind", "apiVersion", "metadata", "status", "message",
                                          "reason", "details", "code"]
        code, data = await call("kubernetes-admin", "GET", "/api/v1/namespaces/default")
        assert code == 200 and data.endswith(b"}\n") and data.count(b"\n") == 1
    _served(tmp_path, check)
