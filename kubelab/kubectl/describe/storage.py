"""`kubectl describe` for PersistentVolumes, PersistentVolumeClaims and StorageClasses
(k8s.io/kubectl pkg/describe/describe.go: describePersistentVolume, printVolumeNodeAffinity,
printHostPathVolumeSource, describePersistentVolumeClaim with printPersistentVolumeClaim and
the pods it is "Used By", describeStorageClass)."""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import (
    Describer,
    annotations_multiline,
    describe_events,
    labels_multiline,
    rfc1123z,
    since,
)
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["STORAGE_DESCRIBERS"]

BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
_SHORT = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
          ("ReadWriteOncePod", "RWOP"))


def _modes(modes: Any) -> str:
    """storageutil.GetAccessModesAsString."""
    return ",".join(short for mode, short in _SHORT if mode in (modes or []))


def _class(obj: Object) -> str:
    return ((obj["metadata"].get("annotations") or {}).get(BETA_CLASS)
            or str((obj.get("spec") or {}).get("storageClassName") or ""))


def _status(w: PrefixWriter, obj: Object, now: float) -> None:
    deleted = obj["metadata"].get("deletionTimestamp")
    if deleted:
        w.write(0, f"Status:\tTerminating (lasts {since(deleted, now)})\n")
    else:
        w.write(0, f"Status:\t{(obj.get('status') or {}).get('phase', '')}\n")


def _finalizers(obj: Object) -> str:
    return "[" + " ".join(obj["metadata"].get("finalizers") or []) + "]"


