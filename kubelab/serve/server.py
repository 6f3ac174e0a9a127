"""Serve a Cluster's API over HTTPS, so that real kubectl and real client libraries can use it.

This is an edge of kubelab, like the real-time clock (docs/ARCHITECTURE.md section 4): the only
place where sockets, TLS, asyncio and the wall clock meet the simulation. Everything runs on
one thread and one asyncio loop:

- tornado's HTTP server reads requests; each becomes a kubelab Request handed to the cluster's
  API server, the same pipeline the scheduler and the kubelets use (handlers.py);
- a pacer task advances the cluster's simulated clock with the wall clock (`speed` virtual
  seconds per real second), so controllers, kubelets and watches move while you type;
- watch events are written to their HTTP streams from the clock's callbacks, in order.

Because nothing else touches the cluster while a handler runs, a request sees the cluster
exactly as a component would. Why tornado: it is a maintained asyncio HTTP/1.1 server with
keep-alive, chunked streaming for watches, TLS and a clean shutdown, and JupyterLab already
depends on it, so serving from a notebook needs nothing new.

    kubelab serve --nodes 3 --port 6443            # a shell: serve until Ctrl-C
    url = c.serve(port=0)                          # a notebook: serve an existing cluster
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shlex
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tornado.httpserver
import tornado.netutil
import tornado.web

from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.auth.serviceaccount import RSAKey
from kubelab.serve.certs import ServingCerts, make_serving_certs
from kubelab.serve.handlers import (
    DiscoveryHandler,
    MetricsHandler,
    OpenAPIHandler,
    OpenAPIV2Handler,
    ResourceHandler,
    StatusHandler,
)
from kubelab.serve.kubeconfig import DEFAULT_PATH, build_kubeconfig, write_kubeconfig
from kubelab.serve.pacer import pace
from kubelab.serve.streams import StreamHandler
from kubelab.serve.webhooks import url_dialer

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["Server", "kubectl_binary"]

# Bodies up to this size are read (and those over max_body_bytes refused with a 413 Status);
# a larger one has the connection closed, as an HTTP server must stop reading somewhere.
_READ_LIMIT = 64 * 1024 * 1024
VIEWER = "viewer"


def kubectl_binary() -> str | None:
    """The real kubectl: the one `make` installed into the virtual environment (kubectl of the
    release kubelab follows, see scripts/system_deps.py), else the machine's."""
    return shutil.which("kubectl", path=os.path.dirname(sys.executable)) or shutil.which("kubectl")


