"""The client every component holds: typed-ish verbs over anything that speaks the API.

This is client-go's dynamic client: it turns `create(pod)` into a Request for
POST /api/v1/namespaces/default/pods and hands it to the API it was given. It never imports the
API server (docs/ARCHITECTURE.md section 1); a Cluster passes it a connection to the server, a
test can pass a fake. Each component gets its own Client with its own bearer token, so RBAC and
the audit log see who did what.

Each client may hold client-go's token bucket (kubelab/client/flowcontrol.py): every request
first takes a token, and the instant its token comes is kept in `throttled_until`, which the
caller charges on the clock (a controller's worker stays busy for it); a wait over a second is said in
the trace with client-go's words.

A client knows only its own round trips (kubelab.api.request): the answer and how long it took,
the server's error, or the connection's. It never asks what is behind its connection.

impersonate=Impersonation("viewer") is rest.Config.Impersonate: every request asks to act as
that user (the Impersonate-* headers over HTTPS, Request.impersonate in process), and the API
server's impersonation filter decides whether this client's own user may.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from kubelab.api import Object
from kubelab.api.errors import ApiError, bad_request
from kubelab.api.request import (
    API,
    DEFAULT_SERVER,
    ConnectionRefused,
    Impersonation,
    Request,
    Response,
    WatchEvent,
    WatchHandle,
)
from kubelab.api.resources import ResourceInfo, ResourceTable
from kubelab.client.flowcontrol import (
    EXTRA_LONG_THROTTLE_LATENCY,
    ThrottledLogger,
    TokenBucketRateLimiter,
    throttle_message,
)
from kubelab.sim.trace import Trace

# ConnectionRefused is the connection's error (kubelab.api.request); it is named here too, where
# a caller of the client catches it.
__all__ = ["DEFAULT_SERVER", "Client", "ConnectionRefused"]


class Client:
    def __init__(
        self, api: API, token: str = "", *, user_agent: str = "", resources: ResourceTable | None = None,
        server: str = DEFAULT_SERVER, impersonate: Impersonation | None = None,
        rate_limiter: TokenBucketRateLimiter | None = None, trace: Trace | None = None,
    ) -> None:
        self.api = api
        self.server = server  # the kubeconfig's cluster.server
        self.token = token
        self.impersonate = impersonate  # rest.Config.Impersonate: who every request acts as
        self.user_agent = user_agent or "kubelab"
        self.resources = resources or ResourceTable()
        self.requests = 0  # how many requests this client sent: the notebooks count API calls
        self.warnings: list[str] = []  # the servers' deprecation warnings, not yet printed
        # How long this client's last round trip took, in virtual seconds, as its answer said
        # (kubelab.api.request.Response): what a client with a deadline compares with it.
        self.last_latency = 0.0
        # rest.Config.RateLimiter: None sends at once (kubectl's client here, a test's fake).
        self.rate_limiter = rate_limiter
        self.trace = trace
        # The virtual seconds this client's requests waited for their tokens, in all, and the
        # instant the last one's token comes: a caller on the clock compares it before and
        # after its work and stays busy until then (requests sent at one virtual instant wait
        # as goroutines that started together: each reservation comes after the one before).
        self.waited = 0.0
        self.throttled_until = 0.0
        self._throttled_logger = ThrottledLogger(rate_limiter.clock) if rate_limiter else None

    def with_rate_limiter(self, rate_limiter: TokenBucketRateLimiter | None) -> Client:
        """A client with the same connection and identity and its own token bucket, as each
        clientset built from one rest.Config gets (kube-controller-manager's ClientBuilder
        gives every controller its own)."""
        return Client(self.api, self.token, user_agent=self.user_agent, resources=self.resources,
                      server=self.server, impersonate=self.impersonate, rate_limiter=rate_limiter,
                      trace=self.trace)

    @classmethod
    def from_kubeconfig(cls, path: str | Path, *, context: str = "",
                        impersonate: Impersonation | None = None) -> Client:
        """A Client for any Kubernetes API server, kubelab serve's or a real cluster's, over
        HTTPS as the kubeconfig's context says (kubelab/serve/transport/transport.py). Its watches run
        on the asyncio loop; kubelab.serve.connect also gives informers a wall-paced clock.
        impersonate replaces the kubeconfig user's own `as`, `as-groups`... (kubectl --as)."""
        # The simulation's one import of the HTTP edge (an ignore_imports line in pyproject.toml),
        # made here so that `import kubelab.client` never loads sockets.
        from kubelab.serve.transport import HTTPTransport

        transport = HTTPTransport.from_kubeconfig(path, context, impersonate)
        return cls(transport, token=transport.config.token, server=transport.config.server)

    def impersonating(self, wanted: Impersonation) -> Client:
        """This client, asking to act as `wanted` (kubectl --as): the same connection, token
        and resource table."""
        return Client(self.api, self.token, user_agent=self.user_agent, resources=self.resources,
                      server=self.server, impersonate=wanted, rate_limiter=self.rate_limiter,
                      trace=self.trace)

    # ------------------------------------------------------------------ resolving resources

    def resource(self, name: str) -> ResourceInfo:
        """`pods`, `po`, `pod`, `deployments.apps`, or a custom resource's plural or kind."""
        if not isinstance(name, str):
            raise TypeError(f"resource must be a string such as \"pods\", got {type(name).__name__} {name!r}")
        info = self.resources.lookup(name)
        if info is None:
            self._discover()
            info = self.resources.lookup(name)
        if info is None:
            raise ApiError(404, "NotFound", f'the server doesn\'t have a resource type "{name}"')
        return info

    def resource_for(self, obj: Object) -> ResourceInfo:
        if not isinstance(obj, dict):
            raise bad_request(f"expected an object, got {type(obj).__name__}")
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        info = self.resources.for_kind(api_version, kind)
        if info is None:
            self._discover()
            info = self.resources.for_kind(api_version, kind)
        if info is None:
            # kubectl's words when the server has no such kind.
            raise ApiError(404, "NotFound", f'no matches for kind "{kind}" in version "{api_version}"')
        return info

    def discover(self) -> None:
        """Ask the server which custom resources it serves now (`kubectl api-resources`)."""
        self._discover()

    def _discover(self) -> None:
        """Learn custom resources the way kubectl's discovery does: ask the server."""
        try:
            listing = self._send(Request("list", "customresourcedefinitions",
                                         group="apiextensions.k8s.io", version="v1"))
        except ApiError as err:
            if err.code == 0:  # no server answered (refused, TLS...): kubectl says so, not
                raise          # that the type is unknown
            return
        for crd in listing.get("items", []):
            spec = crd.get("spec") or {}
            names = spec.get("names") or {}
            versions = [v.get("name") for v in spec.get("versions") or [] if v.get("served", True)]
            if not (names.get("plural") and names.get("kind") and versions):
                continue
            if self.resources.get(spec.get("group", ""), names["plural"]) is None:
                self.resources.register(ResourceInfo(
                    names["plural"], names["kind"], group=spec.get("group", ""), version=versions[0],
                    namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                    short_names=tuple(names.get("shortNames") or ()), subresources=("status",)))

    # ------------------------------------------------------------------ verbs

    def _throttle(self, request: Request) -> None:
        """rest.Request.tryThrottleWithInfo: wait for a token (virtually), and say a long wait."""
        if self.rate_limiter is None:
            return
        wait = self.rate_limiter.wait()
        if wait <= 0:
            return
        self.waited += wait
        self.throttled_until = max(self.throttled_until, self.rate_limiter.clock.now + wait)
        if wait > EXTRA_LONG_THROTTLE_LATENCY and self.trace is not None and \
                self._throttled_logger is not None and self._throttled_logger.attempt_to_log():
            self.trace.record(self.user_agent, "throttled", request.path,
                              message=throttle_message(wait, _http_verb(request),
                                                       self.server + _request_uri(request)))

    def _send(self, request: Request) -> Object:
        request.token, request.user_agent = self.token, self.user_agent
        if self.impersonate:
            request.impersonate = self.impersonate
        self._throttle(request)
        self.requests += 1
        self.last_latency = 0.0
        try:
            answer = self.api.handle(request)
        finally:
            self._note_warning(request.response_headers.get("Warning", ""))
        if isinstance(answer, Response):  # the body, as a plain object, and how long it took
            self.last_latency = answer.latency
            return dict(answer)
        return answer

    def _note_warning(self, header: str) -> None:
        """A `Warning: 299 - "text"` the server answered with (rest/warnings.go): kept, once
        each, until take_warnings() hands them to whoever prints them (kubectl)."""
        text = header.partition(" - ")[2].strip('"') if header.startswith("299 ") else header
        if text and text not in self.warnings:
            self.warnings.append(text)

    def take_warnings(self) -> list[str]:
        warnings, self.warnings = self.warnings, []
        return warnings

    def _request(self, verb: str, info: ResourceInfo, namespace: str = "", name: str = "",
                 **kwargs: Any) -> Request:
        # client-go's Request.Name and Namespace refuse what cannot be a path segment before
        # anything is sent ("invalid resource name ..."); Go's types already refuse a number.
        for what, value in (("resource name", name), ("namespace", namespace)):
            if not isinstance(value, str):
                raise bad_request(f"invalid {what} {value!r}: must be a string, not "
                                  f"{type(value).__name__}")
        return Request(verb, info.resource, namespace=namespace if info.namespaced else "",
                       name=name, group=info.group, version=info.version, **kwargs)

    def create(self, obj: Object, namespace: str = "") -> Object:
        info = self.resource_for(obj)
        ns = namespace or _meta_string(obj, "namespace") or "default"
        return self._send(self._request("create", info, ns, body=obj))

    def get(self, resource: str, name: str, namespace: str = "default", *, as_table: bool = False,
            include_object: str = "", subresource: str = "") -> Object:
        """The object (or its subresource: status, scale); as_table: the server's
        meta.k8s.io/v1 Table of it instead (see list)."""
        return self._send(self._request("get", self.resource(resource), namespace, name,
                                        as_table=as_table, include_object=include_object,
                                        subresource=subresource))

    def list(self, resource: str, namespace: str = "", *, label_selector: str = "",
             field_selector: str = "", limit: int = 0, continue_token: str = "",
             resource_version: str = "", as_table: bool = False, include_object: str = "") -> Object:
        """A List object; namespace "" lists across all namespaces (kubectl -A).

        as_table asks for the server's meta.k8s.io/v1 Table instead, as `kubectl get` does
        (rest.Request.SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"));
        include_object (metav1.TableOptions) says what each row carries: "None", "Metadata"
        (the default) or "Object"."""
        return self._send(self._request(
            "list", self.resource(resource), namespace, label_selector=label_selector,
            field_selector=field_selector, limit=limit, continue_token=continue_token,
            resource_version=resource_version, as_table=as_table, include_object=include_object))

    def update(self, obj: Object, subresource: str = "") -> Object:
        info = self.resource_for(obj)
        return self._send(self._request("update", info, _meta_string(obj, "namespace") or
                                        "default", _meta_string(obj, "name"), body=obj,
                                        subresource=subresource))

    def update_status(self, obj: Object) -> Object:
        return self.update(obj, subresource="status")

    def patch(self, resource: str, name: str, patch: Object, namespace: str = "default", *,
              patch_type: str = "merge", subresource: str = "", field_manager: str = "",
              force: bool = False) -> Object:
        """PATCH; an "apply" patch (server-side apply) names its field manager, and force takes
        the conflicting fields from their managers."""
        options: dict[str, Any] = {"patchType": patch_type}
        if field_manager:
            options["fieldManager"] = field_manager
        if force:
            options["force"] = True
        return self._send(self._request("patch", self.resource(resource), namespace, name, body=patch,
                                        subresource=subresource, options=options))

    def delete(self, resource: str, name: str, namespace: str = "default", *,
               propagation_policy: str | None = None, grace_period_seconds: int | None = None,
               preconditions: dict[str, str] | None = None) -> Object:
        options: dict[str, Any] = {}
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if preconditions:
            options["preconditions"] = preconditions
        return self._send(self._request("delete", self.resource(resource), namespace, name,
                                        options=options))

    # --- sa ---
    def create_token(self, name: str, namespace: str = "default",
                     token_request: Object | None = None) -> Object:
        """POST serviceaccounts/<name>/token (client-go's ServiceAccounts(ns).CreateToken): the
        TokenRequest back, with status.token."""
        body = token_request or {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                 "spec": {}}
        return self._send(Request("create", "serviceaccounts", namespace=namespace, name=name,
                                  subresource="token", body=body))

    def bind(self, pod: Object, node_name: str) -> Object:
        """POST pods/<name>/binding: what the scheduler writes, and all it writes."""
        meta = pod["metadata"]
        binding = {"apiVersion": "v1", "kind": "Binding",
                   "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "default"),
                                "uid": meta.get("uid", "")},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        return self._send(Request("create", "pods", namespace=meta.get("namespace", "default"),
                                  name=meta["name"], subresource="binding", body=binding))

    def get_logs(self, name: str, namespace: str = "default", *, container: str = "",
                 previous: bool = False, tail_lines: int | None = None,
                 timestamps: bool = False) -> str:
        """GET pods/<name>/log (client-go's Pods(ns).GetLogs(name, opts).Do): the text the
        container wrote, read by the API server from the pod's node."""
        options: dict[str, Any] = {"container": container, "previous": previous}
        if timestamps:
            options["timestamps"] = True
        if tail_lines is not None:
            options["tailLines"] = tail_lines
        response = self._send(Request("get", "pods", namespace=namespace, name=name,
                                      subresource="log", options=options))
        return str(response.get("body", ""))

    def exec(self, name: str, command: Sequence[str], namespace: str = "default", *, container: str = "",
             stdin: bool = False, tty: bool = False) -> Any:
        """POST pods/<name>/exec (client-go's remotecommand executor): the ExecSession the
        kubelet opened, which the caller drives (write, read, exit_code) on the cluster's clock."""
        options = {"command": list(command), "container": container, "stdin": stdin,
                   "stdout": True, "stderr": not tty, "tty": tty}
        return self._send(Request("create", "pods", namespace=namespace, name=name,
                                  subresource="exec", options=options))["session"]

    def attach(self, name: str, namespace: str = "default", *, container: str = "",
               stdin: bool = False, tty: bool = False) -> Any:
        """POST pods/<name>/attach: a session joined to the container's main process."""
        options = {"container": container, "stdin": stdin, "stdout": True, "stderr": not tty,
                   "tty": tty}
        return self._send(Request("create", "pods", namespace=namespace, name=name,
                                  subresource="attach", options=options))["session"]

    def get_scale(self, resource: str, name: str, namespace: str = "default") -> Object:
        return self._send(self._request("get", self.resource(resource), namespace, name,
                                        subresource="scale"))

    def scale(self, resource: str, name: str, replicas: int, namespace: str = "default") -> Object:
        scale = self.get_scale(resource, name, namespace)
        scale.setdefault("spec", {})["replicas"] = replicas
        return self._send(self._request("update", self.resource(resource), namespace, name,
                                        subresource="scale", body=scale))

    def metrics(self, verb: str, resource: str, namespace: str = "", name: str = "", *,
                label_selector: str = "") -> Object:
        """The resource metrics API (k8s.io/metrics' clientset, MetricsV1beta1): get or list
        of "nodes" (NodeMetrics) or "pods" (PodMetrics), served by metrics-server."""
        if resource not in ("nodes", "pods"):
            raise bad_request(f'the metrics API serves "nodes" and "pods", not "{resource}"')
        return self._send(Request(verb, resource, namespace="" if resource == "nodes" else namespace,
                                  name=name, group="metrics.k8s.io", version="v1beta1",
                                  label_selector=label_selector))

    # --- hpacsi ---
    def custom_metrics(self, namespace: str, resource: str, name: str, metric: str, *,
                       label_selector: str = "", metric_selector: str = "") -> Object:
        """The custom metrics API (k8s.io/metrics custom_metrics client, v1beta2): GET of
        namespaces/<ns>/<resource>/<name>/<metric> (name "*" with label_selector: every pod
        matching), or namespaces/<ns>/metrics/<metric> for the Namespace itself (resource
        "namespaces")."""
        options = {"metricLabelSelector": metric_selector} if metric_selector else {}
        if resource == "namespaces":
            return self._send(Request("get", "metrics", namespace=namespace, name=metric,
                                      group="custom.metrics.k8s.io", version="v1beta2",
                                      options=options))
        return self._send(Request("get", resource, namespace=namespace, name=name,
                                  subresource=metric, group="custom.metrics.k8s.io",
                                  version="v1beta2", label_selector=label_selector,
                                  options=options))

    def external_metrics(self, namespace: str, metric: str, *, label_selector: str = "") -> Object:
        """The external metrics API (k8s.io/metrics external_metrics client, v1beta1): the
        series of metric whose labels match, GET namespaces/<ns>/<metric>."""
        return self._send(Request("list", metric, namespace=namespace,
                                  group="external.metrics.k8s.io", version="v1beta1",
                                  label_selector=label_selector))

    def watch(self, resource: str, on_event: Callable[[WatchEvent], None], namespace: str = "", *,
              resource_version: str = "", label_selector: str = "", field_selector: str = "",
              on_close: Callable[[], None] | None = None, allow_watch_bookmarks: bool = False
              ) -> WatchHandle:
        request = self._request("watch", self.resource(resource), namespace,
                                resource_version=resource_version, label_selector=label_selector,
                                field_selector=field_selector,
                                allow_watch_bookmarks=allow_watch_bookmarks)
        request.token, request.user_agent = self.token, self.user_agent
        if self.impersonate:
            request.impersonate = self.impersonate
        self._throttle(request)
        self.requests += 1
        return self.api.watch(request, on_event, on_close)


def _meta_string(obj: Object, field: str) -> str:
    """metadata.<field> if it is a string, else "" (unstructured's GetName and GetNamespace):
    the server's decoder then says what is wrong with the object."""
    meta = obj.get("metadata")
    value = meta.get(field) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else ""


_HTTP_VERBS = {"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE"}


def _http_verb(request: Request) -> str:
    return _HTTP_VERBS.get(request.verb, "GET")


def _request_uri(request: Request) -> str:
    """The path and the query client-go's r.URL() would carry (the message's request part)."""
    query = [(k, v) for k, v in (("labelSelector", request.label_selector),
                                 ("fieldSelector", request.field_selector),
                                 ("limit", str(request.limit) if request.limit else ""),
                                 ("resourceVersion", request.resource_version),
                                 ("watch", "true" if request.verb == "watch" else "")) if v]
    return request.path + ("?" + urlencode(sorted(query)) if query else "")  # url.Values.Encode
