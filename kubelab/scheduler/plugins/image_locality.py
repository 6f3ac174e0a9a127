"""ImageLocality: prefer nodes that already have the pod's images.

pkg/scheduler/framework/plugins/imagelocality/image_locality.go. For each container and init
container whose image the node has, add the image's size scaled by how many nodes have it
(size * nodesWithImage / allNodes, so an image on one node out of 100 weighs little: this
avoids the "node heating" of sending every pod to the one node with the image). The sum is
clamped to [23 MiB, 1000 MiB * number of containers] and mapped linearly onto 0..100.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelab.scheduler.interface import MAX_NODE_SCORE, CycleState, Handle, StateNotFoundError
from kubelab.scheduler.types import NodeInfo, Object, normalized_image_name

__all__ = ["MAX_CONTAINER_THRESHOLD", "MIN_THRESHOLD", "ImageLocality", "calculate_priority"]

_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB
_STATE_KEY = "ImageLocality"


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = "ImageLocality"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        del args  # no configuration
        self.handle = handle

    def _pod_images(self, pod: Object) -> tuple[list[tuple[str, float]], int]:
        """Each container's image with its spread (the share of nodes that have it), and the
        number of containers. Worked out once per cycle and kept in the CycleState."""
        spec = pod.get("spec") or {}
        containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
        snapshot = self.handle.snapshot
        images = [normalized_image_name(c.get("image") or "") for c in containers]
        return [(i, snapshot.num_nodes_with_image(i) / len(snapshot)) for i in images], len(containers)

    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> int:
        if not node_info.images:
            return 0
        try:
            images, num_containers = state.read(_STATE_KEY)
        except StateNotFoundError:
            images, num_containers = self._pod_images(pod)
            state.write(_STATE_KEY, (images, num_containers))
        sum_scores = 0
        for image, spread in images:
            size = node_info.images.get(image)
            if size is not None:
                sum_scores += int(size * spread)  # scaledImageScore
        return calculate_priority(sum_scores, num_containers)