class Server:
    """The HTTPS front end of one Cluster. start() on a running asyncio loop; stop() ends it."""

    def __init__(self, cluster: Cluster, *, host: str = "127.0.0.1", port: int = 0,
                 speed: float = 1.0, max_body_bytes: int = 3 * 1024 * 1024) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.cluster, self.host, self.port, self.speed = cluster, host, port, speed
        self.max_body_bytes = max_body_bytes
        self.certs: ServingCerts = make_serving_certs()
        # --- sa --- the CA that signed the serving certificate is the cluster's root CA: the
        # root-CA publisher copies it into every namespace's kube-root-ca.crt.
        cluster.set_root_ca(self.certs.ca_pem, self.certs.ca_key_pem)
        # and every API server signs service account tokens RS256 with one key made now
        # (kube-apiserver's --service-account-signing-key-file; kubelab/apiserver/auth/serviceaccount.py).
        key = RSAKey()
        for server in cluster.apiservers:
            server.service_account_key = key
        self.tokens: dict[str, str] = {}
        self.watches: set[Callable[[], None]] = set()  # each open watch's close callback
        self._http: tornado.httpserver.HTTPServer | None = None
        self._listening = False  # False while every API server is down: a connect is refused
        self._closing: set[asyncio.Task[None]] = set()  # connections being closed meanwhile
        self._pacer: asyncio.Task[None] | None = None
        self._kubeconfig_path: Path | None = None  # the one kubectl() uses

    @property
    def url(self) -> str:
        return f"https://{self.address}"

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def _identities(self) -> None:
        """kubernetes-admin (cluster-admin through system:masters) and viewer (the view role)."""
        api = self.cluster.apiserver
        for user, groups in (("kubernetes-admin", ["system:masters"]), (VIEWER, [])):
            token = secrets.token_urlsafe(24)
            api.add_token(token, user, groups)
            self.tokens[user] = token
        rbac = "rbac.authorization.k8s.io"
        binding = {"apiVersion": f"{rbac}/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "kubelab-viewer"},
                   "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "view"},
                   "subjects": [{"apiGroup": rbac, "kind": "User", "name": VIEWER}]}
        if not self.cluster.exists("clusterrolebindings", "kubelab-viewer", namespace=""):
            self.cluster.client.create(binding)

    def _app(self) -> tornado.web.Application:
        args = {"server": self}
        return tornado.web.Application([
            (r"/(version|healthz|livez|readyz)/?", StatusHandler, args),
            (r"/(healthz|livez|readyz)/(.+)", StatusHandler, args),
            (r"/metrics", MetricsHandler, args),
            (r"/openapi/v3/?(.*)", OpenAPIHandler, args),
            (r"/openapi/v2/?()", OpenAPIV2Handler, args),  # --- endpoints ---
            (r"/(apis?)/?", DiscoveryHandler, args),
            (r"/(api/[^/]+|apis/[^/]+/[^/]+)/?", DiscoveryHandler, args),
            (r"/api/v1/namespaces/[^/]+/pods/[^/]+/(?:exec|attach|portforward)", StreamHandler, args),
            (r"/apis?/.+", ResourceHandler, args),
        ], default_handler_class=ResourceHandler, default_handler_args=args,
            log_function=lambda handler: None)  # the API server's audit log records every request

    def start(self) -> str:
        """Listen (port 0: a free one) and start pacing the clock; returns the URL."""
        if self._pacer is not None:
            return self.url
        self._identities()
        self._listen()
        for server in self.cluster.apiservers:  # url webhooks: a real POST (serve/webhooks.py)
            server.webhooks.dial_url = url_dialer(self.speed)
        self._pacer = asyncio.get_event_loop().create_task(pace(self._advance, self.speed))
        return self.url

    def _listen(self) -> None:
        sockets = tornado.netutil.bind_sockets(self.port, self.host, family=socket.AF_UNSPEC)
        self.port = sockets[0].getsockname()[1]
        self._http = tornado.httpserver.HTTPServer(
            self._app(), ssl_options=self.certs.ssl_context(), max_body_size=_READ_LIMIT,
            idle_connection_timeout=300)
        self._http.add_sockets(sockets)
        self._listening = True

    def _advance(self, seconds: float) -> None:
        """The pacer's step: run the cluster, then listen only while an API server runs. A
        crashed kube-apiserver process has no socket, so a client's connect is refused (kubectl:
        "The connection to the server ... was refused"); its open connections and watches end."""
        self.cluster.run(seconds)
        up = any(server.running for server in self.cluster.apiservers)
        if up and not self._listening:
            self._listen()
        elif not up and self._listening and self._http is not None:
            http, self._http, self._listening = self._http, None, False
            http.stop()
            for close in list(self.watches):
                close()
            task = asyncio.get_event_loop().create_task(http.close_all_connections())
            self._closing.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(self._closing.discard)

    def served_resources(self) -> list[ResourceInfo]:
        """What discovery and OpenAPI describe: what the API server serves now, so a CRD's
        resource appears when it is served and goes when the CRD is deleted."""
        return [served.info for served in self.cluster.apiserver.served]

    def kubeconfig(self) -> dict[str, Any]:
        return build_kubeconfig(self.url, self.certs.ca_pem, self.tokens)

    def write_kubeconfig(self, path: str | Path = DEFAULT_PATH) -> Path:
        return write_kubeconfig(self.kubeconfig(), path)

    async def kubectl(self, command: str, context: str = "kubelab") -> str:
        """Run the real kubectl against this server and return what it printed (stdout, then
        stderr). Awaited, so the server keeps answering while kubectl waits for it: in a
        notebook cell, `print(await c.server.kubectl("get pods -o wide"))`."""
        binary = kubectl_binary()
        if binary is None:
            raise RuntimeError("the real kubectl is not installed (make installs it as root)")
        if self._kubeconfig_path is None:
            self._kubeconfig_path = Path(tempfile.mkdtemp(prefix="kubelab-kubectl-")) / "kubeconfig.yaml"
            self.write_kubeconfig(self._kubeconfig_path)
        env = dict(os.environ, KUBECONFIG=str(self._kubeconfig_path))
        proc = await asyncio.create_subprocess_exec(
            binary, "--context", context, *shlex.split(command), env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        return (out + err).decode()

    async def stop(self) -> None:
        """Stop listening, end every watch stream cleanly, close the connections."""
        if self._pacer is not None:
            self._pacer.cancel()
            self._pacer = None
        self._listening = False
        for server in self.cluster.apiservers:
            server.webhooks.dial_url = None
        if self._http is None:
            return
        self._http.stop()
        for close in list(self.watches):
            close()
        await asyncio.sleep(0)
        await self._http.close_all_connections()
        self._http = None
