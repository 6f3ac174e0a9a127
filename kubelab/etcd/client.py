"""A small blocking client for etcd's gRPC-JSON gateway, over the standard library's http.client.

Why the gateway and http.client (docs/ARCHITECTURE.md, the real-etcd edge): etcd serves every
KV, Watch and Maintenance call as JSON at http://<member>/v3/... next to gRPC, so kubelab
needs no gRPC stack and no new dependency; the calls a learner reads here are the rpc.proto
names (kv/range, kv/txn, watch, maintenance/status). The maintained Python clients are either
old (etcd3 0.12, grpcio), asyncio-only (aetcd) or another wrapper of this same gateway over
requests (etcd3gw).

Like clientv3 (client/v3/client.go), it is given several endpoints and uses one at a time; a
member that refuses or drops the connection makes it move to the next. A request the member
received but did not answer within `timeout` is not re-sent (a write might then apply twice):
the caller gets a 504 Timeout, as from kube-apiserver's request deadline. This module runs on
the caller's thread: the simulation's thread for requests, a watch's own reader thread for its
stream (kubelab/etcd/watch.py).
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from kubelab.etcd.errors import EtcdTimeoutError, EtcdUnavailableError, from_gateway, unreachable
from kubelab.store.errors import StoreError

__all__ = ["DEFAULT_TIMEOUT", "GatewayClient", "parse_endpoints"]

# etcd answers a proposal it cannot commit with "etcdserver: request timed out" after
# ReqTimeout = 5 s + 2 x election timeout (server/etcdserver/server.go), 7 s by default; we wait
# a little longer, so etcd's own error is the one the caller sees.
DEFAULT_TIMEOUT = 9.0
_DROPPED = (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine)


def parse_endpoints(text: str) -> list[str]:
    """"etcd://127.0.0.1:2379,127.0.0.1:22379" or "http://..." -> ["http://127.0.0.1:2379", ...]."""
    hosts = text.split("://", 1)[1] if "://" in text else text
    endpoints = []
    for host in hosts.split(","):
        host = host.strip().rstrip("/")
        if not host:
            continue
        parts = urlsplit("http://" + host)
        if not parts.hostname or not parts.port:
            raise ValueError(f"etcd endpoint {host!r} must be host:port, e.g. 127.0.0.1:2379")
        endpoints.append(f"http://{parts.hostname}:{parts.port}")
    if not endpoints:
        raise ValueError(f"no etcd endpoint in {text!r}; expected etcd://host:port[,host:port]")
    return endpoints


class GatewayClient:
    """POST JSON to /v3/<path> on one of the endpoints; return the answer or raise etcd's error."""

    def __init__(self, endpoints: list[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.endpoints = list(endpoints)
        self.timeout = timeout
        self.current = 0  # index of the endpoint in use
        self._conn: http.client.HTTPConnection | None = None
        self.compact_revision = 0  # filled in by the backend, for CompactedError
        self.revision = 0

    def connection(self, endpoint: str, timeout: float | None) -> http.client.HTTPConnection:
        parts = urlsplit(endpoint)
        return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port,
                                          timeout=timeout)

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        payload = json.dumps(body).encode()
        reasons = []
        # Each endpoint once, and once more on a fresh connection when a kept-alive one turns
        # out dropped (the member died or restarted since our last request).
        for _ in range(2 * len(self.endpoints)):
            endpoint = self.endpoints[self.current]
            fresh = self._conn is None
            try:
                return self._call_once(endpoint, path, payload)
            except TimeoutError:
                # Not re-sent (it may have been applied); the next request tries the next member.
                self.close()
                self.current = (self.current + 1) % len(self.endpoints)
                raise EtcdTimeoutError(endpoint) from None
            except (ConnectionRefusedError, *_DROPPED, OSError) as err:
                # Refused, or dropped: the request was not served; try again elsewhere.
                self.close()
                reasons.append(_reason(err))
                if fresh:
                    self.current = (self.current + 1) % len(self.endpoints)
        hosts = [e.removeprefix("http://") for e in self.endpoints]
        raise unreachable(hosts, reasons[-1] if reasons else "no endpoint")

    def _call_once(self, endpoint: str, path: str, payload: bytes) -> dict[str, Any]:
        if self._conn is None:
            self._conn = self.connection(endpoint, self.timeout)
        self._conn.request("POST", "/v3/" + path, payload, {"Content-Type": "application/json"})
        reply = self._conn.getresponse()
        raw = reply.read()
        try:
            answer: dict[str, Any] = json.loads(raw) if raw else {}
        except ValueError:
            raise EtcdUnavailableError(f"etcd at {endpoint} answered {reply.status}: "
                                       f"{raw[:200]!r}", endpoint) from None
        if reply.status != 200 or ("error" in answer and "header" not in answer):
            raise self.error(answer, endpoint)
        return answer

    def error(self, answer: dict[str, Any], endpoint: str) -> StoreError:
        return from_gateway(answer, revision=self.revision,
                            compact_revision=self.compact_revision, endpoint=endpoint)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _reason(err: BaseException) -> str:
    if isinstance(err, ConnectionRefusedError):
        return "connect: connection refused"
    if isinstance(err, http.client.RemoteDisconnected | ConnectionResetError | BrokenPipeError):
        return "connection reset by peer"
    return str(err) or type(err).__name__
