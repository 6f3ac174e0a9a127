"""What the grader lets a submission touch: the public API a real component would have, no more.

Each entry names a class and the methods and attributes a submission's code may use on an object
of that class when a check hands it one (a Client may create, get, list, ... but never reach
`client.api`, the API server behind it). Checks add their own small facades with share().
"""

from __future__ import annotations

from collections.abc import Iterable

from kubelab.grading.remote import Policy

__all__ = ["POLICY", "share"]

POLICY = Policy({
    # etcd (notebook 01)
    "kubelab.store.kvstore:Store": ("range", "put", "delete_range", "txn", "watch", "revision",
                                    "compact_revision"),
    "kubelab.store.watch:Watcher": ("cancel", "id", "canceled"),
    # the client machinery (notebooks 03 onwards)
    "kubelab.client.client:Client": ("create", "get", "list", "update", "update_status", "patch",
                                     "delete", "bind", "watch", "get_scale", "scale"),
    "kubelab.apiserver.storage.watch_cache:CacheWatcher": ("stop",),
    "kubelab.sim.clock:Clock": ("now", "call_later", "call_at"),
    "kubelab.sim.clock:Timer": ("cancel", "when", "cancelled"),
    "kubelab.client.listers:GenericLister": ("list", "get", "by_namespace"),
    "kubelab.client.listers:GenericNamespaceLister": ("list", "get"),
    "kubelab.client.delta_fifo:DeltaFIFO": ("add", "update", "delete", "replace", "resync"),
    "kubelab.client.events:EventRecorder": ("event",),
    # admission (notebook 02): what upstream plugins may read
    "kubelab.apiserver.server:APIServer": ("get", "namespace_phase"),
    # the scheduling framework (notebook 04)
    "kubelab.scheduler.types:NodeInfo": ("node", "name", "labels", "taints", "no_schedule_taints",
                                         "prefer_no_schedule_taints", "unschedulable", "allocatable",
                                         "requested", "non_zero_requested", "images"),
    "kubelab.scheduler.interface:CycleState": ("read", "write", "delete", "__getitem__",
                                               "__setitem__", "__contains__"),
})


def share(cls: type | str, names: Iterable[str]) -> None:
    """Let submissions use these methods and attributes of cls ("module:qualname" or a class)."""
    POLICY.share(cls, names)
