"""The etcd stand-in: an MVCC key-value store with txn, watch, compaction and snapshots.

Only the API server talks to it (docs/ARCHITECTURE.md section 1). Read the modules in this order:
kv.py (what is stored), index.py (versions by key), kvstore.py (revisions, put, range, txn,
compact), txn.py (compares and checks), watch.py (watchers), disk.py (the slow-disk model),
snapshot.py (backup and restore).

    store = Store(clock)
    store.put("/registry/pods/default/web-1", b'{"kind":"Pod"}')      # revision 2
    rv = store.range("/registry/pods/default/web-1").kvs[0].mod_revision
    store.txn([Compare.mod_revision("/registry/pods/default/web-1", "=", rv)],
              [PutRequest("/registry/pods/default/web-1", b"...")],
              [RangeRequest("/registry/pods/default/web-1")])
    store.watch("/registry/pods/", prefix=True, callback=print)
"""

from kubelab.store.backend import Backend, WatchHandle
from kubelab.store.errors import (
    CompactedError,
    FutureRevisionError,
    InvalidArgumentError,
    RequestTooLargeError,
    SnapshotError,
    StoreError,
    UnavailableError,
)
from kubelab.store.kv import Event, EventType, KeyValue, WatchResponse
from kubelab.store.kvstore import Store
from kubelab.store.rpc import (
    Compare,
    DeleteRequest,
    DeleteResponse,
    Op,
    PutRequest,
    PutResponse,
    RangeRequest,
    RangeResponse,
    Response,
    TxnResponse,
    prefix_end,
)
from kubelab.store.txn import DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_TXN_OPS
from kubelab.store.watch import Watcher

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_MAX_TXN_OPS",
    "Backend",
    "CompactedError",
    "Compare",
    "DeleteRequest",
    "DeleteResponse",
    "Event",
    "EventType",
    "FutureRevisionError",
    "InvalidArgumentError",
    "KeyValue",
    "Op",
    "PutRequest",
    "PutResponse",
    "RangeRequest",
    "RangeResponse",
    "RequestTooLargeError",
    "Response",
    "SnapshotError",
    "Store",
    "StoreError",
    "TxnResponse",
    "UnavailableError",
    "WatchHandle",
    "WatchResponse",
    "Watcher",
    "prefix_end",
]
