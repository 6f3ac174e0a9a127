"""The namespace controller: empty a namespace that is being deleted, then let it go
(kubernetes/kubernetes pkg/controller/namespace/namespace_controller.go and
deletion/namespaced_resources_deleter.go, deletion/status_condition_utils.go).

`kubectl delete namespace x` only marks x Terminating: it keeps the `kubernetes` entry in
spec.finalizers. This controller deletes everything namespaced in x, resource by resource,
reports what is left in the namespace's conditions, waits (pods may take their grace period),
and when x is empty removes `kubernetes` through the namespaces/finalize subresource. Then
the API server deletes the namespace itself.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.api.resources import ResourceInfo
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import SharedInformerFactory

__all__ = ["NamespaceController", "ResourcesRemainingError"]

FINALIZER = "kubernetes"
FINALIZER_ESTIMATE_SECONDS = 5  # how long to wait for content with finalizers
CONDITIONS = {  # type -> (ok reason, ok message), in upstream order
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions",
                                                    "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": ("ContentDeleted",
                                        "All content successfully deleted, may be waiting on finalization"),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


class ResourcesRemainingError(Exception):
    """Content is still going away; look again in about `estimate` seconds."""

    def __init__(self, estimate: int) -> None:
        super().__init__(f"some content remains in the namespace, estimate {estimate} seconds "
                         "before it is removed")
        self.estimate = estimate


class NamespaceController:
    NAME = "namespace-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 workers: int = 10, cost: float | None = None) -> None:
        self.client, self.clock = ctx.client, ctx.clock
        self.controller = Controller(self.NAME, self._sync, ctx.clock, workers=workers,
                                     cost=ctx.sync_cost if cost is None else cost,
                                     trace=ctx.trace, client=ctx.client)
        informer = informers.informer_for("namespaces")
        self.lister = informer.lister
        informer.add_event_handler(self.controller.handler())

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def _sync(self, key: str) -> None:
        try:
            self.delete(key)
        except ResourcesRemainingError as err:
            # namespace_controller.go: wait half the estimate, plus a second.
            self.controller.queue.add_after(key, err.estimate // 2 + 1)

    def delete(self, name: str) -> None:
        """namespacedResourcesDeleter.Delete, for one namespace."""
        try:
            ns = self.client.get("namespaces", name, "")
        except ApiError as err:
            if err.code == 404:
                return
            raise
        if not ns["metadata"].get("deletionTimestamp"):
            return
        if (ns.get("status") or {}).get("phase") != "Terminating":
            ns.setdefault("status", {})["phase"] = "Terminating"
            ns = self.client.update_status(ns)
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or ()):
            return  # finalized already
        estimate = self._delete_all_content(ns)
        if estimate > 0:
            raise ResourcesRemainingError(estimate)
        spec = ns.setdefault("spec", {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or () if f != FINALIZER]
        try:
            self.client.update(ns, subresource="finalize")
        except ApiError as err:
            if err.code != 404:
                raise

    def _namespaced_resources(self) -> list[ResourceInfo]:
        """Discovery: the built-in namespaced resources and those of every CRD."""
        infos = [info for info in self.client.resources if info.namespaced]
        for crd in self.client.list("customresourcedefinitions")["items"]:
            spec = crd.get("spec") or {}
            try:
                info = self.client.resource(f"{(spec.get('names') or {}).get('plural')}."
                                            f"{spec.get('group', '')}")
            except ApiError:
                continue  # not served (yet)
            if info.namespaced and info not in infos:
                infos.append(info)
        return infos

    def _delete_all_content(self, ns: Object) -> int:
        """Delete every namespaced object; return seconds to wait (0: the namespace is empty)."""
        name = ns["metadata"]["name"]
        estimate, errors = 0, []
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for info in self._namespaced_resources():
            try:
                estimate = max(estimate, self._estimate_graceful_termination(info, name))
                items = self.client.list(info.resource, name)["items"]
                for item in items:
                    if item["metadata"].get("deletionTimestamp"):
                        continue
                    try:
                        self.client.delete(info.resource, item["metadata"]["name"], name,
                                           propagation_policy="Background")
                    except ApiError as err:
                        if err.code != 404:
                            raise
                left = self.client.list(info.resource, name)["items"]
            except ApiError as err:
                errors.append(f"{info.qualified}: {err.message}")
                continue
            if left:
                remaining[f"{info.resource}.{info.group}"] = len(left)
                for item in left:
                    for f in item["metadata"].get("finalizers") or ():
                        finalizers[f] = finalizers.get(f, 0) + 1
                if not estimate:
                    estimate = FINALIZER_ESTIMATE_SECONDS
        self._update_conditions(ns, remaining, finalizers, errors)
        if errors:
            raise ApiError(500, "InternalError", "; ".join(errors))
        return estimate

    def _estimate_graceful_termination(self, info: ResourceInfo, namespace: str) -> int:
        """Pods take up to their terminationGracePeriodSeconds to go; nothing else waits."""
        if info.resource != "pods":
            return 0
        estimate = 0
        for pod in self.client.list("pods", namespace)["items"]:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            grace = pod["metadata"].get("deletionGracePeriodSeconds")
            if grace is None:
                grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
            estimate = max(estimate, int(grace or 0))
        return estimate

    def _update_conditions(self, ns: Object, remaining: dict[str, int], finalizers: dict[str, int],
                           errors: list[str]) -> None:
        failing: dict[str, tuple[str, str]] = {}
        if remaining:
            failing["NamespaceContentRemaining"] = ("SomeResourcesRemain", "Some resources are remaining: "
                                                    + ", ".join(sorted(f"{r} has {n} resource instances"
                                                                       for r, n in remaining.items())))
        if finalizers:
            failing["NamespaceFinalizersRemaining"] = (
                "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: "
                + ", ".join(sorted(f"{f} in {n} resource instances" for f, n in finalizers.items())))
        if errors:
            failing["NamespaceDeletionContentFailure"] = (
                "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(errors)} remaining: {', '.join(sorted(errors))}")
        status = ns.setdefault("status", {})
        old = {c.get("type"): c for c in status.get("conditions") or ()}
        conditions, changed = [], False
        for type_, (ok_reason, ok_message) in CONDITIONS.items():
            bad = type_ in failing
            reason, message = failing.get(type_, (ok_reason, ok_message))
            new = {"type": type_, "status": "True" if bad else "False",
                   "lastTransitionTime": rfc3339(self.clock.now), "reason": reason, "message": message}
            current = old.get(type_)
            if current is not None:
                if (current.get("status"), current.get("reason"), current.get("message")) == \
                        (new["status"], reason, message):
                    new = current
                else:
                    if current.get("status") == new["status"]:
                        new["lastTransitionTime"] = current.get("lastTransitionTime")
                    changed = True
            else:
                changed = True
            conditions.append(new)
        if changed:
            status["conditions"] = conditions
            ns.update(self.client.update_status(ns))