def _format_map(values: dict[str, str] | None) -> str:
    """labels.FormatLabels: k=v,... by key, "<none>" when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((values or {}).items())) or "<none>"


def describe_persistent_volume(client: Client, pv: Object, events: list[Object], now: float) -> str:
    meta, spec = pv["metadata"], pv.get("spec") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Finalizers:\t{_finalizers(pv)}\n")
    w.write(0, f"StorageClass:\t{_class(pv)}\n")
    _status(w, pv, now)
    ref = spec.get("claimRef")
    w.write(0, f"Claim:\t{ref.get('namespace', '')}/{ref.get('name', '')}\n" if ref else "Claim:\t\n")
    w.write(0, f"Reclaim Policy:\t{spec.get('persistentVolumeReclaimPolicy', '')}\n")
    w.write(0, f"Access Modes:\t{_modes(spec.get('accessModes'))}\n")
    if spec.get("volumeMode"):
        w.write(0, f"VolumeMode:\t{spec['volumeMode']}\n")
    w.write(0, f"Capacity:\t{(spec.get('capacity') or {}).get('storage', '')}\n")
    required = (spec.get("nodeAffinity") or {}).get("required")
    w.write(0, "Node Affinity:\t")
    if not required:
        w.write(0, "<none>\n")
    else:
        w.write(0, "\n")
        w.write(1, "Required Terms:\t")
        terms = required.get("nodeSelectorTerms") or []
        if not terms:
            w.write(1, "<none>\n")
        else:
            w.write(0, "\n")
            for i, term in enumerate(terms):
                exprs = [f"{e.get('key', '')} {str(e.get('operator', '')).lower()} "
                         f"[{', '.join(e.get('values') or [])}]" for e in term.get("matchExpressions") or []]
                w.write(2, f"Term {i}:\t{exprs[0] if exprs else '<none>'}\n")
                for expr in exprs[1:]:
                    w.write(2, f"\t{expr}\n")
    w.write(0, f"Message:\t{(pv.get('status') or {}).get('message', '')}\n")
    w.write(0, "Source:\n")
    if spec.get("hostPath") is not None:
        host = spec["hostPath"]
        w.write(2, "Type:\tHostPath (bare host directory volume)\n"
                f"    Path:\t{host.get('path', '')}\n    HostPathType:\t{host.get('type', '')}\n")
    elif spec.get("local") is not None:
        w.write(2, "Type:\tLocalVolume (a persistent volume backed by local storage on a node)\n"
                f"    Path:\t{spec['local'].get('path', '')}\n")
    elif spec.get("csi") is not None:
        csi = spec["csi"]
        w.write(2, "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n"
                f"    Driver:\t{csi.get('driver', '')}\n    VolumeHandle:\t{csi.get('volumeHandle', '')}\n")
    describe_events(w, events, now)
    return w.text()


def _used_by(client: Client, pvc: Object) -> list[str]:
    """getPodsForPVC: the pods of the namespace that name the claim in a volume."""
    namespace, name = pvc["metadata"].get("namespace", ""), pvc["metadata"]["name"]
    return sorted(p["metadata"]["name"] for p in client.list("pods", namespace)["items"]
                  if any((v.get("persistentVolumeClaim") or {}).get("claimName") == name
                         for v in (p.get("spec") or {}).get("volumes") or []))


def describe_persistent_volume_claim(client: Client, pvc: Object, events: list[Object],
                                     now: float) -> str:
    meta, spec, status = pvc["metadata"], pvc.get("spec") or {}, pvc.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"StorageClass:\t{_class(pvc)}\n")
    _status(w, pvc, now)
    w.write(0, f"Volume:\t{spec.get('volumeName', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Finalizers:\t{_finalizers(pvc)}\n")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = _modes(status.get("accessModes"))
        capacity = str((status.get("capacity") or {}).get("storage", ""))
    w.write(0, f"Capacity:\t{capacity}\n")
    w.write(0, f"Access Modes:\t{modes}\n")
    if spec.get("volumeMode"):
        w.write(0, f"VolumeMode:\t{spec['volumeMode']}\n")
    pods = _used_by(client, pvc)
    w.write(0, "Used By:\t" + ("\n\t".join(pods) if pods else "<none>") + "\n")
    conditions = (pvc.get("status") or {}).get("conditions") or []
    if conditions:  # --- hpacsi --- a resize under way
        w.write(0, "Conditions:\n")
        w.write(1, "Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n")
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in conditions:
            w.write(1, f"{c.get('type', '')} \t{c.get('status', '')} \t"
                       f"{rfc1123z(c.get('lastProbeTime'))} \t{rfc1123z(c.get('lastTransitionTime'))} "
                       f"\t{c.get('reason', '')} \t{c.get('message', '')}\n")
    describe_events(w, events, now)
    return w.text()


def describe_storage_class(client: Client, sc: Object, events: list[Object], now: float) -> str:
    meta = sc["metadata"]
    annotations = meta.get("annotations") or {}
    default = "storageclass.kubernetes.io/is-default-class"
    is_default = "Yes" if "true" in (annotations.get(default),
                                     annotations.get("storageclass.beta.kubernetes.io/is-default-class")) \
        else "No"
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"IsDefaultClass:\t{is_default}\n")
    w.write(0, f"Annotations:\t{_format_map(annotations)}\n")
    w.write(0, f"Provisioner:\t{sc.get('provisioner', '')}\n")
    w.write(0, f"Parameters:\t{_format_map(sc.get('parameters'))}\n")
    expansion = sc.get("allowVolumeExpansion")
    w.write(0, f"AllowVolumeExpansion:\t{'<unset>' if expansion is None else str(bool(expansion))}\n")
    options = sc.get("mountOptions") or []
    w.write(0, "MountOptions:\t<none>\n" if not options else
            "MountOptions:\n" + "".join(f"  {o}\n" for o in options))
    if sc.get("reclaimPolicy"):
        w.write(0, f"ReclaimPolicy:\t{sc['reclaimPolicy']}\n")
    if sc.get("volumeBindingMode"):
        w.write(0, f"VolumeBindingMode:\t{sc['volumeBindingMode']}\n")
    describe_events(w, events, now)
    return w.text()


STORAGE_DESCRIBERS: dict[str, Describer] = {
    "persistentvolumes": describe_persistent_volume,
    "persistentvolumeclaims": describe_persistent_volume_claim,
    "storageclasses": describe_storage_class,
}
