"""The HTTP handlers: each one turns an HTTP request into the API server's own Request.

Nothing here decides anything. Authentication, RBAC, admission, validation and storage all
happen in the API server's pipeline (kubelab.apiserver), exactly as for the components
inside the simulation: a request from real kubectl and one from the scheduler take the same
path. The handlers only read the path, query, headers and body, and write back JSON (or a
chunked stream of watch events), with errors as metav1.Status and the Status's HTTP code.
Every query parameter is converted before a watch's 200 and its headers are written, so a
bad one is a 400 Status, never an empty 200. The Impersonate-* headers become
Request.impersonate, which the API server's impersonation filter checks.

Departures: a watch without timeoutSeconds (or with 0) lasts until either side ends it;
upstream ends it after a random 30 to 60 minutes (--min-request-timeout). A Status, not
upstream's plain text, answers Impersonate-Group without Impersonate-User.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import tornado.web

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.request import Impersonation, RawBody, Request, WatchEvent, WatchHandle
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.healthz import health
from kubelab.serve import discovery, metrics, openapi
from kubelab.serve.openapi_v2_proto import encode_document
from kubelab.serve.requestinfo import parse_path, query_bool, to_request, watch_timeout
from kubelab.serve.tables import TABLE_V1, wants_table

if TYPE_CHECKING:
    from kubelab.serve.server import Server

__all__ = ["DiscoveryHandler", "OpenAPIHandler", "ResourceHandler", "StatusHandler"]

_JSON = "application/json"


def _not_found() -> ApiError:
    # What kube-apiserver's NotFoundHandler says for a path nothing serves.
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    {"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})


class _Base(tornado.web.RequestHandler):
    server: Server

    def initialize(self, server: Server) -> None:
        self.server = server

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", _JSON)
        self.set_header("Cache-Control", "no-cache, private")

    def send(self, obj: Object, code: int = 200, content_type: str = _JSON) -> None:
        self.set_status(code)
        self.set_header("Content-Type", content_type)
        # The JSON serializer encodes with json.NewEncoder(w).Encode: one line, then "\n".
        self.finish(json.dumps(obj, separators=(",", ":")) + "\n")

    def send_error_status(self, err: ApiError) -> None:
        if err.code == 429 and "retryAfterSeconds" in err.details:
            # Priority and fairness refused it: tooManyRequests (filters/maxinflight.go) writes
            # Retry-After and http.Error's plain text, not a Status.
            self.set_status(429)
            self.set_header("Retry-After", str(err.details["retryAfterSeconds"]))
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.set_header("X-Content-Type-Options", "nosniff")
            self.finish(err.message + "\n")
            return
        self.send(err.status, err.code)

    def filter_headers(self, request: Request | None) -> None:
        """The headers the API server's filters set on this request's answer, such as priority
        and fairness's X-Kubernetes-PF-FlowSchema-UID and -PriorityLevel-UID: how it classified
        this very request (priority-and-fairness.go setResponseHeaders), whichever API server
        behind the balancer served it."""
        for name, value in (request.response_headers if request is not None else {}).items():
            self.set_header(name, value)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        # Anything tornado itself refuses (an unknown method, a body over its limit).
        reason = {405: "MethodNotAllowed", 413: "RequestEntityTooLarge"}.get(status_code, "InternalError")
        message = {405: "the server does not allow this method on the requested resource",
                   413: "the request is too large"}.get(status_code, self._reason)
        self.send(ApiError(status_code, reason, message).status, status_code)

    def token(self) -> str:
        auth = self.request.headers.get("Authorization", "")
        return auth[len("Bearer "):].strip() if auth.startswith("Bearer ") else ""

    def impersonation(self) -> Impersonation | None:
        """The Impersonate-* headers (kubectl --as, --as-group, --as-uid); the API server's
        impersonation filter decides whether the requestor may (auth/impersonation.py)."""
        headers = self.request.headers
        extra: dict[str, list[str]] = {}
        for name, value in headers.get_all():
            if name.lower().startswith("impersonate-extra-"):
                key = unquote(name[len("impersonate-extra-"):].lower())
                extra.setdefault(key, []).append(value)
        wanted = Impersonation(headers.get("Impersonate-User", ""),
                               tuple(headers.get_list("Impersonate-Group")),
                               headers.get("Impersonate-Uid", ""),
                               tuple((k, tuple(v)) for k, v in sorted(extra.items())))
        return wanted if wanted else None

    def query(self) -> dict[str, str]:
        return {k: v[-1].decode("utf-8", "replace") for k, v in self.request.query_arguments.items()}


class StatusHandler(_Base):
    """/version, and /healthz, /livez and /readyz with their checks (apiserver/healthz.py),
    answered by the first live API server (a balancer would pick one)."""

    def get(self, what: str, check: str | None = None) -> None:
        if what == "version":
            self.send(discovery.version_info())
            return
        live = [s for s in self.server.cluster.apiservers if s.running]
        if not live:
            self.set_status(503)
            self.finish()
            return
        query = self.request.query_arguments
        exclude = tuple(v.decode() for v in query.get("exclude", ()))
        code, text = health(live[0], what, check or "", "verbose" in query, exclude)
        self.set_status(code)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.finish(text)


class MetricsHandler(_Base):
    """/metrics: the first live API server's metrics (serve/metrics.py), for who RBAC lets get
    the path (the admin; kube-apiserver's system:monitoring role is not bootstrapped here)."""

    def get(self) -> None:
        live = [s for s in self.server.cluster.apiservers if s.running]
        if not live:
            self.set_status(503)
            self.finish()
            return
        try:
            live[0].authorize_non_resource(self.token(), "/metrics")
        except ApiError as err:
            self.send_error_status(err)
            return
        self.set_header("Content-Type", metrics.CONTENT_TYPE)
        self.finish(metrics.exposition(live[0]))


class DiscoveryHandler(_Base):
    """/api, /apis, /api/v1 and /apis/<group>/<version>."""

    def get(self, path: str) -> None:
        table = self.server.served_resources()
        accept = self.request.headers.get("Accept", "")
        parts = [p for p in path.split("/") if p]
        if parts in (["api"], ["apis"]):
            if discovery.wants_aggregated(accept):
                self.send(discovery.aggregated(table, legacy=parts == ["api"]),
                          content_type=discovery.AGGREGATED_V2)
            elif parts == ["api"]:
                self.send(discovery.api_versions(self.server.address))
            else:
                self.send(discovery.api_group_list(table))
            return
        group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
        listing = discovery.resource_list(table, group, version)
        if listing is None:
            self.send_error_status(_not_found())
        else:
            self.send(listing)


class OpenAPIHandler(_Base):
    """/openapi/v3 (the index) and /openapi/v3/<group version path>."""

    def _crd_schema(self, info: ResourceInfo) -> Object | None:
        crd = self.server.cluster.apiserver.served.get(
            "customresourcedefinitions", "", f"{info.resource}.{info.group}", "apiextensions.k8s.io")
        for version in ((crd or {}).get("spec") or {}).get("versions") or []:
            if version.get("name") == info.version:
                schema = (version.get("schema") or {}).get("openAPIV3Schema")
                return schema if isinstance(schema, dict) else None
        return None

    def get(self, path: str) -> None:
        table = self.server.served_resources()
        if not path:
            self.send(openapi.index(table, self._crd_schema))
            return
        parts = [p for p in path.split("/") if p]
        doc = None
        if parts[:1] == ["api"] and len(parts) == 2:
            doc = openapi.group_version_document(table, "", parts[1], self._crd_schema)
        elif parts[:1] == ["apis"] and len(parts) == 3:
            doc = openapi.group_version_document(table, parts[1], parts[2], self._crd_schema)
        if doc is None:
            self.send_error_status(_not_found())
        else:
            self.send(doc)


# --- endpoints ---
_OPENAPI_V2_PROTOBUF = ("com.github.proto-openapi.spec.v2@v1.0+protobuf",
                        "com.github.proto-openapi.spec.v2.v1.0+protobuf")


class OpenAPIV2Handler(OpenAPIHandler):
    """/openapi/v2: the swagger 2.0 document, negotiated on Accept as kube-openapi's handler
    does (the first acceptable clause, by quality, wins: JSON, or the protobuf form client-go's
    OpenAPISchema asks for, openapi_v2_proto.py; none: 406 with an empty body)."""

    def get(self, path: str = "") -> None:
        self.add_header("Vary", "Accept")
        clauses = []
        for i, clause in enumerate((self.request.headers.get("Accept") or "*/*").split(",")):
            media, *params = [p.strip() for p in clause.split(";")]
            q = next((p[2:] for p in params if p.startswith("q=")), "1")
            try:
                quality = float(q)
            except ValueError:
                quality = 0.0
            clauses.append((-quality, i, media))
        for _, _, media in sorted(clauses):
            kind, _, sub = media.partition("/")
            if kind not in ("application", "*"):
                continue
            if sub in ("json", "*"):
                self.send(openapi.swagger_document(self.server.served_resources(), self._crd_schema))
                return
            if sub in _OPENAPI_V2_PROTOBUF:
                doc = openapi.swagger_document(self.server.served_resources(), self._crd_schema)
                self.set_header("Content-Type", f"application/{_OPENAPI_V2_PROTOBUF[1]}")
                self.finish(encode_document(doc))
                return
        self.set_status(406)
        self.finish()


@tornado.web.stream_request_body
class ResourceHandler(_Base):
    """Every resource path: /api/v1/namespaces/default/pods/web-1/status and the like."""

    _closed: Callable[[], None] | None = None  # ends the watch this request opened, if any

    def prepare(self) -> None:
        self._body = bytearray()
        self._too_large = False

    def data_received(self, chunk: bytes) -> None:
        # Read at most MaxRequestBodyBytes, as the REST handlers do (handlers/rest.go
        # limitedReadBody); the rest of a larger body is read and dropped.
        if len(self._body) + len(chunk) > self.server.max_body_bytes:
            self._too_large = True
            self._body.clear()
        elif not self._too_large:
            self._body.extend(chunk)

    def _request(self) -> tuple[Request, dict[str, str]]:
        query = self.query()
        watch = query_bool(query, "watch")
        info = parse_path(self.request.method or "GET", self.request.path, watch)
        if info is None:
            raise _not_found()
        if self._too_large:
            raise ApiError(413, "RequestEntityTooLarge",
                           f"Request entity too large: limit is {self.server.max_body_bytes}")
        content_type = self.request.headers.get("Content-Type", "") or "application/json"
        # The body goes to the API server as it came: it is read in the pipeline's decode
        # stage, after authentication and authorization (a DELETE's DeleteOptions too).
        raw = bytes(self._body)
        body: Any = RawBody(raw, content_type) if raw else None
        request = to_request(info, query, body, self.token(), content_type)
        request.impersonate = self.impersonation()
        # Content negotiation: a Table is the API server's to build (endpoints/response.py).
        request.as_table = wants_table(self.request.headers.get("Accept", ""))
        request.include_object = query.get("includeObject", "")
        return request, query

    def _serve(self) -> None:
        request: Request | None = None
        try:
            request, _ = self._request()
            result = self.server.cluster.api.handle(request)  # several: the load balancer
        except ApiError as err:
            self.filter_headers(request)
            self.send_error_status(err)
            return
        self.filter_headers(request)
        code = 201 if request.verb == "create" and request.subresource != "binding" else 200
        if request.subresource == "log":  # plain text, as the kubelet wrote it
            self.set_header("Content-Type", "text/plain")
            self.finish(str(result.get("body", "")))
        elif result.get("kind") == "Table" and request.as_table:
            self.send(result, code, TABLE_V1)
        else:
            self.send(result, code)

    post = put = patch = delete = _serve

    async def get(self) -> None:
        query = self.query()
        follow = query.get("follow") == "true" and self.request.path.endswith("/log")
        if not query_bool(query, "watch") and not follow:
            self._serve()
            return
        try:
            request, query = self._request()
        except ApiError as err:
            self.send_error_status(err)
            return
        if follow:
            await self._follow(request)
        else:
            await self._watch(request, query)

    async def _follow(self, request: Request) -> None:
        """`kubectl logs -f`: the lines so far, then each new one, until the container stops
        running or the client goes away (the kubelet follows the CRI log file the same way)."""
        api, sent = self.server.cluster.api, 0
        self._gone = False
        self.set_header("Content-Type", "text/plain")
        while not self._gone:
            try:
                text = str(api.handle(request).get("body", ""))
                pod = api.handle(Request("get", "pods", namespace=request.namespace, name=request.name,
                                         token=request.token, impersonate=request.impersonate))
            except ApiError as err:
                if sent == 0:
                    self.send_error_status(err)
                    return
                break
            if len(text) > sent:
                self.write(text[sent:])
                self.flush()
                sent = len(text)
            container = request.options.get("container") or ""
            states = [(s.get("state") or {}) for s in (pod.get("status") or {}).get("containerStatuses") or []
                      if not container or s.get("name") == container]
            if states and not any("running" in st for st in states):
                break
            await asyncio.sleep(0.5)
        if not self._finished:
            self.finish()

    # ------------------------------------------------------------------ watch

    async def _watch(self, request: Request, query: dict[str, str]) -> None:
        """A chunked stream of watch events, one JSON object per line, until either side ends it."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        table = request.as_table

        def on_event(event: WatchEvent) -> None:
            if done.done():
                return
            self.write(json.dumps(event, separators=(",", ":")) + "\n")
            self.flush()

        def on_close() -> None:
            if not done.done():
                done.set_result(None)

        self._closed = on_close
        try:
            handle: WatchHandle = self.server.cluster.api.watch(request, on_event, on_close)
        except ApiError as err:
            self.filter_headers(request)
            self.send_error_status(err)
            return
        self.filter_headers(request)
        self.set_header("Content-Type", TABLE_V1 if table else _JSON)
        self.flush()
        # Checked by _request before any header was written. A negative timeout ends the
        # watch at once, as upstream's timer does; 0 or none: until either side ends it.
        timeout = watch_timeout(query)
        timer = asyncio.get_running_loop().call_later(max(timeout, 0), on_close) \
            if timeout else None
        self.server.watches.add(on_close)
        try:
            await done
        finally:
            self.server.watches.discard(on_close)
            if timer is not None:
                timer.cancel()
            handle.stop()
        if not self._finished:
            self.finish()

    def on_connection_close(self) -> None:
        """The client went away mid-watch: stop the watch; nothing else is left behind."""
        self._gone = True
        if self._closed is not None:  # a watch is open
            self._closed()
