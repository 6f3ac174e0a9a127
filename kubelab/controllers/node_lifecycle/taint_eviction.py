"""The taint eviction controller: pods leave a node with a NoExecute taint they do not tolerate.

Follows pkg/controller/tainteviction/taint_eviction.go (the "taint manager"). For every pod on a
node with NoExecute taints it matches the pod's tolerations against the taints
(component-helpers, v1helper.GetMatchingTolerations):
- a taint no toleration covers: the pod is deleted at once;
- all covered: the pod is deleted after the smallest tolerationSeconds of the tolerations used
  (forever if none sets one). The API server's DefaultTolerationSeconds admission gives every
  pod 300 s for node.kubernetes.io/not-ready and /unreachable: that is the "five minutes" before
  pods leave a dead node.
When the taints go away (the node is back) pending deletions are cancelled. Events, source
taint-eviction-controller: `Marking for deletion Pod default/web-1` and `Cancelling deletion of
Pod default/web-1` (reason TaintManagerEviction). A deleted pod first gets the condition
DisruptionTarget (reason DeletionByTaintManager).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.client.component import ComponentContext
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.events import NORMAL
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.sim.clock import Timer

__all__ = ["TaintEvictionController", "get_matching_tolerations", "get_min_toleration_time",
           "tolerates_taint"]

NODE_NAME_INDEX = "spec.nodeName"
RETRIES = 5


def tolerates_taint(toleration: Object, taint: Object) -> bool:
    """Toleration.ToleratesTaint (k8s.io/api core/v1/toleration.go)."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True  # an empty key with Exists matches every taint
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def get_matching_tolerations(taints: list[Object], tolerations: list[Object]) -> tuple[bool, list[Object]]:
    """v1helper.GetMatchingTolerations: are all taints tolerated, and by which tolerations."""
    used: list[Object] = []
    for taint in taints:
        matching = [t for t in tolerations if tolerates_taint(t, taint)]
        if not matching:
            return False, []
        used += matching
    return True, used


def get_min_toleration_time(tolerations: list[Object]) -> float:
    """Seconds until eviction: 0 with no toleration, -1 (forever) if none sets tolerationSeconds."""
    if not tolerations:
        return 0.0
    seconds = [t["tolerationSeconds"] for t in tolerations if t.get("tolerationSeconds") is not None]
    if not seconds:
        return -1.0
    return max(0.0, float(min(seconds)))


def no_execute_taints(node: Object | None) -> list[Object]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"]


