"""The API over HTTPS (`kubelab serve`) beside the same requests made in process.

A real `kubelab serve` runs in a child process, started with the kubelab command on a free
loopback port and stopped by its PID. This process is its client: GETs and creates on one
keep-alive HTTPS connection, then 100 watchers, each on its own connection, while ConfigMaps
are created. The in-process figures make the same requests through APIServer.handle and
APIServer.watch in a Cluster of the same size. Each HTTP figure is shown with its ratio to the
in-process one, measured in this same run.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

from benchmarks.common import Figure, rate
from kubelab import Cluster
from kubelab.api.request import Request

N_REQUESTS = 2_000
N_WATCHERS = 100
N_EVENTS = 200


def _config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


class _Served:
    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="kubelab-bench-serve-")
        kubeconfig = Path(self.tmp.name, "kubeconfig.yaml")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubelab", "serve", "--nodes", "1", "--port", "0",
             "--kubeconfig", str(kubeconfig)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=dict(os.environ, HOME=self.tmp.name))
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("export KUBECONFIG="):
                break
        config = yaml.safe_load(kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        self.context = ssl.create_default_context(cadata=ca)
        self.token = config["users"][0]["user"]["token"]
        url = urlparse(config["clusters"][0]["cluster"]["server"])
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443

    def connection(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.context)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=20)
        self.tmp.cleanup()


def _http_rates(served: _Served) -> tuple[float, float]:
    conn = served.connection()
    headers = {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"}

    def call(method: str, path: str, body: bytes | None = None) -> None:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        json.loads(response.read())
        assert response.status < 300, response.status

    bodies = [json.dumps(_config_map(f"cm-{i}")).encode() for i in range(N_REQUESTS)]
    creates = rate(N_REQUESTS, lambda: [call("POST", "/api/v1/namespaces/default/configmaps", b)
                                        for b in bodies])
    gets = rate(N_REQUESTS, lambda: [call("GET", f"/api/v1/namespaces/default/configmaps/cm-{i}")
                                     for i in range(N_REQUESTS)])
    conn.close()
    return gets, creates


async def _watch_rate(served: _Served) -> float:
    """Events per second delivered to N_WATCHERS HTTP watchers while N_EVENTS objects appear."""
    async def watcher(ready: asyncio.Event, counts: list[int], index: int) -> None:
        reader, writer = await asyncio.open_connection(served.host, served.port, ssl=served.context)
        writer.write(f"GET /api/v1/namespaces/bench/configmaps?watch=true HTTP/1.1\r\nHost: {served.host}\r\n"
                     f"Authorization: Bearer {served.token}\r\n\r\n".encode())
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        ready.set()
        while counts[index] < N_EVENTS:
            line = await reader.readline()
            if b'"type"' in line:
                counts[index] += line.count(b'"type"')
        writer.close()

    conn = served.connection()
    headers = {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"}
    conn.request("POST", "/api/v1/namespaces", json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}).encode(), headers)
    conn.getresponse().read()
    counts = [0] * N_WATCHERS
    readies = [asyncio.Event() for _ in range(N_WATCHERS)]
    tasks = [asyncio.create_task(watcher(readies[i], counts, i)) for i in range(N_WATCHERS)]
    await asyncio.gather(*(r.wait() for r in readies))
    start = time.perf_counter()
    loop = asyncio.get_running_loop()

    def create_all() -> None:
        for i in range(N_EVENTS):
            conn.request("POST", "/api/v1/namespaces/bench/configmaps",
                         json.dumps(_config_map(f"w-{i}")).encode(), headers)
            conn.getresponse().read()

    await loop.run_in_executor(None, create_all)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=300)
    conn.close()
    return N_WATCHERS * N_EVENTS / (time.perf_counter() - start)


def _in_process() -> tuple[float, float, float]:
    c = Cluster(nodes=1, seed=0)
    c.trace.enabled = False
    api, token = c.apiserver, c.apiserver.token_for("admin")
    creates = [Request("create", "configmaps", namespace="default", token=token, body=_config_map(f"cm-{i}"))
               for i in range(N_REQUESTS)]
    create_rate = rate(N_REQUESTS, lambda: [api.handle(r) for r in creates])
    gets = [Request("get", "configmaps", namespace="default", name=f"cm-{i}", token=token)
            for i in range(N_REQUESTS)]
    get_rate = rate(N_REQUESTS, lambda: [api.handle(r) for r in gets])
    received = [0]
    for _ in range(N_WATCHERS):
        api.watch(Request("watch", "configmaps", namespace="default", token=token,
                          resource_version=str(c.store.revision)),
                  lambda _e: received.__setitem__(0, received[0] + 1))
    more = [Request("create", "configmaps", namespace="default", token=token, body=_config_map(f"w-{i}"))
            for i in range(N_EVENTS)]

    def deliver() -> None:
        for r in more:
            api.handle(r)
        c.run(1)

    watch_rate = rate(N_WATCHERS * N_EVENTS, deliver)
    assert received[0] == N_WATCHERS * N_EVENTS
    return get_rate, create_rate, watch_rate


def run() -> list[Figure]:
    get_in, create_in, watch_in = _in_process()
    served = _Served()
    try:
        get_http, create_http = _http_rates(served)
        watch_http = asyncio.run(_watch_rate(served))
    finally:
        served.stop()
    return [
        Figure("GET through HTTPS, one keep-alive connection", get_http, "req/s"),
        Figure("  ratio to in-process GET", get_http / get_in, "x"),
        Figure("create through HTTPS, one keep-alive connection", create_http, "req/s"),
        Figure("  ratio to in-process create", create_http / create_in, "x"),
        Figure(f"watch events delivered to {N_WATCHERS} HTTPS watchers", watch_http, "events/s"),
        Figure(f"  ratio to {N_WATCHERS} in-process watchers", watch_http / watch_in, "x"),
    ]
