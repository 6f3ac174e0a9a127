"""Cluster events: which changes to the cluster may make an unschedulable pod schedulable.

A pod that no node could take waits in the queue's unschedulablePods until something changes
that could help it. Which changes help depends on who rejected it: a pod turned away by
NodeResourcesFit waits for a node to be added or grow, or for a bound pod to go away; one turned
away by TaintToleration waits for a node's taints to change. Each plugin says which events it
cares about (EventsToRegister), optionally with a QueueingHint that looks closer.

Follows pkg/scheduler/framework/events.go (ActionType, ClusterEvent, NodeSchedulingPropertiesChange)
and the EventsToRegister of each in-tree plugin (noderesources/fit.go, tainttoleration,
nodeunschedulable, nodeaffinity, nodename, podtopologyspread/plugin.go, volumebinding/
volume_binding.go) with QueueingHints enabled, as they are by default. NodeResourcesFit's and
VolumeBinding's hints are implemented; for the other plugins a registered event always
requeues, which is what upstream does for a plugin that registers an event without a
QueueingHintFn.

Resources other than Node and Pod are named as upstream's framework.GVK names them
("PersistentVolumeClaim", "storage.k8s.io/StorageClass"); the scheduler runs an informer for
each one some plugin registers (eventhandlers.py). VolumeBinding's CSINode, CSIDriver and
CSIStorageCapacity events are not registered: kubelab serves no CSINode or
CSIStorageCapacity, and the CSIDriver hint only matters to storage capacity tracking.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubelab.scheduler.types import NodeInfo, Object, PodInfo

__all__ = [
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_DELETE",
    "FORCE_ACTIVATE",
    "IN_TREE_EVENTS",
    "NODE_ADD",
    "NODE_DELETE",
    "PERSISTENT_VOLUME",
    "PERSISTENT_VOLUME_CLAIM",
    "STORAGE_CLASS",
    "UNSCHEDULABLE_TIMEOUT",
    "ActionType",
    "ClusterEvent",
    "QueueingHint",
    "events_for_plugin",
    "node_scheduling_properties_change",
]

Obj = Any  # old/new objects of an event: a Kubernetes-shaped dict, or None


class ActionType(enum.IntFlag):
    """framework.ActionType: what happened to the object. Update is split into the kinds of
    update that matter to scheduling, so a plugin can ask for just the ones it needs."""

    Add = 1
    Delete = 2
    UpdateNodeAllocatable = 4
    UpdateNodeLabel = 8
    UpdateNodeTaint = 16  # spec.taints, and spec.unschedulable (cordon) counts as one too
    UpdateNodeCondition = 32
    UpdateNodeAnnotation = 64
    UpdatePodLabel = 128
    UpdatePodToleration = 256
    Update = 4 | 8 | 16 | 32 | 64 | 128 | 256
    All = 1 | 2 | Update


class QueueingHint(enum.Enum):
    Queue = "Queue"
    QueueSkip = "QueueSkip"


@dataclass(frozen=True)
class ClusterEvent:
    """An event. resource is "Node", "Pod", "AssignedPod", "UnscheduledPod", another kind's
    GVK (PERSISTENT_VOLUME_CLAIM, ...) or "*" (a wildcard that moves every waiting pod, e.g.
    UnschedulableTimeout). An update of another kind is ActionType.Update."""

    resource: str
    action: ActionType
    custom_label: str = ""

    @property
    def label(self) -> str:
        return self.custom_label or f"{self.resource}{self.action.name}"

    def is_wildcard(self) -> bool:
        return self.resource == "*"

    def matches(self, other: ClusterEvent) -> bool:
        """MatchClusterEvents: does this registration cover `other`? "Pod" covers both
        assigned and unscheduled pods."""
        if self.is_wildcard():
            return True
        same = self.resource == other.resource or (
            self.resource == "Pod" and other.resource in ("AssignedPod", "UnscheduledPod"))
        return same and bool(self.action & other.action)


NODE_ADD = ClusterEvent("Node", ActionType.Add)
NODE_DELETE = ClusterEvent("Node", ActionType.Delete)
ASSIGNED_POD_ADD = ClusterEvent("AssignedPod", ActionType.Add)
ASSIGNED_POD_DELETE = ClusterEvent("AssignedPod", ActionType.Delete)
UNSCHEDULABLE_TIMEOUT = ClusterEvent("*", ActionType.All, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent("*", ActionType.All, "ForceActivate")

# framework.GVK of the other kinds, and the API resource the scheduler watches for each.
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
PERSISTENT_VOLUME = "PersistentVolume"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
RESOURCE_FOR_GVK = {PERSISTENT_VOLUME_CLAIM: "persistentvolumeclaims",
                    PERSISTENT_VOLUME: "persistentvolumes", STORAGE_CLASS: "storageclasses"}

# A QueueingHintFn: (pod waiting, old object, new object) -> Queue or QueueSkip.
HintFn = Callable[[Object, Obj, Obj], QueueingHint]
Registration = tuple[ClusterEvent, "HintFn | None"]


def node_scheduling_properties_change(new: Object, old: Object) -> list[ClusterEvent]:
    """NodeSchedulingPropertiesChange: the kinds of update between two versions of a node,
    in upstream's order. A heartbeat that changes nothing of this yields no event at all."""
    events: list[ClusterEvent] = []
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    if bool(old_spec.get("unschedulable")) != bool(new_spec.get("unschedulable")):
        events.append(ClusterEvent("Node", ActionType.UpdateNodeTaint, "NodeSpecUnschedulableChange"))
    if old_status.get("allocatable") != new_status.get("allocatable"):
        events.append(ClusterEvent("Node", ActionType.UpdateNodeAllocatable, "NodeAllocatableChange"))
    if (old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"):
        events.append(ClusterEvent("Node", ActionType.UpdateNodeLabel, "NodeLabelChange"))
    if old_spec.get("taints") != new_spec.get("taints"):
        events.append(ClusterEvent("Node", ActionType.UpdateNodeTaint, "NodeTaintChange"))
    if _conditions(old_status) != _conditions(new_status):
        events.append(ClusterEvent("Node", ActionType.UpdateNodeCondition, "NodeConditionChange"))
    if (old.get("metadata") or {}).get("annotations") != (new.get("metadata") or {}).get("annotations"):
        events.append(ClusterEvent("Node", ActionType.UpdateNodeAnnotation, "NodeAnnotationChange"))
    return events


def _conditions(status: Mapping[str, Any]) -> dict[str, str]:
    # Only type -> status counts: heartbeat timestamps change every few seconds.
    return {c.get("type", ""): c.get("status", "") for c in status.get("conditions") or ()}


# --- NodeResourcesFit's QueueingHints (noderesources/fit.go) --------------------------------

def _fits_empty_node(pod: Object, node: Object) -> bool:
    """isFit: would the pod fit the node if nothing else ran there?"""
    info, requests = NodeInfo(node), PodInfo(pod).requests
    if info.allocatable.allowed_pod_number < 1:
        return False
    return all(value <= info.allocatable.get(name) for name, value in requests.items() if value > 0)


def _fit_after_node_change(pod: Object, old: Obj, new: Obj) -> QueueingHint:
    if new is None or not _fits_empty_node(pod, new):
        return QueueingHint.QueueSkip  # the node is too small for this pod anyway
    if old is None:
        return QueueingHint.Queue  # a new node that can hold the pod
    before, after = NodeInfo(old).allocatable, NodeInfo(new).allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return QueueingHint.Queue
    grew = any(value > 0 and after.get(name) > before.get(name)
               for name, value in PodInfo(pod).requests.items())
    return QueueingHint.Queue if grew else QueueingHint.QueueSkip


def _fit_after_pod_event(pod: Object, old: Obj, new: Obj) -> QueueingHint:
    if new is None and old is not None:  # a deletion frees resources only if it was bound
        bound = (old.get("spec") or {}).get("nodeName") or (old.get("status") or {}).get("nominatedNodeName")
        return QueueingHint.Queue if bound else QueueingHint.QueueSkip
    return QueueingHint.QueueSkip  # in-place scale-down is not modelled


# --- VolumeBinding's QueueingHints (volumebinding/volume_binding.go) -------------------------

def _claim_names(pod: Object) -> list[str]:
    """The claims a pod's volumes name: persistentVolumeClaim.claimName, and for a generic
    ephemeral volume the claim the ephemeral controller makes, <pod>-<volume>
    (ephemeral.VolumeClaimName)."""
    names = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if (volume.get("persistentVolumeClaim") or {}).get("claimName"):
            names.append(str(volume["persistentVolumeClaim"]["claimName"]))
        elif volume.get("ephemeral") is not None:
            names.append(f"{(pod.get('metadata') or {}).get('name', '')}-{volume.get('name', '')}")
    return names


def _volume_binding_after_claim_change(pod: Object, old: Obj, new: Obj) -> QueueingHint:
    """isSchedulableAfterPersistentVolumeClaimChange: a claim of the pod's own was created or
    changed (bound, most often); any other claim cannot help it."""
    meta = (new or {}).get("metadata") or {}
    if meta.get("namespace", "") != (pod.get("metadata") or {}).get("namespace", ""):
        return QueueingHint.QueueSkip
    return QueueingHint.Queue if meta.get("name") in _claim_names(pod) else QueueingHint.QueueSkip


def _volume_binding_after_class_change(pod: Object, old: Obj, new: Obj) -> QueueingHint:
    """isSchedulableAfterStorageClassChange: any new class, or a change of allowedTopologies
    (volumeBindingMode cannot change)."""
    if old is None:
        return QueueingHint.Queue
    if (old or {}).get("allowedTopologies") != (new or {}).get("allowedTopologies"):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


# Plugin name -> what it registers. Plugins without a Filter (scoring only) never reject a pod.
IN_TREE_EVENTS: dict[str, list[Registration]] = {
    "NodeUnschedulable": [(ClusterEvent("Node", ActionType.Add | ActionType.UpdateNodeTaint), None),
                          (ClusterEvent("Pod", ActionType.UpdatePodToleration), None)],
    "NodeName": [(ClusterEvent("Node", ActionType.Add), None)],
    "TaintToleration": [(ClusterEvent("Node", ActionType.Add | ActionType.UpdateNodeTaint), None),
                        (ClusterEvent("Pod", ActionType.UpdatePodToleration), None)],
    "NodeAffinity": [(ClusterEvent("Node", ActionType.Add | ActionType.UpdateNodeLabel), None)],
    "NodeResourcesFit": [
        (ClusterEvent("Pod", ActionType.Delete), _fit_after_pod_event),
        (ClusterEvent("Node", ActionType.Add | ActionType.UpdateNodeAllocatable), _fit_after_node_change)],
    "PodTopologySpread": [
        (ClusterEvent("Pod", ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration
                      | ActionType.Delete), None),
        (ClusterEvent("Node", ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel
                      | ActionType.UpdateNodeTaint), None)],
    "NodeResourcesBalancedAllocation": [], "ImageLocality": [], "DefaultBinder": [],
    # --- i31-storage --- (upstream's CSINode, CSIDriver and CSIStorageCapacity are left out)
    "VolumeBinding": [
        (ClusterEvent(STORAGE_CLASS, ActionType.Add | ActionType.Update), _volume_binding_after_class_change),
        (ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.Add | ActionType.Update),
         _volume_binding_after_claim_change),
        (ClusterEvent(PERSISTENT_VOLUME, ActionType.Add | ActionType.Update), None),
        (ClusterEvent("Node", ActionType.Add | ActionType.UpdateNodeLabel), None)],
}


def events_for_plugin(name: str, plugin: object) -> list[Registration]:
    """What a plugin registers. An out-of-tree plugin may define events_to_register(); one
    that does not is woken by every event (upstream registers all events for a plugin that
    does not implement EnqueueExtensions)."""
    if name in IN_TREE_EVENTS:
        return IN_TREE_EVENTS[name]
    own = getattr(plugin, "events_to_register", None)
    if callable(own):
        return list(own())
    return [(ClusterEvent("*", ActionType.All, "WildCard"), None)]
