"""A DaemonSet's rolling update and its history (kubernetes/kubernetes
pkg/controller/daemon/update.go).

Each version of the pod template is kept as an apps/v1 ControllerRevision named
`<daemonset>-<hash>`, whose data is the template as a strategic merge patch
(`{"spec": {"template": {..., "$patch": "replace"}}}`, getPatch) and whose revision number
grows with each new template; `kubectl rollout history ds/...` and `rollout undo` read them.
The current revision's hash is the pods' `controller-revision-hash` label, so a pod is up to
date when its label names the current revision (IsPodUpdated).

rollingUpdate, without surge (maxSurge 0): delete old pods, at most maxUnavailable of the
desired nodes unavailable at once (an old pod that is unavailable anyway may always go); the
manage loop then creates the new pod on each emptied node. With surge: create a new pod beside
an old one on at most maxSurge nodes at once (at once where the old pod is unavailable), and
delete the old pod once the new one is available.

Nodes are visited in name order where upstream ranges over a Go map (in random order), so a
run replays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import deep_copy, get_controller_of_no_copy
from kubelab.client.client import Client
from kubelab.client.indexer import Indexer
from kubelab.controllers.controller_utils import is_pod_available, new_controller_ref
from kubelab.controllers.daemon.util import (
    CONTROLLER_REVISION_HASH,
    get_template_generation,
    is_pod_updated,
    node_should_run_daemon_pod,
    surge_count,
    unavailable_count,
)
from kubelab.controllers.deployment.util import compute_hash

if TYPE_CHECKING:
    from kubelab.controllers.daemon.daemon_controller import DaemonSetsController

__all__ = ["DaemonHistory", "find_updated_pods_on_node", "get_patch", "rolling_update"]


def get_patch(ds: Object) -> Object:
    """getPatch: the template alone, as a patch that replaces the whole template."""
    template = deep_copy((ds.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def find_updated_pods_on_node(ds: Object, pods: list[Object], hash_: str
                              ) -> tuple[Object | None, Object | None, bool]:
    """findUpdatedPodsOnNode: (the new pod, the old pod, ok); not ok when a node has two of
    either kind (the manage loop must clean it up first)."""
    new = old = None
    generation = get_template_generation(ds)
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        if is_pod_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def updated_desired_node_counts(ds: Object, nodes: list[Object],
                                node_to_daemon_pods: dict[str, list[Object]]) -> tuple[int, int, int]:
    """updatedDesiredNodeCounts: (maxSurge, maxUnavailable, desired), scaled to the nodes that
    should run the pod; each such node without pods gets an empty entry. Both zero: one
    unavailable, as the default."""
    desired = 0
    for node in nodes:
        if node_should_run_daemon_pod(node, ds)[0]:
            desired += 1
            node_to_daemon_pods.setdefault(node["metadata"]["name"], [])
    max_unavailable, max_surge = unavailable_count(ds, desired), surge_count(ds, desired)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return max_surge, max_unavailable, desired


def rolling_update(dsc: DaemonSetsController, ds: Object, nodes: list[Object], hash_: str) -> None:
    node_to_daemon_pods = dsc.get_nodes_to_daemon_pods(ds)
    max_surge, max_unavailable, desired = updated_desired_node_counts(ds, nodes, node_to_daemon_pods)
    min_ready, now = int(ds["spec"].get("minReadySeconds") or 0), dsc.clock.now
    by_name = {n["metadata"]["name"]: n for n in nodes}

    def available(pod: Object) -> bool:
        return is_pod_available(pod, min_ready, now)

    if max_surge == 0:
        num_unavailable = 0
        allowed_replacements: list[str] = []
        candidates: list[str] = []
        for _, pods in sorted(node_to_daemon_pods.items()):
            new, old, ok = find_updated_pods_on_node(ds, pods, hash_)
            if not ok or (old is None) == (new is None):
                num_unavailable += 1  # the manage loop creates or deletes here
            elif new is not None:
                num_unavailable += 0 if available(new) else 1
            elif old is not None and not available(old):
                allowed_replacements.append(old["metadata"]["name"])
            elif old is not None and num_unavailable < max_unavailable:
                candidates.append(old["metadata"]["name"])
        remaining = max(0, min(max_unavailable - num_unavailable, len(candidates)))
        dsc.sync_nodes(ds, allowed_replacements + candidates[:remaining], [], hash_)
        return

    old_pods_to_delete: list[str] = []
    should_not_run_pods_to_delete: list[str] = []
    candidate_new_nodes: list[str] = []
    allowed_new_nodes: list[str] = []
    num_surge = num_available = 0
    for node_name, pods in sorted(node_to_daemon_pods.items()):
        new, old, ok = find_updated_pods_on_node(ds, pods, hash_)
        if not ok:
            num_surge += 1
            continue
        if old is not None:
            num_available += 1 if available(old) else 0
        elif new is not None:
            num_available += 1 if available(new) else 0
        if old is None:
            continue  # the manage loop handles this node
        node = by_name.get(node_name)
        if new is None:
            should_run = node is not None and node_should_run_daemon_pod(node, ds)[0]
            if not available(old):
                if not should_run:
                    old_pods_to_delete.append(old["metadata"]["name"])
                else:
                    allowed_new_nodes.append(node_name)
            elif not should_run:
                should_not_run_pods_to_delete.append(old["metadata"]["name"])
            elif num_surge < max_surge:
                candidate_new_nodes.append(node_name)
        elif not available(new):
            num_surge += 1  # waiting for the new pod to become available
        else:
            old_pods_to_delete.append(old["metadata"]["name"])
    # With surge the owner expects 100% availability: a pod on a node that no longer wants it
    # goes only when a pod elsewhere is available.
    deletable = min(num_available - desired, len(should_not_run_pods_to_delete))
    if deletable > 0:
        old_pods_to_delete += should_not_run_pods_to_delete[:deletable]
    remaining = max(0, min(max_surge - num_surge, len(candidate_new_nodes)))
    dsc.sync_nodes(ds, old_pods_to_delete, allowed_new_nodes + candidate_new_nodes[:remaining], hash_)


class DaemonHistory:
    """constructHistory, snapshot, dedupCurHistories and cleanupHistory over the
    ControllerRevisions cache."""

    def __init__(self, client: Client, indexer: Indexer) -> None:
        self.client, self.indexer = client, indexer

    def controlled_histories(self, ds: Object) -> list[Object]:
        """controlledHistories: the revisions of the DaemonSet's namespace it controls, and the
        orphans its selector matches (adopted)."""
        try:
            selector = selector_from_label_selector(ds["spec"].get("selector"))
        except ParseError:
            return []
        uid, namespace = ds["metadata"]["uid"], ds["metadata"].get("namespace")
        out = []
        for history in self.indexer.list():
            if history["metadata"].get("namespace") != namespace:
                continue
            ref = get_controller_of_no_copy(history)
            if ref is not None:
                if ref.get("uid") == uid:
                    out.append(history)
            elif selector.matches(history["metadata"].get("labels") or {}) and \
                    not ds["metadata"].get("deletionTimestamp"):
                adopted = deep_copy(history)
                adopted["metadata"]["ownerReferences"] = [new_controller_ref(ds)]
                out.append(self.client.update(adopted))
        return sorted(out, key=lambda h: (h.get("revision", 0), h["metadata"]["name"]))

    def construct_history(self, ds: Object) -> tuple[Object, list[Object]]:
        """(the current revision, the old ones)."""
        current: list[Object] = []
        old: list[Object] = []
        patch = get_patch(ds)
        for history in self.controlled_histories(ds):
            (current if history.get("data") == patch else old).append(history)
        revision = max((h.get("revision", 0) for h in old), default=0) + 1
        if not current:
            return self.snapshot(ds, revision), old
        cur = max(current, key=lambda h: h.get("revision", 0))
        for duplicate in current:
            if duplicate is not cur:
                self._delete(duplicate)
        if cur.get("revision", 0) < revision:
            cur = deep_copy(cur)
            cur["revision"] = revision
            cur = self.client.update(cur)
        return cur, old

    def snapshot(self, ds: Object, revision: int) -> Object:
        collision_count = (ds.get("status") or {}).get("collisionCount")
        hash_ = compute_hash((ds.get("spec") or {}).get("template") or {}, collision_count)
        meta = ds["metadata"]
        labels = {**(((ds["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}),
                  CONTROLLER_REVISION_HASH: hash_}
        history_meta: Object = {"name": f"{meta['name']}-{hash_}",
                                "namespace": meta.get("namespace", "default"),
                                "labels": labels, "ownerReferences": [new_controller_ref(ds)]}
        if meta.get("annotations"):
            history_meta["annotations"] = dict(meta["annotations"])
        history = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": history_meta,
                   "data": get_patch(ds), "revision": revision}
        try:
            return self.client.create(history)
        except ApiError as err:
            if err.code != 409:
                raise
        existing = self.client.get("controllerrevisions", history_meta["name"],
                                   history_meta["namespace"])
        owner = get_controller_of_no_copy(existing)
        if existing.get("data") == history["data"] and owner is not None and \
                owner.get("uid") == meta["uid"]:
            return existing
        # A hash collision: count it, so that the next sync hashes differently.
        fresh = self.client.get("daemonsets", meta["name"], history_meta["namespace"])
        fresh.setdefault("status", {})["collisionCount"] = (collision_count or 0) + 1
        self.client.update_status(fresh)
        raise ApiError(409, "AlreadyExists", f"found a hash collision for DaemonSet "
                       f'"{meta["name"]}" - bumping collisionCount to {(collision_count or 0) + 1} '
                       "to resolve it")

    def cleanup_history(self, ds: Object, old: list[Object], pods: list[Object]) -> None:
        """cleanupHistory: beyond revisionHistoryLimit, delete the oldest revisions no live
        pod still runs."""
        limit = int(ds["spec"].get("revisionHistoryLimit", 10))
        to_kill = len(old) - limit
        if to_kill <= 0:
            return
        live = {(p["metadata"].get("labels") or {}).get(CONTROLLER_REVISION_HASH) for p in pods}
        for history in sorted(old, key=lambda h: h.get("revision", 0)):
            if to_kill <= 0:
                break
            if (history["metadata"].get("labels") or {}).get(CONTROLLER_REVISION_HASH) in live:
                continue
            self._delete(history)
            to_kill -= 1

    def _delete(self, history: Object) -> None:
        meta = history["metadata"]
        try:
            self.client.delete("controllerrevisions", meta["name"], meta.get("namespace", "default"))
        except ApiError as err:
            if err.code != 404:
                raise
