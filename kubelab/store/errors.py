"""The store's errors, in etcd's own words.

The messages are etcd's, so that a learner who later reads an etcd log or a Kubernetes bug report
recognises them:
  - mvcc errors: etcd server/storage/mvcc/kvstore.go (ErrCompacted, ErrFutureRev)
  - request errors: etcd api/v3rpc/rpctypes/error.go (ErrGRPCEmptyKey, ErrGRPCDuplicateKey,
    ErrGRPCTooManyOps, ErrGRPCRequestTooLarge)
  - a cluster that cannot answer: etcd server/etcdserver/errors.go (ErrTimeout "etcdserver:
    request timed out", ErrNoLeader, ErrLeaderChanged)
The API server turns them into Kubernetes errors (CompactedError becomes 410 Gone, for example).
"""

from __future__ import annotations

__all__ = [
    "CompactedError",
    "FutureRevisionError",
    "InvalidArgumentError",
    "RequestTooLargeError",
    "SnapshotError",
    "StoreError",
    "UnavailableError",
]


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class CompactedError(StoreError):
    """The revision asked for is older than the compaction point: its history is gone."""

    def __init__(self, compact_revision: int) -> None:
        super().__init__("mvcc: required revision has been compacted")
        self.compact_revision = compact_revision


class FutureRevisionError(StoreError):
    """The revision asked for has not been written yet."""

    def __init__(self, current_revision: int) -> None:
        super().__init__("mvcc: required revision is a future revision")
        self.current_revision = current_revision


class InvalidArgumentError(StoreError, ValueError):
    """A malformed request (gRPC code InvalidArgument in etcd). Nothing was changed."""


class RequestTooLargeError(InvalidArgumentError):
    """The request is bigger than max_request_bytes (etcd's --max-request-bytes)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__("etcdserver: request is too large")
        self.size = size
        self.limit = limit


class SnapshotError(StoreError):
    """A snapshot file cannot be restored (wrong format, truncated or corrupted)."""


class UnavailableError(StoreError):
    """etcd could not serve the request: no quorum, no leader (server/etcdserver/errors.go).

    `latency` is how long the caller waited before it got the error (etcd's request timeout,
    ServerConfig.ReqTimeout: 5 s + 2 x the election timeout). The request may still be applied
    later, once the quorum is back, as with a real etcd.
    """

    def __init__(self, message: str = "etcdserver: request timed out", latency: float = 0.0) -> None:
        super().__init__(message)
        self.latency = latency
