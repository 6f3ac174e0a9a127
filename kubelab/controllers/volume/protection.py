"""The protection controllers: a claim in use by a pod, or a volume bound to a claim, is not
deleted under them (kubernetes pkg/controller/volume/pvcprotection/pvc_protection_controller.go
and pvprotection/pv_protection_controller.go).

The finalizers kubernetes.io/pvc-protection and kubernetes.io/pv-protection are put on every new
claim and volume by the StorageObjectInUseProtection admission plugin
(kubelab/apiserver/admission/storageclass.py); these controllers add one that is missing, and
take it off once the object is being deleted and nothing needs it any more: no pod that is not
finished (Succeeded or Failed) names the claim, the volume is no longer Bound. Until then
`kubectl delete pvc` leaves the claim Terminating.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object, deep_copy
from kubelab.api.errors import ApiError
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory

__all__ = ["PVC_PROTECTION", "PV_PROTECTION", "PVCProtectionController", "PVProtectionController",
           "pod_uses_claim"]

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"


def pod_uses_claim(pod: Object, claim_name: str) -> bool:
    """podUsesPVC: a pod that is not finished and names the claim in a volume."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    return any(((v.get("persistentVolumeClaim") or {}).get("claimName")) == claim_name
               for v in (pod.get("spec") or {}).get("volumes") or [] if isinstance(v, dict))


class _Protection:
    finalizer = ""

    def __init__(self, ctx: ComponentContext, name: str) -> None:
        self.client = ctx.client
        self.controller = Controller(name, self.sync, ctx.clock, trace=ctx.trace, client=ctx.client,
                                     cost=ctx.sync_cost)

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def sync(self, key: str) -> None:
        raise NotImplementedError

    def _set_finalizer(self, obj: Object, present: bool) -> None:
        new = deep_copy(obj)
        finalizers = [f for f in new["metadata"].get("finalizers") or [] if f != self.finalizer]
        if present:
            finalizers.append(self.finalizer)
        new["metadata"]["finalizers"] = finalizers
        try:
            self.client.update(new)
        except ApiError as err:
            if err.code not in (404, 409):
                raise

    def _reconcile(self, obj: Object, in_use: bool) -> None:
        has = self.finalizer in (obj["metadata"].get("finalizers") or [])
        if obj["metadata"].get("deletionTimestamp"):
            if has and not in_use:
                self._set_finalizer(obj, False)
        elif not has:
            self._set_finalizer(obj, True)


class PVCProtectionController(_Protection):
    NAME = "persistentvolumeclaim-protection-controller"
    finalizer = PVC_PROTECTION

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        super().__init__(ctx, "pvcprotection")
        claims = informers.informer_for("persistentvolumeclaims")
        self.claims, self.pods = claims.indexer, informers.informer_for("pods").indexer
        claims.add_event_handler(self.controller.handler())
        informers.informer_for("pods").add_event_handler(ResourceEventHandler(
            self._pod_event, self._pod_update, self._pod_event))

    def _pod_update(self, old: Any, new: Any) -> None:
        self._pod_event(old)
        self._pod_event(new)

    def _pod_event(self, obj: Any) -> None:
        """A pod's claims may be free now (podAddedDeletedUpdated)."""
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not isinstance(pod, dict):
            return
        namespace = pod["metadata"].get("namespace", "")
        for v in (pod.get("spec") or {}).get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName") if isinstance(v, dict) else None
            if claim:
                self.controller.queue.add(f"{namespace}/{claim}")

    def sync(self, key: str) -> None:
        claim, exists = self.claims.get_by_key(key)
        if not exists:
            return
        namespace, name = claim["metadata"].get("namespace", ""), claim["metadata"]["name"]
        in_use = any(p["metadata"].get("namespace") == namespace and pod_uses_claim(p, name)
                     for p in self.pods.list())
        self._reconcile(claim, in_use)


class PVProtectionController(_Protection):
    NAME = "persistentvolume-protection-controller"
    finalizer = PV_PROTECTION

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        super().__init__(ctx, "pvprotection")
        volumes = informers.informer_for("persistentvolumes")
        self.volumes = volumes.indexer
        volumes.add_event_handler(self.controller.handler())

    def sync(self, key: str) -> None:
        volume, exists = self.volumes.get_by_key(key)
        if exists:
            self._reconcile(volume, (volume.get("status") or {}).get("phase") == "Bound")
