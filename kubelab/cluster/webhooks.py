"""Webhook servers that run as pods: the code behind a `service` webhook reference.

A real admission webhook is a program in a container image (cert-manager's webhook, an
ingress controller's admission server) that answers AdmissionReviews over HTTPS on a pod's
port. Here the program is a Python function, registered for an image:

    def require_team(review):                         # AdmissionReview in, AdmissionReview out
        ...
    c.webhook_servers.register("example.com/team-check:1", require_team)

Every running pod whose container runs that image serves the function on any port, so a
Deployment of that image, a Service in front of it and a ValidatingWebhookConfiguration that
names the Service are the whole installation, as on a real cluster. The API server reaches the
pod through the Service's endpoints (kubelab/apiserver/admission/webhook/client.py), then here:
the pod must really be there (kubelab.cluster.network.pod_serving: its node up, a container
running and ready), or the connection is refused; on a node that is down the call hangs until
the webhook's timeout.

Each call takes the server's `latency` virtual seconds (0 unless c.faults.slow_webhook set it);
a `broken` server refuses connections although its pods look Ready (c.faults.break_webhook:
the process inside crashed). The function gets a copy of the review, and its answer crosses a
JSON boundary, as on the wire.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubelab.apiserver.admission.webhook import Reply
from kubelab.cluster.network import pod_serving

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["WebhookServer", "WebhookServers"]

Handler = Callable[[dict[str, Any]], Any]


@dataclass
class WebhookServer:
    image: str
    handler: Handler
    latency: float = 0.0   # virtual seconds each call takes
    broken: bool = False   # refuses connections (the process crashed; the pod looks Ready)
    calls: int = 0


class WebhookServers:
    """c.webhook_servers: image -> the webhook its containers serve."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._servers: dict[str, WebhookServer] = {}
        for server in cluster.apiservers:
            server.webhooks.dial_pod = self.dial

    def register(self, image: str, handler: Handler) -> WebhookServer:
        """Serve handler(review) -> review from every pod running image."""
        if not callable(handler):
            raise TypeError(f"a webhook handler must be callable, got {handler!r}")
        self._servers[image] = WebhookServer(image, handler)
        return self._servers[image]

    def __getitem__(self, image: str) -> WebhookServer:
        if image not in self._servers:
            known = ", ".join(sorted(self._servers)) or "none"
            raise KeyError(f"no webhook server is registered for image {image!r}; registered: {known}")
        return self._servers[image]

    def __iter__(self) -> Any:
        return iter(list(self._servers.values()))

    def dial(self, ip: str, port: int, path: str, review: dict[str, Any], timeout: float) -> Reply:
        """POST review to ip:port/path, as the API server's REST client would."""
        ok, why = pod_serving(self._cluster, ip)
        if not ok and why.startswith("node "):
            return Reply(latency=timeout, error="context deadline exceeded")  # no answer at all
        refused = Reply(error=f"dial tcp {ip}:{port}: connect: connection refused")
        server = self._server_at(ip) if ok else None
        if server is None or server.broken:
            return refused
        server.calls += 1
        try:
            answer = json.loads(json.dumps(server.handler(json.loads(json.dumps(review)))))
        except Exception as err:  # the learner's code: a 500 from the webhook's HTTP server
            return Reply(latency=server.latency, error=f'an error on the server ("{type(err).__name__}: '
                         f'{err}") has prevented the request from succeeding')
        return Reply(answer, server.latency)

    def _server_at(self, ip: str) -> WebhookServer | None:
        for runtime in self._cluster.runtimes.values():
            for sandbox in runtime.sandboxes.values():
                if sandbox.ip != ip:
                    continue
                for container in runtime.pod_containers(sandbox.pod_uid):
                    if container.image in self._servers:
                        return self._servers[container.image]
        return None
