"""How the API server reaches a webhook: the client side of the call.

Follows k8s.io/apiserver pkg/util/webhook/ (ClientManager, the service and url REST clients,
their `?timeout=` query) and pkg/util/proxy/proxy.go ResolveEndpoint (the endpoint routing
kube-apiserver uses with --enable-aggregator-routing): a `service` reference is resolved
through the Service and its EndpointSlices, so a webhook whose pods are gone fails with
`no endpoints available for service "<name>"`, as upstream says it.

The two ways out of the API server are seams the layers above fill in:

- `dial_pod(ip, port, path, review, timeout)`: the cluster's pod network (kubelab.cluster
  wires it: the pod at that address answers with the webhook its image serves);
- `dial_url(url, review, timeout, ca_bundle)`: a real HTTPS POST, which only the HTTPS edge
  (kubelab.serve) can make; without it a url webhook cannot be reached.

Each returns a Reply: the AdmissionReview that came back, or the transport's error, and how
long the call took. That time is charged to the request (its audit record's latency, as the
store's waits are); a call slower than the webhook's timeoutSeconds fails with `context
deadline exceeded` after exactly timeoutSeconds. The virtual clock does not move during a
request, so a trace stays the same run after run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubelab.api.meta import new_uid

if TYPE_CHECKING:
    from kubelab.apiserver.admission.chain import Attributes
    from kubelab.apiserver.server import APIServer

__all__ = ["CallError", "Reply", "WebhookClient"]

DEADLINE = "context deadline exceeded"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


@dataclass
class Reply:
    """What came back over the connection."""

    review: Any = None        # the decoded AdmissionReview, when the server answered 200
    latency: float = 0.0      # seconds the call took
    error: str = ""           # the transport's error ("connection refused", ...), "" if answered


class CallError(Exception):
    """The call did not give an AdmissionReview; str() is what the REST client says."""


PodDialer = Callable[[str, int, str, dict[str, Any], float], Reply]
URLDialer = Callable[[str, dict[str, Any], float, str], Reply]


class WebhookClient:
    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.dial_pod: PodDialer | None = None
        self.dial_url: URLDialer | None = None
        self.calls = 0  # webhook calls made, answered or not

    def new_uid(self) -> str:
        return new_uid(self.server.rand)

    def call(self, hook: dict[str, Any], review: dict[str, Any], attrs: Attributes) -> Any:
        """POST review to the webhook; the AdmissionReview it answered, or CallError."""
        timeout = float(hook.get("timeoutSeconds") or 10)
        config = hook.get("clientConfig") or {}
        self.calls += 1
        if config.get("url"):
            url = f"{config['url']}?timeout={int(timeout)}s"
            if self.dial_url is None:
                reply = Reply(error="a url webhook is reached only while the cluster is served "
                                    "over HTTPS (c.serve() or kubelab serve)")
            else:
                reply = self.dial_url(url, review, timeout, str(config.get("caBundle") or ""))
        else:
            service = config.get("service") or {}
            path = str(service.get("path") or "/")
            port = int(service.get("port") or 443)
            url = (f"https://{service.get('name')}.{service.get('namespace')}.svc:{port}{path}"
                   f"?timeout={int(timeout)}s")
            reply = self._call_service(service, port, path, review, timeout)
        if reply.latency > timeout:
            reply = Reply(latency=timeout, error=DEADLINE)
        if attrs.audit is not None:
            attrs.audit.latency += reply.latency
        trace = self.server.trace
        if trace is not None and trace.enabled:
            what = "/".join(p for p in (attrs.resource, attrs.namespace, attrs.name) if p)
            detail: dict[str, Any] = {"admitting": what, "url": url, "latency": reply.latency}
            if reply.error:
                detail["error"] = reply.error
            trace.record(self.server.name, "webhook", str(hook.get("name")), **detail)
        if reply.error:
            raise CallError(f'Post "{url}": {reply.error}')
        return reply.review

    def _call_service(self, service: dict[str, Any], port: int, path: str,
                      review: dict[str, Any], timeout: float) -> Reply:
        try:
            ip, target_port = self.resolve_endpoint(str(service.get("namespace") or ""),
                                                    str(service.get("name") or ""), port)
        except CallError as err:
            return Reply(error=str(err))
        if self.dial_pod is None:
            return Reply(error=f"dial tcp {ip}:{target_port}: connect: no route to host")
        return self.dial_pod(ip, target_port, path, review, timeout)

    def resolve_endpoint(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        """ResolveEndpoint: the address and port of one ready endpoint behind the Service's
        port `port` (the first by address: upstream picks at random)."""
        served = self.server.served
        svc = served.get("services", namespace, name)
        if svc is None:
            raise CallError(f'service "{name}" not found')
        spec = svc.get("spec") or {}
        kind = spec.get("type") or "ClusterIP"
        if kind not in ("ClusterIP", "LoadBalancer", "NodePort"):
            raise CallError(f'unsupported service type "{kind}"')
        svc_port = next((p for p in spec.get("ports") or [] if p.get("port") == port), None)
        if svc_port is None:
            raise CallError(f'no service port {port} found for service "{name}"')
        candidates = []
        for eps in served.list_objects("endpointslices", "discovery.k8s.io", namespace):
            labels = (eps.get("metadata") or {}).get("labels") or {}
            if labels.get(SERVICE_NAME_LABEL) != name:
                continue
            ports = [p for p in eps.get("ports") or []
                     if (p.get("name") or "") == (svc_port.get("name") or "")]
            if not ports or ports[0].get("port") is None:
                continue
            for endpoint in eps.get("endpoints") or []:
                if (endpoint.get("conditions") or {}).get("ready") is False:
                    continue
                candidates += [(address, int(ports[0]["port"]))
                               for address in endpoint.get("addresses") or []]
        if not candidates:
            raise CallError(f'no endpoints available for service "{name}"')
        return min(candidates)
