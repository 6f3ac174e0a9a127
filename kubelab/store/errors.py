"""The store's errors, in etcd's own words.

The messages are etcd's, so that a learner who later reads an etcd log or a Kubernetes bug report
recognises them:
  - mvcc errors: etcd server/storage/mvcc/kvstore.go (ErrCompacted, ErrFutureRev)
  - request errors: etcd api/v3rpc/rpctypes/error.go (ErrGRPCEmptyKey, ErrGRPCDuplicateKey,
    ErrGRPCTooManyOps, ErrGRPCRequestTooLarge)
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
