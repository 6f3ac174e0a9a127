"""The shape of a conversation with the API server.

A Request is what an HTTP request to kube-apiserver carries (verb, group/version/resource,
namespace, name, subresource, query parameters, bearer token, body), so an HTTP front end can be
added later without redesign. Anything that speaks the API (the API server itself, or a test
double) implements the API protocol; kubelab.client is handed one and never imports the server.

What a round trip tells the client is all it learns: the answer (a Response, which says how long
it took), an ApiError with the server's Status, or a ConnectionFailed from the connection when no
server answered (ConnectionRefused: nothing listens at the address).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubelab.api.errors import ConnectionFailed

__all__ = ["API", "DEFAULT_SERVER", "VERBS", "ConnectionRefused", "Impersonation", "RawBody",
           "Request", "Response", "WatchEvent", "WatchHandle"]

# Where kube-apiserver serves, as a kubeconfig names it (the node links in kubelab.cluster.faults
# dial the same address).
DEFAULT_SERVER = "https://kube-apiserver:6443"
_SERVER_IP = "172.18.0.1:6443"
_METHODS = {"get": "Get", "list": "Get", "watch": "Get", "create": "Post", "update": "Put",
            "patch": "Patch", "delete": "Delete", "deletecollection": "Delete"}

# The request verbs of the authorizer (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go).
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")

# A watch event as it crosses the wire: {"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR",
# "object": <the object, or a Status for ERROR>}.
WatchEvent = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RawBody:
    """A request body as it came over the wire (JSON, YAML or protobuf bytes). The API server
    reads it in its decode stage, after authentication and authorization, as upstream's
    handlers do: a request that may not be made is never decoded."""

    data: bytes
    content_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class Impersonation:
    """Who the requestor asks to act as (`kubectl --as`, `--as-group`, `--as-uid`): the
    Impersonate-User, Impersonate-Group, Impersonate-Uid and Impersonate-Extra-<key> headers.
    The API server's impersonation filter checks the requestor may (apiserver/auth/
    impersonation.py); extra holds (key, values) pairs, keys lower case."""

    user: str = ""
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.user or self.groups or self.uid or self.extra)


@dataclass(slots=True)
class Request:
    verb: str
    resource: str
    namespace: str = ""
    name: str = ""
    group: str = ""
    version: str = "v1"
    subresource: str = ""
    body: Any = None              # the object (or patch), or a RawBody from an HTTP front end
    # Query parameters.
    label_selector: str = ""
    field_selector: str = ""
    resource_version: str = ""
    limit: int = 0
    continue_token: str = ""
    allow_watch_bookmarks: bool = False
    dry_run: bool = False
    # Accept: application/json;as=Table;g=meta.k8s.io;v=v1 (what kubectl get sends): answer a
    # get or list as a meta.k8s.io/v1 Table (endpoints/handlers/response.go transformObject),
    # with metav1.TableOptions' includeObject: "None", "Metadata" (also "") or "Object".
    as_table: bool = False
    include_object: str = ""
    # DeleteOptions (propagationPolicy, gracePeriodSeconds, preconditions) or, for patch,
    # {"patchType": "merge" | "strategic" | "json"}.
    options: dict[str, Any] = field(default_factory=dict)
    # Authorization: Bearer <token>. Empty means anonymous.
    token: str = ""
    # Impersonate-* headers: act as this user, if the token's user may impersonate it.
    impersonate: Impersonation | None = None
    # The User-Agent header: which program (which replica) sent it; the audit log keeps it.
    user_agent: str = ""
    # The headers the server's filters set on this request's response, whether it is served
    # or refused (http.ResponseWriter.Header()): priority and fairness writes
    # X-Kubernetes-PF-FlowSchema-UID and -PriorityLevel-UID here (priority-and-fairness.go
    # setResponseHeaders), and an HTTP front end sends them on.
    response_headers: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def path(self) -> str:
        """The URL path kube-apiserver would serve this request on."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [prefix]
        if self.namespace and self.resource != "namespaces":
            parts.append(f"namespaces/{self.namespace}")
        parts.append(self.resource)
        if self.name:
            parts.append(self.name)
        if self.subresource:
            parts.append(self.subresource)
        return "/".join(parts)


class Response(dict[str, Any]):
    """An answer: the object (or List) it carries, and how long the round trip took.

    kubelab's API server answers at one virtual instant, so a client cannot time its request on
    the clock as client-go's transport times it on the wall clock. The answer says instead how
    long it would have taken, in virtual seconds (latency: what the server waited for its store,
    plus a slow server's delay), and a client with a deadline compares that with it. An answer
    that is a plain dict (a test double's) took no time."""

    __slots__ = ("latency",)

    def __init__(self, body: dict[str, Any], latency: float = 0.0) -> None:
        super().__init__(body)
        self.latency = latency


class ConnectionRefused(ConnectionFailed):
    """The TCP connect failed: nothing listens at the server's address, because the
    kube-apiserver process is down. The connection raises it (a request never reaches a server
    that is down), so the server's audit log has no record of it."""

    def __init__(self, request: Request, server: str = DEFAULT_SERVER) -> None:
        super().__init__(_METHODS.get(request.verb, "Get"), server + request.path,
                         server.split("://", 1)[-1].split("/", 1)[0],
                         f"dial tcp {_SERVER_IP}: connect: connection refused")


class WatchHandle(Protocol):
    """An open watch. stop() closes it; the server may close it too (on_close is then called)."""

    def stop(self) -> None: ...


class API(Protocol):
    """Anything that serves Kubernetes API requests."""

    def handle(self, request: Request) -> dict[str, Any]:
        """Serve one request: returns the object (or a List object), a Response when it can say
        how long it took; raises ApiError, or ConnectionFailed when no server answered."""
        ...

    def watch(
        self,
        request: Request,
        on_event: Callable[[WatchEvent], None],
        on_close: Callable[[], None] | None = None,
    ) -> WatchHandle:
        """Open a watch; events arrive later, as callbacks on the simulated clock.

        Errors of the request itself (401, 403, 404, 400) are raised as ApiError. As upstream's
        cacher does, a resourceVersion that is too old opens a watch whose only event is
        ERROR with a 410 Expired Status; a watch the server ends later simply closes.
        """
        ...
