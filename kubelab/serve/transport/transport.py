"""kubelab.client over HTTPS: an object that speaks the API (kubelab.api.request.API) by HTTP.

Hand an HTTPTransport to kubelab.client.Client and every informer, workqueue and controller
of the notebooks talks to a real API server, kubelab's own (`kubelab serve`) or a real
cluster's, exactly as client-go's REST client does (k8s.io/client-go rest/request.go):

- handle(request) sends one request and waits for the answer: the path of Request.path, the
  list options as query parameters (client-go's VersionedParams), JSON bodies, a patch's type
  as its Content-Type, DeleteOptions as the body of a DELETE. One keep-alive connection is
  reused from request to request.
- watch(request, ...) returns at once. An asyncio task on the running loop (a Jupyter kernel
  has one) reads the chunked stream of watch events, one JSON object per line, and calls
  on_event for each on the loop's own thread, never from another; on_close when the stream
  ends or breaks. stop() cancels the task and closes the connection.
- An error response becomes the ApiError of its metav1.Status (code, reason, message,
  details), so a 404, 409 or 422 reads exactly as it does in the simulation; a body that is
  not a Status gets client-go's generic words for its code (errors.go NewGenericServerResponse).
- Impersonation (rest.Config.Impersonate, or a Request's own impersonate from the Client) is
  sent as client-go's transport/round_trippers.go impersonatingRoundTripper sends it:
  Impersonate-User (always, once anything is impersonated), Impersonate-Uid, one
  Impersonate-Group line per group and one Impersonate-Extra-<key> line per value, the key
  percent-encoded where it is not an HTTP token character (headerKeyEscape) and the header
  names in Go's canonical form. A Request that carries its own impersonation (a Client made
  with impersonate=...) is sent with it instead, as the round tripper leaves a request alone
  that already has an Impersonate-User header.

Like the served front end this is an edge of kubelab (docs/ARCHITECTURE.md section 3): sockets
and asyncio live here, never in the simulation.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from kubelab.api import Object
from kubelab.api.request import Impersonation, Request, WatchEvent
from kubelab.serve.transport.clienterrors import ConnectionFailed, error_from
from kubelab.serve.transport.restconfig import RestConfig, load_rest_config
from kubelab.serve.transport.watchstream import HTTPWatch

__all__ = ["HTTPTransport", "header_key_escape", "impersonation_headers"]

_JSON = "application/json"
# Patch types and their Content-Type (k8s.io/apimachinery pkg/types/patch.go).
PATCH_CONTENT_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
_METHODS = {"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT",
            "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE"}
# OpenSSL's verify codes for a chain that ends in no trusted root (x509.UnknownAuthorityError).
_UNKNOWN_AUTHORITY = {2, 18, 19, 20, 21}
_CLOSED_IDLE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
_DELETE_OPTIONS = ("propagationPolicy", "gracePeriodSeconds", "preconditions")


def _query(request: Request) -> dict[str, str]:
    """metav1.ListOptions and friends as query parameters, as client-go encodes them."""
    query: dict[str, str] = {}
    if request.label_selector:
        query["labelSelector"] = request.label_selector
    if request.field_selector:
        query["fieldSelector"] = request.field_selector
    if request.resource_version:
        query["resourceVersion"] = request.resource_version
    if request.limit:
        query["limit"] = str(request.limit)
    if request.continue_token:
        query["continue"] = request.continue_token
    if request.allow_watch_bookmarks:
        query["allowWatchBookmarks"] = "true"
    if request.verb == "watch":
        query["watch"] = "true"
    if request.dry_run and request.verb not in ("delete", "deletecollection"):
        query["dryRun"] = "All"
    if request.verb == "patch" and request.options.get("patchType") == "apply":
        query["fieldManager"] = str(request.options.get("fieldManager") or "kubelab")
        if request.options.get("force"):
            query["force"] = "true"
    if request.as_table and request.include_object:
        query["includeObject"] = request.include_object
    if request.verb == "get" and request.subresource == "log":
        for key, value in request.options.items():  # PodLogOptions: container, tailLines...
            if value not in (None, "", False):
                query[key] = "true" if value is True else str(value)
    return query


# The bytes a header key may hold as they are: RFC 7230's tchar (net/http's isTokenTable).
_TOKEN_BYTES = frozenset(b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def header_key_escape(key: str) -> str:
    """headerKeyEscape: every byte that is not a token character, and '%', as %XX."""
    return "".join(chr(b) if b in _TOKEN_BYTES and b != ord("%") else f"%{b:02X}"
                   for b in key.encode("utf-8"))


def _canonical(name: str) -> str:
    """textproto.CanonicalMIMEHeaderKey: each word capitalised, the rest lower case."""
    return "-".join(word[:1].upper() + word[1:].lower() for word in name.split("-"))


def impersonation_headers(wanted: Impersonation) -> list[tuple[str, str]]:
    """The Impersonate-* header lines impersonatingRoundTripper adds, in its order."""
    headers = [("Impersonate-User", wanted.user)]
    if wanted.uid:
        headers.append(("Impersonate-Uid", wanted.uid))
    headers += [("Impersonate-Group", group) for group in wanted.groups]
    for key, values in wanted.extra:
        name = _canonical("Impersonate-Extra-" + header_key_escape(key))
        headers += [(name, value) for value in values]
    return headers


def _valid_header_value(value: str) -> bool:
    """httpguts.ValidHeaderFieldValue: no control character but horizontal tab."""
    return not any((ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F for ch in value)


def _body(request: Request) -> tuple[bytes | None, str]:
    """The body and its Content-Type."""
    if request.verb in ("delete", "deletecollection"):
        options: Object = {"kind": "DeleteOptions", "apiVersion": "v1"}
        options.update({k: request.options[k] for k in _DELETE_OPTIONS if k in request.options})
        if request.dry_run:
            options["dryRun"] = ["All"]
        return json.dumps(options).encode(), _JSON
    if request.body is None:
        return None, _JSON
    content_type = _JSON
    if request.verb == "patch":
        patch_type = str(request.options.get("patchType", "merge"))
        content_type = PATCH_CONTENT_TYPES.get(patch_type, patch_type)
    return json.dumps(request.body, separators=(",", ":")).encode(), content_type


def _send(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None,
          headers: list[tuple[str, str]]) -> None:
    """One request on the connection, each header on its own line, values as UTF-8 (Go sends
    a header's bytes as they are)."""
    conn.putrequest(method, path)
    for name, value in headers:
        conn.putheader(name, value.encode("utf-8"))
    if body is not None or method in ("POST", "PUT", "PATCH"):
        conn.putheader("Content-Length", str(len(body or b"")))
    conn.endheaders(body)


class HTTPTransport:
    """The API over HTTPS, for one kubeconfig context (restconfig.load_rest_config)."""

    def __init__(self, config: RestConfig, *, timeout: float = 30.0,
                 user_agent: str = "kubelab-transport") -> None:
        self.config, self.timeout, self.user_agent = config, timeout, user_agent
        self.ssl_context: ssl.SSLContext | None = (
            config.ssl_context() if config.scheme == "https" else None)
        self._conn: http.client.HTTPConnection | None = None
        self.watches: set[HTTPWatch] = set()

    @classmethod
    def from_kubeconfig(cls, path: str | Path, context: str = "",
                        impersonate: Impersonation | None = None) -> HTTPTransport:
        """The transport for a kubeconfig's context (default: its current-context); impersonate
        replaces the kubeconfig user's own impersonation, as kubectl --as does."""
        return cls(load_rest_config(path, context, impersonate))

    def url(self, request: Request) -> str:
        query = _query(request)
        return request.path + ("?" + urlencode(sorted(query.items())) if query else "")

    def headers(self, request: Request, content_type: str = _JSON) -> list[tuple[str, str]]:
        """The request's header lines (a name may repeat: Impersonate-Group)."""
        # kubectl get's transformRequests asks for a Table first, JSON if the server has none.
        accept = f"{_TABLE},{_JSON}" if request.as_table else _JSON
        headers = [("Accept", accept), ("Content-Type", content_type), ("User-Agent", self.user_agent)]
        token = request.token or self.config.token
        if token:
            headers.append(("Authorization", f"Bearer {token}"))
        wanted = request.impersonate or self.config.impersonate  # the request's own comes first
        if wanted:
            headers += impersonation_headers(wanted)
        for name, value in headers:
            if not _valid_header_value(value):  # net/http refuses it before dialing
                raise ConnectionFailed(_METHODS[request.verb].capitalize(),
                                       self.config.server + self.url(request), self.config.host,
                                       f"net/http: invalid header field value for {name!r}")
        return headers

    def _connect(self) -> http.client.HTTPConnection:
        host, port = self.config.address
        if self.ssl_context is None:
            return http.client.HTTPConnection(host, port, timeout=self.timeout)
        return http.client.HTTPSConnection(host, port, timeout=self.timeout, context=self.ssl_context)

    def _failed(self, request: Request, err: Exception) -> ConnectionFailed:
        """The connect failed: Go's words for why (net.OpError, crypto/tls, crypto/x509)."""
        host, port = self.config.address
        if isinstance(err, ConnectionRefusedError):
            cause = f"dial tcp {host}:{port}: connect: connection refused"
        elif isinstance(err, ssl.SSLCertVerificationError) and err.verify_code in _UNKNOWN_AUTHORITY:
            cause = "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        elif isinstance(err, ssl.SSLCertVerificationError):
            cause = f"tls: failed to verify certificate: {err.verify_message}"
        elif isinstance(err, socket.gaierror):
            cause = f"dial tcp: lookup {host}: no such host"
        elif isinstance(err, http.client.RemoteDisconnected):
            cause = "EOF"  # closed before any answer
        elif isinstance(err, http.client.IncompleteRead):
            cause = "unexpected EOF"  # closed in the middle of one
        else:
            cause = str(err) or type(err).__name__
        return ConnectionFailed(_METHODS[request.verb].capitalize(), self.config.server + self.url(request),
                                self.config.host, cause)

    def handle(self, request: Request) -> Object:
        """One request, one answer: the object (or List), or the ApiError of its Status."""
        method, path = _METHODS[request.verb], self.url(request)
        body, content_type = _body(request)
        headers = self.headers(request, content_type)
        for attempt in (1, 2):
            reused = self._conn is not None
            conn = self._conn or self._connect()
            try:
                _send(conn, method, path, body, headers)
                response = conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as err:
                conn.close()
                self._conn = None
                if reused and attempt == 1 and isinstance(err, _CLOSED_IDLE):
                    # The server had closed the idle keep-alive connection before it read this
                    # request: dial again, once (net/http transport.go shouldRetryRequest).
                    continue
                raise self._failed(request, err) from None
            self._conn = None if response.will_close else conn
            return self._decode(request, method, response, data)
        raise AssertionError("unreachable")

    def _decode(self, request: Request, method: str, response: http.client.HTTPResponse,
                data: bytes) -> Object:
        content_type = response.getheader("Content-Type", "")
        obj: Any = None
        if content_type.startswith(_JSON):
            with contextlib.suppress(ValueError):
                obj = json.loads(data)
        if 200 <= response.status < 300:
            if isinstance(obj, dict):
                return obj
            return {"body": data.decode("utf-8", "replace")}  # pods/log is text
        raise error_from(response.status, obj, method, request, data, content_type)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> HTTPWatch:
        """Open a watch; events arrive later, on the running asyncio loop's thread.

        An error response (403, 404, 410...) arrives as one ERROR event with its Status, then
        the stream closes: the request is sent without waiting, so it cannot be raised here.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("an HTTP watch needs a running asyncio loop (a Jupyter kernel has "
                               "one; in a script, run your code inside asyncio.run)") from None
        watch = HTTPWatch(self, request, on_event, on_close)
        watch.task = loop.create_task(watch.run())
        self.watches.add(watch)
        return watch

    def close(self) -> None:
        """Stop every watch and close the keep-alive connection."""
        for watch in list(self.watches):
            watch.stop()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
