"""`kubectl describe` for StatefulSets and ReplicationControllers (k8s.io/kubectl
pkg/describe/describe.go: describeStatefulSet, describeVolumeClaimTemplates,
describeReplicationController), registered in apps.py's DESCRIBERS."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.labels import selector_from_label_selector
from kubelab.client.client import Client
from kubelab.kubectl.describe.apps import describe_pod_template
from kubelab.kubectl.describe.describe import (
    annotations_multiline,
    describe_events,
    labels_multiline,
    rfc1123z,
)
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["describe_replication_controller", "describe_stateful_set"]


def _pod_phases(client: Client, owner: Object, selector: str) -> str:
    """getPodStatusForController: the phases of the pods the owner controls."""
    phases = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    meta = owner["metadata"]
    for pod in client.list("pods", meta.get("namespace", "default"), label_selector=selector)["items"]:
        ref = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        phase = (pod.get("status") or {}).get("phase", "")
        if ref is not None and ref.get("uid") == meta.get("uid") and phase in phases:
            phases[phase] += 1
    return (f"{phases['Running']} Running / {phases['Pending']} Waiting / "
            f"{phases['Succeeded']} Succeeded / {phases['Failed']} Failed")


def _volume_claim_templates(w: PrefixWriter, templates: list[Object]) -> None:
    """describeVolumeClaimTemplates."""
    if not templates:
        w.write(0, "Volume Claims:\t<none>\n")
        return
    w.write(0, "Volume Claims:\n")
    for claim in templates:
        meta, spec = claim.get("metadata") or {}, claim.get("spec") or {}
        w.write(1, f"Name:\t{meta.get('name', '')}\n")
        w.write(1, f"StorageClass:\t{spec.get('storageClassName') or ''}\n")
        labels_multiline(w, "Labels", meta.get("labels"), "  ")
        labels_multiline(w, "Annotations", meta.get("annotations"), "  ")
        capacity = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        w.write(1, f"Capacity:\t{capacity if capacity is not None else '<default>'}\n")
        w.write(1, f"Access Modes:\t[{' '.join(spec.get('accessModes') or [])}]\n")


def describe_stateful_set(client: Client, sts: Object, events: list[Object], now: float) -> str:
    meta, spec, status = sts["metadata"], sts.get("spec") or {}, sts.get("status") or {}
    selector = str(selector_from_label_selector(spec.get("selector")))
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    w.write(0, f"Selector:\t{selector}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('replicas', 0)} total\n")
    strategy = spec.get("updateStrategy") or {}
    w.write(0, f"Update Strategy:\t{strategy.get('type', '')}\n")
    rolling = strategy.get("rollingUpdate")
    if rolling is not None and rolling.get("partition") is not None:
        w.write(1, f"Partition:\t{rolling['partition']}\n")
        if rolling.get("maxUnavailable") is not None:
            w.write(1, f"MaxUnavailable:\t{rolling['maxUnavailable']}\n")
    w.write(0, f"Pods Status:\t{_pod_phases(client, sts, selector)}\n")
    describe_pod_template(w, spec.get("template") or {})
    _volume_claim_templates(w, spec.get("volumeClaimTemplates") or [])
    describe_events(w, events, now)
    return w.text()


def describe_replication_controller(client: Client, rc: Object, events: list[Object],
                                    now: float) -> str:
    meta, spec, status = rc["metadata"], rc.get("spec") or {}, rc.get("status") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"Selector:\t{selector}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Replicas:\t{status.get('replicas', 0)} current / {spec.get('replicas', 1)} desired\n")
    w.write(0, f"Pods Status:\t{_pod_phases(client, rc, selector)}\n")
    describe_pod_template(w, spec.get("template") or {})
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}\n")
    describe_events(w, events, now)
    return w.text()
