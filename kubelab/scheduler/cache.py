"""The scheduler's cache: every node and what is already requested on it.

pkg/scheduler/backend/cache/cache.go. The informers tell the cache about nodes and bound pods;
the scheduler itself tells it about pods it has chosen a node for but not yet seen bound
("assumed" pods). Assuming is what lets the scheduler decide the next pod at once, without
waiting for the API server to confirm the last binding: the chosen node's resources are counted
as taken from the moment of the decision.

A pod's life in the cache:

    assume_pod (decision made) --bind ok, informer sees it bound--> add_pod: confirmed
               \\--bind failed--> forget_pod: resources released at once
    add_pod (a pod some other way bound, e.g. seen in the first LIST) -> update_pod -> remove_pod

Assumed pods used to expire 30 s after their binding finished. Upstream now never expires
them (durationToExpireAssumedPod = 0 in pkg/scheduler/scheduler.go, after issue #106361: expiry
raced with slow bindings and let two pods take one slot); `ttl` keeps the old behaviour
available, off by default.

Upstream copies changed NodeInfos into a separate Snapshot at the start of each cycle, because
informer goroutines keep changing the cache while a cycle runs. Here nothing runs during a
cycle, so the cache keeps its NodeInfos in the Snapshot itself and update_snapshot() is free.
"""

from __future__ import annotations

from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import NodeInfo, Object, PodInfo, pod_key

__all__ = ["Cache", "CacheError"]


class CacheError(Exception):
    """An event the cache cannot apply (upstream logs these and carries on)."""


def _name(pod: Object) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _node(pod: Object) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


class Cache:
    def __init__(self, ttl: float = 0.0) -> None:
        self.ttl = ttl  # seconds an assumed pod lives after its binding finished; 0 = forever
        self.snapshot = Snapshot()
        self.pod_states: dict[str, Object] = {}  # pod key (uid) -> the pod as cached
        self.assumed_pods: set[str] = set()
        self._deadlines: dict[str, float] = {}  # assumed pod -> when it expires (ttl > 0)

    # --- nodes ---------------------------------------------------------------------------------

    def add_node(self, node: Object) -> NodeInfo:
        return self.snapshot.add_node(node)

    def update_node(self, old: Object | None, new: Object) -> NodeInfo:
        return self.snapshot.add_node(new)  # add_node updates a node it already has

    def remove_node(self, node: Object) -> None:
        name = str((node.get("metadata") or {}).get("name", ""))
        self.snapshot.remove_node(name)
        # The node is no longer a candidate, but its pods still exist: keep them counted so
        # that, if the node comes back before they are gone, its resources are not offered twice.
        for pod in self.pod_states.values():
            if _node(pod) == name:
                self.snapshot.assume_pod(PodInfo(pod), name)

    # --- pods the scheduler decided --------------------------------------------------------------

    def assume_pod(self, pod: Object) -> None:
        """Count pod (its spec.nodeName set to the chosen node) on that node right away."""
        key = pod_key(pod)
        if key in self.pod_states:
            raise CacheError(f"pod {key}({_name(pod)}) is in the cache, so can't be assumed")
        self.snapshot.assume_pod(PodInfo(pod), _node(pod))
        self.pod_states[key] = pod
        self.assumed_pods.add(key)

    def finish_binding(self, pod: Object, now: float) -> None:
        """The binding call returned: start the assumed pod's expiry clock (if ttl > 0)."""
        key = pod_key(pod)
        if key in self.assumed_pods and self.ttl > 0:
            self._deadlines[key] = now + self.ttl

    def forget_pod(self, pod: Object) -> None:
        """Undo assume_pod when the binding failed: the node's resources are free again."""
        key = pod_key(pod)
        current = self.pod_states.get(key)
        if current is None:
            return  # already gone from the cache
        if _node(current) != _node(pod):
            raise CacheError(f"pod {key}({_name(pod)}) was assumed on {_node(pod)} but assigned to "
                             f"{_node(current)}")
        if key not in self.assumed_pods:
            raise CacheError(f"pod {key}({_name(pod)}) is not assumed, so it cannot be removed or forgotten")
        self._remove(key, current)

    def is_assumed_pod(self, pod: Object) -> bool:
        return pod_key(pod) in self.assumed_pods

    def get_pod(self, pod: Object) -> Object | None:
        return self.pod_states.get(pod_key(pod))

    def cleanup_assumed_pods(self, now: float) -> list[Object]:
        """Expire assumed pods whose binding finished more than ttl ago; returns them."""
        expired = [self.pod_states[k] for k, deadline in self._deadlines.items() if now >= deadline]
        for pod in expired:
            self._remove(pod_key(pod), pod)
        return expired

    # --- pods the informer reports bound -------------------------------------------------------

    def add_pod(self, pod: Object) -> None:
        key = pod_key(pod)
        if key in self.assumed_pods:
            # Confirmed. If it landed elsewhere than we assumed (another scheduler won a
            # race), count it where it really is.
            self._remove(key, self.pod_states[key])
            self._add(key, pod)
        elif key not in self.pod_states:
            self._add(key, pod)
        else:
            raise CacheError(f"pod {key}({_name(pod)}) was already in added state")

    def update_pod(self, old: Object, new: Object) -> None:
        key = pod_key(old)
        current = self.pod_states.get(key)
        if current is None:
            raise CacheError(f"pod {key}({_name(old)}) is not added to scheduler cache, so cannot be updated")
        if key in self.assumed_pods:
            raise CacheError(f"assumed pod {key}({_name(old)}) should not be updated")
        self._remove(key, current)
        self._add(key, new)

    def remove_pod(self, pod: Object) -> None:
        key = pod_key(pod)
        current = self.pod_states.get(key)
        if current is None:
            raise CacheError(f"pod {key}({_name(pod)}) is not found in scheduler cache, so cannot be "
                             "removed from it")
        self._remove(key, current)

    def _add(self, key: str, pod: Object) -> None:
        self.snapshot.add_pod(pod)
        self.pod_states[key] = pod

    def _remove(self, key: str, pod: Object) -> None:
        self.snapshot.remove_pod(pod)
        self.pod_states.pop(key, None)
        self.assumed_pods.discard(key)
        self._deadlines.pop(key, None)

    # --- for the scheduling cycle ----------------------------------------------------------------

    def update_snapshot(self) -> Snapshot:
        """The view the next cycle schedules against (see the module docstring)."""
        return self.snapshot

    def __repr__(self) -> str:
        return (f"<Cache nodes={len(self.snapshot)} pods={len(self.pod_states)} "
                f"assumed={len(self.assumed_pods)}>")
