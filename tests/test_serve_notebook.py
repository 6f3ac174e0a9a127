"""c.serve() in a process that already runs an asyncio loop, as a Jupyter kernel does."""

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
from kubelab.serve.server import kubectl_binary


def _get(url: str, ca: str, token: str, path: str) -> tuple[int, dict[str, object]]:
    host, port = url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(cadata=ca),
                                       timeout=10)
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    return response.status, body


def test_serve_an_existing_cluster_from_a_running_loop(tmp_path: Path) -> None:
    c = Cluster(nodes=1, seed=0)
    c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "before"}, "data": {}})
    with pytest.raises(RuntimeError, match=r"call c\.serve"):
        c.kubeconfig(str(tmp_path / "none.yaml"))
    with pytest.raises(RuntimeError, match="running asyncio loop"):
        c.serve()

    async def main() -> None:
        url = c.serve(port=0, speed=10)
        assert c.serve() == url  # serving twice is serving once
        config = yaml.safe_load(Path(c.kubeconfig(str(tmp_path / "kc.yaml"))).read_text())
        assert config["clusters"][0]["cluster"]["server"] == url
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        token = config["users"][0]["user"]["token"]
        start = c.clock.now
        loop = asyncio.get_running_loop()
        code, cm = await loop.run_in_executor(None, _get, url, ca, token,
                                               "/api/v1/namespaces/default/configmaps/before")
        assert code == 200 and cm["metadata"]["name"] == "before"  # type: ignore[index]
        await asyncio.sleep(0.3)
        assert c.clock.now > start  # the clock follows the wall clock while the loop is idle
        # The request went through the API server's own pipeline: the audit log has it.
        assert any(r.user == "kubernetes-admin" and r.name == "before" for r in c.apiserver.audit)
        if kubectl_binary():  # the real kubectl, awaited while the server answers it
            assert "configmap/before" in await c.server.kubectl("get configmaps -o name")
            denied = await c.server.kubectl("delete configmap before", context="kubelab-viewer")
            assert 'User "viewer" cannot delete resource "configmaps"' in denied
        await c.server.stop()

    asyncio.run(main())


@pytest.mark.skipif(kubectl_binary() is None, reason="kubectl is not installed (make installs it)")
def test_a_crashed_api_server_refuses_connections_until_it_restarts() -> None:
    """A dead kube-apiserver has no listening socket: kubectl's connect is refused, not
    answered with 503; the same address answers again once it is back."""
    c = Cluster(nodes=1, seed=0, replicas={"apiserver": 2})

    async def main() -> None:
        url = c.serve(port=0)
        assert "default" in await c.server.kubectl("get namespaces -o name")
        c.faults.crash("apiserver-1")
        await asyncio.sleep(0.1)
        assert "default" in await c.server.kubectl("get namespaces -o name")  # the other one
        c.faults.crash("apiserver-2")
        await asyncio.sleep(0.1)
        address = url.removeprefix("https://")
        assert (f"The connection to the server {address} was refused - did you specify the right "
                "host or port?") in await c.server.kubectl("get namespaces -o name")
        c.faults.restart("apiserver-2")
        await asyncio.sleep(0.1)
        assert c.server.url == url
        assert "default" in await c.server.kubectl("get namespaces -o name")
        await c.server.stop()

    asyncio.run(main())