class TaintEvictionController:
    NAME = "taint-eviction-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.recorder = ctx.recorder(self.NAME)
        self.node_informer = informers.informer_for("nodes")
        self.pod_informer = informers.informer_for("pods")
        if NODE_NAME_INDEX not in self.pod_informer.indexer.get_indexers():
            self.pod_informer.indexer.add_indexers({NODE_NAME_INDEX: _node_name_index})
        self.tainted_nodes: dict[str, list[Object]] = {}
        self.evictions: dict[str, tuple[float, float, Timer]] = {}  # pod key -> (created, fire, timer)
        self.deleted = 0
        self.running = False
        self.node_informer.add_event_handler(ResourceEventHandler(
            lambda n: self._node_updated(None, n), self._node_updated,
            lambda n: self._node_updated(_obj(n), None)))
        self.pod_informer.add_event_handler(ResourceEventHandler(
            lambda p: self._pod_updated(None, p), self._pod_updated,
            lambda p: self._pod_updated(_obj(p), None)))

    def run(self) -> None:
        self.running = True
        for node in self.node_informer.indexer.list():
            self._node_updated(None, node)

    def stop(self) -> None:
        self.running = False
        for _created, _fire, timer in self.evictions.values():
            timer.cancel()
        self.evictions.clear()

    # ------------------------------------------------------------------ handlers

    def _node_updated(self, old: Object | None, new: Object | None) -> None:
        if not self.running:
            return
        if old is not None and new is not None and no_execute_taints(old) == no_execute_taints(new):
            return
        self.handle_node_update(((new or old) or {}).get("metadata", {}).get("name", ""))

    def _pod_updated(self, old: Object | None, new: Object | None) -> None:
        if not self.running:
            return
        if old is not None and new is not None and \
                old["spec"].get("tolerations") == new["spec"].get("tolerations") and \
                old["spec"].get("nodeName") == new["spec"].get("nodeName"):
            return
        pod = new or old or {}
        self.handle_pod_update(_key(pod), (pod.get("spec") or {}).get("nodeName", ""))

    def handle_pod_update(self, key: str, node_name: str) -> None:
        pod, exists = self.pod_informer.indexer.get_by_key(key)
        if not exists:
            self.cancel_work(key)
            return
        if not node_name or pod["spec"].get("nodeName") != node_name:
            return
        taints = self.tainted_nodes.get(node_name)
        if taints is not None:
            self.process_pod_on_node(key, pod["spec"].get("tolerations") or [], taints, self.clock.now)

    def handle_node_update(self, name: str) -> None:
        node, exists = self.node_informer.indexer.get_by_key(name)
        if not exists:
            self.tainted_nodes.pop(name, None)
            return
        taints = no_execute_taints(node)
        if taints:
            self.tainted_nodes[name] = taints
        else:
            self.tainted_nodes.pop(name, None)
        pods = self.pod_informer.indexer.by_index(NODE_NAME_INDEX, name)
        now = self.clock.now
        for pod in sorted(pods, key=_key):
            if not taints:
                self.cancel_work(_key(pod))
            else:
                self.process_pod_on_node(_key(pod), pod["spec"].get("tolerations") or [], taints, now)

    # ------------------------------------------------------------------ the timed work

    def process_pod_on_node(self, key: str, tolerations: list[Object], taints: list[Object],
                            now: float) -> None:
        if not taints:
            self.cancel_work(key)
        all_tolerated, used = get_matching_tolerations(taints, tolerations)
        if not all_tolerated:
            self.cancel_work(key)
            self.add_work(key, now, now)
            return
        seconds = get_min_toleration_time(used)
        if seconds < 0:
            self.cancel_work(key)  # tolerated forever
            return
        start, trigger = now, now + seconds
        scheduled = self.evictions.get(key)
        if scheduled is not None:
            start = scheduled[0]
            if start + seconds < trigger:
                return  # the deletion already scheduled comes first
            self.cancel_work(key)
        self.add_work(key, start, start + seconds)

    def add_work(self, key: str, created: float, fire_at: float) -> None:
        if key in self.evictions:
            return
        timer = self.clock.call_at(fire_at, self._delete_pod, key, background=True)
        self.evictions[key] = (created, fire_at, timer)

    def cancel_work(self, key: str) -> None:
        scheduled = self.evictions.pop(key, None)
        if scheduled is not None:
            scheduled[2].cancel()
            self._event(key, f"Cancelling deletion of Pod {key}")

    def _delete_pod(self, key: str) -> None:
        self.evictions.pop(key, None)
        if not self.running:
            return
        self._event(key, f"Marking for deletion Pod {key}")
        namespace, name = key.split("/", 1)
        for _ in range(RETRIES):
            try:
                pod = self.client.get("pods", name, namespace)
                conditions = [c for c in (pod.get("status") or {}).get("conditions") or []
                              if c.get("type") != "DisruptionTarget"]
                conditions.append({"type": "DisruptionTarget", "status": "True",
                                   "reason": "DeletionByTaintManager",
                                   "message": "Taint manager: deleting due to NoExecute taint",
                                   "lastTransitionTime": rfc3339(self.clock.now), "lastProbeTime": None})
                self.client.patch("pods", name, {"status": {"conditions": conditions}}, namespace,
                                  subresource="status")
                self.client.delete("pods", name, namespace)
                self.deleted += 1
                return
            except ApiError as err:
                if err.code == 404:
                    return
                self.ctx.trace.record(self.NAME, "delete-failed", f"pods/{key}", reason=err.reason)

    def _event(self, key: str, message: str) -> None:
        namespace, name = key.split("/", 1)
        self.recorder.event({"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": name, "namespace": namespace}},
                            NORMAL, "TaintManagerEviction", message)


def _obj(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


def _key(pod: Object) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"


def _node_name_index(pod: Any) -> list[str]:
    node = ((pod.get("spec") or {}) if isinstance(pod, dict) else {}).get("nodeName")
    return [str(node)] if node else []
