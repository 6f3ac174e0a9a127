"""The Snapshot: the scheduler's picture of the cluster for one scheduling cycle.

pkg/scheduler/backend/cache/snapshot.go and cache.go. Upstream the cache is updated by the
informers and copied into a snapshot at the start of each cycle; here the Scheduler updates
one Snapshot in place (NodeInfo sums are incremental, so this is cheap) and passes it to
schedule_one.schedule_pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kubelab.scheduler.types import NodeInfo, Object, PodInfo, pod_key

__all__ = ["Snapshot"]

_TERMINAL_PHASES = ("Succeeded", "Failed")


class Snapshot:
    """The scheduler's view of the cluster: every node's NodeInfo, in a stable order.

    The Scheduler keeps one up to date from its informers (add/update/remove node and pod,
    and assume_pod when it has picked a host) and hands it to schedule_one.schedule_pod. Nodes
    are listed in the order they were added; upstream interleaves zones (node_tree.go).
    Pods in a terminal phase are not counted, as the scheduler's informer filters them out.
    """

    def __init__(self, nodes: Iterable[Object] = (), pods: Iterable[Object] = ()) -> None:
        self.node_info_list: list[NodeInfo] = []
        self.node_info_map: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}  # pod key -> node name
        self._waiting: dict[str, dict[str, PodInfo]] = {}  # pods whose node we have not seen
        self._image_nodes: dict[str, int] = {}  # image name -> number of nodes that have it
        for node in nodes:
            self.add_node(node)
        for pod in pods:
            self.add_pod(pod)

    @classmethod
    def from_node_infos(cls, node_infos: Iterable[NodeInfo]) -> Snapshot:
        snapshot = cls()
        for info in node_infos:
            snapshot.node_info_list.append(info)
            snapshot.node_info_map[info.name] = info
            snapshot._count_images(info, 1)
            for key in info.pods:
                snapshot._pod_node[key] = info.name
        return snapshot

    def __len__(self) -> int:
        return len(self.node_info_list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_info_list)

    def get(self, name: str) -> NodeInfo:
        try:
            return self.node_info_map[name]
        except KeyError:
            raise KeyError(f'nodeinfo not found for node name "{name}"') from None

    def num_nodes_with_image(self, image_name: str) -> int:
        return self._image_nodes.get(image_name, 0)

    def _count_images(self, info: NodeInfo, sign: int) -> None:
        for image_name in info.images:
            self._image_nodes[image_name] = self._image_nodes.get(image_name, 0) + sign

    def add_node(self, node: Object) -> NodeInfo:
        name = (node.get("metadata") or {}).get("name", "")
        if name in self.node_info_map:
            return self.update_node(node)
        info = NodeInfo(node)
        self.node_info_list.append(info)
        self.node_info_map[name] = info
        self._count_images(info, 1)
        for pod_info in self._waiting.pop(name, {}).values():
            info.add_pod_info(pod_info)
        return info

    def update_node(self, node: Object) -> NodeInfo:
        info = self.get((node.get("metadata") or {}).get("name", ""))
        self._count_images(info, -1)
        info.set_node(node)
        self._count_images(info, 1)
        return info

    def remove_node(self, name: str) -> None:
        info = self.node_info_map.pop(name, None)
        if info is not None:
            self.node_info_list.remove(info)
            self._count_images(info, -1)
            for key in info.pods:
                self._pod_node.pop(key, None)

    def add_pod(self, pod: Object) -> PodInfo | None:
        """Count an assigned pod on its node. A pod without spec.nodeName is the queue's
        business, not the cache's: it is ignored (an assumed copy stays counted)."""
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            return None
        if (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            self.remove_pod(pod)
            return None
        info = PodInfo(pod)
        self.assume_pod(info, node_name)
        return info

    def assume_pod(self, info: PodInfo, node_name: str) -> None:
        """Count a pod on node_name before the API says so (the cache's AssumePod)."""
        self.remove_pod(info.pod)
        self._pod_node[info.key] = node_name
        target = self.node_info_map.get(node_name)
        if target is None:
            self._waiting.setdefault(node_name, {})[info.key] = info
        else:
            target.add_pod_info(info)

    def update_pod(self, old: Object | None, new: Object) -> None:
        if old is not None and pod_key(old) != pod_key(new):
            self.remove_pod(old)
        self.add_pod(new)

    def remove_pod(self, pod: Object) -> None:
        key = pod_key(pod)
        node_name = self._pod_node.pop(key, None)
        if node_name is None:
            return
        info = self.node_info_map.get(node_name)
        if info is not None and key in info.pods:
            info.remove_pod(info.pods[key])
        waiting = self._waiting.get(node_name)
        if waiting is not None:
            waiting.pop(key, None)
