"""How the scheduler hears about the world: informer events into its cache and queue.

pkg/scheduler/eventhandlers.go. One pod informer (all namespaces, every pod that is not finished:
`status.phase!=Succeeded,status.phase!=Failed`, as newPodInformer in pkg/scheduler/scheduler.go)
and one node informer. A pod with spec.nodeName is the cache's business (it takes room on a node); a pod
without one, addressed to one of our profiles by spec.schedulerName, is the queue's. The moment
a pod is bound, its update moves it from one to the other.

Every change that might help a waiting pod is turned into a ClusterEvent and offered to the
queue, which asks the plugins that rejected each pod whether it is worth another try. For the
other kinds some plugin registers events of (VolumeBinding: claims, volumes, classes),
addAllEventHandlers starts one informer each, whose handlers only offer events to the queue
(buildEvtResHandler), for the actions registered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler
from kubelab.scheduler.cache import CacheError
from kubelab.scheduler.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_DELETE,
    RESOURCE_FOR_GVK,
    ActionType,
    ClusterEvent,
    node_scheduling_properties_change,
)
from kubelab.scheduler.types import Object

if TYPE_CHECKING:
    from kubelab.scheduler.scheduler import Scheduler

__all__ = ["POD_FIELD_SELECTOR", "add_all_event_handlers", "assigned_pod"]

POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
ASSIGNED_POD_LABEL_UPDATE = ClusterEvent("AssignedPod", ActionType.UpdatePodLabel)


def assigned_pod(pod: Object) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def add_all_event_handlers(sched: Scheduler) -> None:
    sched.pod_informer.add_event_handler(ResourceEventHandler(
        on_add=lambda obj: add_pod(sched, obj),
        on_update=lambda old, new: update_pod(sched, old, new),
        on_delete=lambda obj: delete_pod(sched, obj)))
    sched.node_informer.add_event_handler(ResourceEventHandler(
        on_add=lambda obj: add_node(sched, obj),
        on_update=lambda old, new: update_node(sched, old, new),
        on_delete=lambda obj: delete_node(sched, obj)))
    for gvk, actions in sorted(registered_gvks(sched).items()):
        informer = sched.informers.informer_for(RESOURCE_FOR_GVK[gvk])
        informer.add_event_handler(build_evt_res_handler(sched, gvk, actions))


def registered_gvks(sched: Scheduler) -> dict[str, ActionType]:
    """The gvkMap: every other kind some plugin of some profile registers, with the union of
    the actions registered for it."""
    gvks: dict[str, ActionType] = {}
    for plugins in sched.queue.hint_map.values():
        for registrations in plugins.values():
            for event, _ in registrations:
                if event.resource in RESOURCE_FOR_GVK:
                    gvks[event.resource] = gvks.get(event.resource, ActionType(0)) | event.action
    return gvks


def build_evt_res_handler(sched: Scheduler, gvk: str, actions: ActionType) -> ResourceEventHandler:
    """buildEvtResHandler: each action registered for the kind becomes a ClusterEvent."""
    def on_add(obj: Object) -> None:
        if actions & ActionType.Add:
            sched.queue.move_all_to_active_or_backoff_queue(ClusterEvent(gvk, ActionType.Add), None, obj)

    def on_update(old: Object, new: Object) -> None:
        if actions & ActionType.Update:
            sched.queue.move_all_to_active_or_backoff_queue(ClusterEvent(gvk, ActionType.Update), old, new)

    def on_delete(obj: Any) -> None:
        if actions & ActionType.Delete:
            old = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            sched.queue.move_all_to_active_or_backoff_queue(ClusterEvent(gvk, ActionType.Delete), old, None)

    return ResourceEventHandler(on_add=on_add, on_update=on_update, on_delete=on_delete)


def _responsible(sched: Scheduler, pod: Object) -> bool:
    return (pod.get("spec") or {}).get("schedulerName", "") in sched.profiles


def _cache_error(sched: Scheduler, pod: Object, err: CacheError) -> None:
    # Upstream logs these (utilruntime.HandleError) and carries on; so do we, in the trace.
    meta = pod.get("metadata") or {}
    sched.ctx.trace.record(sched.ctx.name, "cache-error", f"pods/{meta.get('namespace')}/{meta.get('name')}",
                           error=str(err))


# --- pods ---------------------------------------------------------------------------------------

def add_pod(sched: Scheduler, pod: Object) -> None:
    if assigned_pod(pod):
        add_assigned_pod_to_cache(sched, pod)
    elif _responsible(sched, pod):
        sched.queue.add(pod)


def update_pod(sched: Scheduler, old: Object, new: Object) -> None:
    if assigned_pod(old):
        update_assigned_pod_in_cache(sched, old, new)
    elif assigned_pod(new):
        # The binding happened: to the cache it is an add (which confirms an assumed pod).
        add_assigned_pod_to_cache(sched, new)
        if _responsible(sched, old):
            sched.queue.delete(old)  # it should not be queued, but somebody else may have bound it
    elif _responsible(sched, old):
        update_pod_in_scheduling_queue(sched, old, new)


def delete_pod(sched: Scheduler, obj: Any) -> None:
    if isinstance(obj, DeletedFinalStateUnknown):
        pod = obj.obj
        if not isinstance(pod, dict):
            return
        # The last known state may be stale: clean up both places.
        if sched.cache.get_pod(pod) is not None and not sched.cache.is_assumed_pod(pod):
            delete_assigned_pod_from_cache(sched, pod)
        if _responsible(sched, pod):
            delete_pod_from_scheduling_queue(sched, pod)
        return
    if assigned_pod(obj):
        delete_assigned_pod_from_cache(sched, obj)
    elif _responsible(sched, obj):
        delete_pod_from_scheduling_queue(sched, obj)


def add_assigned_pod_to_cache(sched: Scheduler, pod: Object) -> None:
    try:
        sched.cache.add_pod(pod)
    except CacheError as err:
        _cache_error(sched, pod, err)
    sched.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_ADD, None, pod)


def update_assigned_pod_in_cache(sched: Scheduler, old: Object, new: Object) -> None:
    try:
        sched.cache.update_pod(old, new)
    except CacheError as err:
        _cache_error(sched, new, err)
    if (old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"):
        sched.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_LABEL_UPDATE, old, new)


def delete_assigned_pod_from_cache(sched: Scheduler, pod: Object) -> None:
    try:
        sched.cache.remove_pod(pod)
    except CacheError as err:
        _cache_error(sched, pod, err)
    sched.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, pod, None)


def update_pod_in_scheduling_queue(sched: Scheduler, old: Object, new: Object) -> None:
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    if old_meta.get("resourceVersion") == new_meta.get("resourceVersion"):
        return  # a resync carries the same object: queueing it twice would schedule it twice
    if sched.cache.is_assumed_pod(new):
        # Its binding is under way; only a deletion starting needs handling.
        if new_meta.get("deletionTimestamp") and not old_meta.get("deletionTimestamp"):
            handle_assumed_pod_deletion(sched, new)
        return
    sched.queue.update(old, new)


def delete_pod_from_scheduling_queue(sched: Scheduler, pod: Object) -> None:
    sched.queue.delete(pod)
    if sched.cache.is_assumed_pod(pod):
        handle_assumed_pod_deletion(sched, pod)


def handle_assumed_pod_deletion(sched: Scheduler, pod: Object) -> None:
    """An assumed pod was deleted before its binding: free its node's resources now."""
    assumed = sched.cache.get_pod(pod)
    if assumed is None:
        return
    try:
        sched.cache.forget_pod(assumed)
    except CacheError as err:
        _cache_error(sched, pod, err)
    sched.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)


# --- nodes --------------------------------------------------------------------------------------

def add_node(sched: Scheduler, node: Object) -> None:
    sched.cache.add_node(node)
    sched.queue.move_all_to_active_or_backoff_queue(NODE_ADD, None, node)


def update_node(sched: Scheduler, old: Object, new: Object) -> None:
    sched.cache.update_node(old, new)
    # Only changes that may make a node more welcoming count: a heartbeat yields no event.
    for event in node_scheduling_properties_change(new, old):
        sched.queue.move_all_to_active_or_backoff_queue(event, old, new)


def delete_node(sched: Scheduler, obj: Any) -> None:
    node = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
    if not isinstance(node, dict):
        return
    sched.queue.move_all_to_active_or_backoff_queue(NODE_DELETE, node, None)
    sched.cache.remove_node(node)
