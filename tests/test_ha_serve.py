"""The HTTPS edge of a cluster with several API servers talks to their load balancer: a real
client keeps working while one API server is down, and its connect is refused when all are,
as when no kube-apiserver process listens behind the address."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import ssl
from pathlib import Path

import pytest
import yaml

from kubelab import Cluster


def _get(url: str, ca: str, token: str, path: str) -> tuple[int, dict[str, object]]:
    host, port = url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(cadata=ca),
                                       timeout=10)
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    return response.status, body


def test_a_real_client_survives_one_api_server_down(tmp_path: Path) -> None:
    c = Cluster(nodes=1, seed=0, replicas={"apiserver": 2})
    c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {}})
    path = "/api/v1/namespaces/default/configmaps/kept"

    async def main() -> None:
        url = c.serve(port=0, speed=10)
        config = yaml.safe_load(Path(c.kubeconfig(str(tmp_path / "kc.yaml"))).read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        token = config["users"][0]["user"]["token"]
        loop = asyncio.get_running_loop()
        assert (await loop.run_in_executor(None, _get, url, ca, token, path))[0] == 200
        c.faults.crash("apiserver-1")
        code, cm = await loop.run_in_executor(None, _get, url, ca, token, path)
        assert code == 200 and cm["metadata"]["name"] == "kept"  # type: ignore[index]
        assert any(r.name == "kept" and r.user == "kubernetes-admin" for r in c.apiservers[1].audit)
        c.faults.crash("apiserver-2")
        await asyncio.sleep(0.1)  # the edge's next pacer step sees it
        with pytest.raises(ConnectionRefusedError):
            await loop.run_in_executor(None, _get, url, ca, token, path)
        await c.server.stop()

    asyncio.run(main())


def _headers(url: str, ca: str, token: str, path: str) -> tuple[int, dict[str, str]]:
    host, port = url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(cadata=ca),
                                       timeout=10)
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}


def test_priority_and_fairness_headers_come_from_the_api_server_that_answered(tmp_path: Path) -> None:
    """priority-and-fairness.go sets X-Kubernetes-PF-* from the request's own classification:
    with apiserver-1 down, apiserver-2's answers carry them, and its refusals too."""
    c = Cluster(nodes=1, seed=0, replicas={"apiserver": 2}, apf=True)
    c.apiserver.add_token("token-bob", "bob", [])
    c.apiservers[1].add_token("token-bob", "bob", [])
    exempt = c.client.get("flowschemas", "exempt", "")["metadata"]["uid"]
    exempt_pl = c.client.get("prioritylevelconfigurations", "exempt", "")["metadata"]["uid"]
    global_default = c.client.get("flowschemas", "global-default", "")["metadata"]["uid"]
    path = "/api/v1/namespaces/default/configmaps"

    async def main() -> None:
        url = c.serve(port=0, speed=10)
        config = yaml.safe_load(Path(c.kubeconfig(str(tmp_path / "kc.yaml"))).read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        token = config["users"][0]["user"]["token"]
        loop = asyncio.get_running_loop()
        code, headers = await loop.run_in_executor(None, _headers, url, ca, token, path)
        assert code == 200 and headers["x-kubernetes-pf-flowschema-uid"] == exempt
        c.faults.crash("apiserver-1")
        for _ in range(2):
            code, headers = await loop.run_in_executor(None, _headers, url, ca, token, path)
            assert code == 200
            assert headers["x-kubernetes-pf-flowschema-uid"] == exempt
            assert headers["x-kubernetes-pf-prioritylevel-uid"] == exempt_pl
        assert c.apiservers[1].audit[-1].flow_schema == "exempt"  # apiserver-2 answered
        code, headers = await loop.run_in_executor(None, _headers, url, ca, "token-bob", path)
        assert code == 403  # classified before authorization, refused after: still told how
        assert headers["x-kubernetes-pf-flowschema-uid"] == global_default
        await c.server.stop()

    asyncio.run(main())
