"""The in-tree registry: plugin name -> class (pkg/scheduler/framework/plugins/registry.go).

A plugin class is built as cls(args, handle); which extension points it serves is read from
the methods it has (pre_filter, filter, post_filter, pre_score, score, normalize_score,
pre_bind, bind),
as Go checks which interfaces a plugin type implements.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubelab.scheduler.interface import Handle, Plugin
from kubelab.scheduler.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from kubelab.scheduler.plugins.default_binder import DefaultBinder
from kubelab.scheduler.plugins.default_preemption import DefaultPreemption
from kubelab.scheduler.plugins.image_locality import ImageLocality
from kubelab.scheduler.plugins.node_affinity import NodeAffinity
from kubelab.scheduler.plugins.node_name import NodeName
from kubelab.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubelab.scheduler.plugins.node_unschedulable import NodeUnschedulable
from kubelab.scheduler.plugins.pod_topology_spread import PodTopologySpread
from kubelab.scheduler.plugins.taint_toleration import TaintToleration
from kubelab.scheduler.plugins.volume_binding import VolumeBinding

__all__ = ["EXTENSION_POINTS", "UPSTREAM_ONLY", "PluginFactory", "extension_points", "in_tree_registry"]

PluginFactory = Callable[[Mapping[str, Any], Handle], Plugin]

# Config name of each extension point -> the method a plugin needs to serve it.
EXTENSION_POINTS = {
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "preBind": "pre_bind",
    "bind": "bind",
}

# Upstream plugins kubelab does not implement (yet). A configuration may disable them, as
# real configurations often do, but not enable them.
UPSTREAM_ONLY = frozenset({
    "PrioritySort", "SchedulingGates", "NodePorts", "VolumeRestrictions", "EBSLimits",
    "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeZone",
    "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures",
})


def in_tree_registry() -> dict[str, PluginFactory]:
    return {cls.name: cls for cls in (
        NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodeResourcesFit,
        PodTopologySpread, NodeResourcesBalancedAllocation, ImageLocality, DefaultBinder,
        VolumeBinding, DefaultPreemption)}


def extension_points(factory: object) -> list[str]:
    """The extension points (config names) a plugin class or instance serves."""
    return [point for point, method in EXTENSION_POINTS.items() if callable(getattr(factory, method, None))]
