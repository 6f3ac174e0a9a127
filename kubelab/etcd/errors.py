"""etcd's errors as the gRPC-JSON gateway sends them, turned into kubelab's store errors.

The gateway answers a failed call with `{"error": ..., "message": ..., "code": <gRPC code>}`;
the message is etcd's own (api/v3rpc/rpctypes/error.go), e.g. "etcdserver: mvcc: required
revision has been compacted" (code 11, OutOfRange). kubelab keeps etcd's text and picks the
store error the API server already understands (kubelab/store/errors.py), so a compacted read
through a real etcd becomes the same 410 Gone as through the embedded store.

An etcd that takes a request and never answers (a stalled process or disk) is
`EtcdTimeoutError`, the 504 Timeout kube-apiserver's request deadline gives. An etcd that
cannot answer at all (every member dead, a lost quorum: "etcdserver: request timed
out") is `EtcdUnavailableError`: both a StoreError and an ApiError with code 500 and an empty
reason, which is what kube-apiserver answers for an error that is not an APIStatus
(k8s.io/apiserver pkg/endpoints/handlers/responsewriters/status.go ErrorToAPIStatus). kubectl
then prints `Error from server: etcdserver: request timed out`, as on a real cluster.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.store.errors import (
    CompactedError,
    FutureRevisionError,
    InvalidArgumentError,
    RequestTooLargeError,
    StoreError,
)

__all__ = ["EtcdTimeoutError", "EtcdUnavailableError", "from_gateway", "unreachable"]

# gRPC status codes the gateway reports (google.golang.org/grpc/codes).
INVALID_ARGUMENT, DEADLINE_EXCEEDED, OUT_OF_RANGE, UNAVAILABLE = 3, 4, 11, 14

START_HINT = ("start one with `etcd --data-dir /tmp/etcd-data` (Debian: apt-get install "
              "etcd-server), or let kubelab start its own: Cluster(store=\"etcd\")")


class EtcdUnavailableError(ApiError, StoreError):
    """etcd did not answer: kube-apiserver passes the error text on as a 500."""

    def __init__(self, message: str, endpoint: str = "") -> None:
        ApiError.__init__(self, 500, "", message)
        self.endpoint = endpoint


class EtcdTimeoutError(ApiError, StoreError):
    """etcd took the request and never answered (a stalled member or disk). kube-apiserver's
    request deadline then ends the request with 504 Timeout (k8s.io/apiserver
    pkg/server/filters/timeout.go: NewTimeoutError("request did not complete within requested
    timeout - " + ctx.Err())); kubelab's deadline is the etcd client's timeout."""

    def __init__(self, endpoint: str = "") -> None:
        ApiError.__init__(self, 504, "Timeout", "Timeout: request did not complete within "
                          "requested timeout - context deadline exceeded", {"retryAfterSeconds": 0})
        self.endpoint = endpoint


def unreachable(endpoints: list[str], reason: str) -> EtcdUnavailableError:
    """No member answered: name them, and say how to start one (grpc's dial error wording)."""
    where = ", ".join(endpoints)
    return EtcdUnavailableError(
        f"rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while "
        f"dialing: dial tcp {where}: {reason}\" (no etcd answers at {where}; {START_HINT})",
        where)


def from_gateway(body: dict[str, Any], *, revision: int, compact_revision: int,
                 endpoint: str) -> StoreError:
    """The store error for one failed gateway call, keeping etcd's own message."""
    message = str(body.get("message") or body.get("error") or body)
    code = int(body.get("code") or 0)
    err: StoreError
    if "required revision has been compacted" in message:
        err = CompactedError(compact_revision)
    elif "required revision is a future revision" in message:
        err = FutureRevisionError(revision)
    elif "request is too large" in message:
        err = RequestTooLargeError(0, 0)
    elif code == INVALID_ARGUMENT:
        err = InvalidArgumentError(message)
    elif code in (DEADLINE_EXCEEDED, UNAVAILABLE) or "etcdserver:" in message:
        return EtcdUnavailableError(message, endpoint)
    else:
        return EtcdUnavailableError(f"etcd at {endpoint}: {message}", endpoint)
    err.args = (message,)  # etcd's text, "etcdserver: " prefix and all
    return err
