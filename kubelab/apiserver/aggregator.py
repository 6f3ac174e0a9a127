"""The aggregation layer: API groups the server does not store but proxies to an extension
API server (kube-aggregator, staging/src/k8s.io/kube-aggregator/pkg/apiserver/handler_proxy.go).

An APIService (`v1beta1.metrics.k8s.io`) names the Service of the extension server; the
aggregator lists its group in discovery and hands every request for it to that server, after
the main server's authentication and authorization. An unavailable backend answers 503
ServiceUnavailable "the server is currently unable to handle the request", as the proxy does
when the APIService's Available condition is False.

kubelab's backends are in-process (the wiring registers them, as the metrics server of
kubelab/cluster/metrics_server.py does): each takes the resolved request and answers an object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from kubelab.api import Object
from kubelab.api.errors import service_unavailable
from kubelab.api.request import Request
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.context import Served
from kubelab.apiserver.registry.strategy import strategy_for

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext
    from kubelab.apiserver.serving import ServedResources

__all__ = ["APIServiceBackend", "proxy", "register_api_group", "register_api_service"]


class APIServiceBackend(Protocol):
    """An extension API server: answers get and list of its resources."""

    @property
    def available(self) -> bool: ...

    def handle(self, request: Request) -> Object: ...


def register_api_service(served: ServedResources, infos: list[ResourceInfo],
                         backend: APIServiceBackend) -> None:
    """Serve infos (one group and version) by proxying to backend; discovery lists them."""
    for info in infos:
        served.serve_proxied(Served(info, strategy_for(info.resource), "", True, None,
                                    frozenset(info.subresources), backend=backend))


# --- hpacsi ---
def register_api_group(served: ServedResources, group: str, version: str,
                       backend: APIServiceBackend) -> None:
    """Proxy a whole group and version to backend, whatever the resource: the custom and
    external metrics APIs, whose resources are the metrics an adapter knows."""
    info = ResourceInfo("*", "", group=group, version=version, verbs=("get", "list"))
    served.serve_proxied_group(Served(info, strategy_for(""), "", True, None, frozenset(),
                                      backend=backend, proxied_group=True))


def proxy(ctx: RequestContext) -> Object:
    """proxyHandler.ServeHTTP: the request goes to the backend as it came."""
    backend = ctx.served.backend
    if backend is None or not backend.available:
        raise service_unavailable()
    ctx.enter("proxy")
    return backend.handle(ctx.request)
