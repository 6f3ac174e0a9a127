"""`kubectl describe` for nodes, Deployments, ReplicaSets and DaemonSets (pkg/describe/describe.go:
describeNode, describeNodeResource, describeNodeLease, describeDeployment, describeReplicaSet,
describeDaemonSet,
DescribePodTemplate), and the choice of describer per resource."""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.duration import human_duration
from kubelab.api.errors import ApiError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import parse_time
from kubelab.api.quantity import Quantity, parse_quantity
from kubelab.api.resources import ResourceInfo
from kubelab.client.client import Client
from kubelab.kubectl.describe.autoscaling import describe_horizontal_pod_autoscaler
from kubelab.kubectl.describe.batch_policy import describe_cron_job, describe_pod_disruption_budget
from kubelab.kubectl.describe.describe import (
    Describer,
    annotations_multiline,
    controlled_by,
    describe_containers,
    describe_events,
    describe_generic,
    describe_pod,
    labels_multiline,
    rfc1123z,
    since,
    tolerations_multiline,
)
from kubelab.kubectl.describe.storage import STORAGE_DESCRIBERS
from kubelab.kubectl.tabwriter import PrefixWriter
from kubelab.kubectl.taint import to_string

__all__ = ["DESCRIBERS", "describe_object"]

ZERO = parse_quantity("0")


def describe_object(client: Client, info: ResourceInfo, obj: Object, now: float) -> str:
    """The describer for the object's kind, with the events about it (searchEvents)."""
    meta = obj.get("metadata") or {}
    selector = f"involvedObject.name={meta.get('name', '')}"
    events = [e for e in client.list("events", meta.get("namespace", "") if info.namespaced else "",
                                     field_selector=selector)["items"]
              if (e.get("involvedObject") or {}).get("kind") == info.kind]
    describer: Describer = DESCRIBERS.get(info.resource, describe_generic)
    return describer(client, obj, events, now)


def describe_node(client: Client, node: Object, events: list[Object], now: float) -> str:
    meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    roles = sorted(k.split("/", 1)[1] for k in meta.get("labels") or {}
                   if k.startswith("node-role.kubernetes.io/"))
    w.write(0, f"Roles:\t{','.join(roles) or '<none>'}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    taints = sorted(spec.get("taints") or [], key=lambda t: f"{t.get('effect', '')},{t.get('key', '')}")
    w.write(0, "Taints:\t" + ("\n\t".join(map(to_string, taints)) or "<none>") + "\n")
    w.write(0, f"Unschedulable:\t{'true' if spec.get('unschedulable') else 'false'}\n")
    try:
        lease = client.get("leases", meta["name"], "kube-node-lease").get("spec") or {}
        w.write(0, "Lease:\n")
        w.write(1, f"HolderIdentity:\t{lease.get('holderIdentity') or '<unset>'}\n")
        for title, key in (("AcquireTime", "acquireTime"), ("RenewTime", "renewTime")):
            w.write(1, f"{title}:\t{rfc1123z(lease[key]) if lease.get(key) else '<unset>'}\n")
    except ApiError as err:
        w.write(0, f"Lease:\tFailed to get lease: {err}\n")
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')} \t{c.get('status')} \t{rfc1123z(c.get('lastHeartbeatTime'))} \t"
                       f"{rfc1123z(c.get('lastTransitionTime'))} \t{c.get('reason', '')} \t"
                       f"{c.get('message', '')}\n")
    w.write(0, "Addresses:\n")
    for address in status.get("addresses") or ():
        w.write(1, f"{address.get('type')}:\t{address.get('address')}\n")
    for title in ("capacity", "allocatable"):
        if status.get(title):
            w.write(0, f"{title.capitalize()}:\n")
            for name in sorted(status[title]):
                w.write(0, f"  {name}:\t{status[title][name]}\n")
    info = status.get("nodeInfo") or {}
    w.write(0, "System Info:\n")
    for title, key in (("Machine ID", "machineID"), ("System UUID", "systemUUID"), ("Boot ID", "bootID"),
                       ("Kernel Version", "kernelVersion"), ("OS Image", "osImage"),
                       ("Operating System", "operatingSystem"), ("Architecture", "architecture"),
                       ("Container Runtime Version", "containerRuntimeVersion"),
                       ("Kubelet Version", "kubeletVersion")):
        w.write(0, f"  {title}:\t{info.get(key, '')}\n")
    if spec.get("podCIDR"):
        w.write(0, f"PodCIDR:\t{spec['podCIDR']}\n")
    if spec.get("podCIDRs"):
        w.write(0, f"PodCIDRs:\t{','.join(spec['podCIDRs'])}\n")
    pods = [p for p in client.list("pods", "", field_selector=f"spec.nodeName={meta['name']}")["items"]
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    _describe_node_resource(w, node, pods, now)
    describe_events(w, events, now)
    return w.text()


def _pod_totals(pod: Object, kind: str) -> dict[str, Quantity]:
    """resourcehelper.PodRequests / PodLimits: the containers' sum, at least each init
    container's amount, plus the pod overhead."""
    spec = pod.get("spec") or {}
    total: dict[str, Quantity] = {}
    for c in spec.get("containers") or ():
        for name, value in ((c.get("resources") or {}).get(kind) or {}).items():
            total[name] = total.get(name, ZERO) + parse_quantity(value)
    for c in spec.get("initContainers") or ():
        for name, value in ((c.get("resources") or {}).get(kind) or {}).items():
            total[name] = max(total.get(name, ZERO), parse_quantity(value))
    for name, value in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, ZERO) + parse_quantity(value)
    return total


def _percent(used: Quantity, of: Any, milli: bool) -> int:
    whole = parse_quantity(of or "0")
    base = whole.milli_value() if milli else whole.value()
    return int((used.milli_value() if milli else used.value()) / base * 100) if base else 0


def _describe_node_resource(w: PrefixWriter, node: Object, pods: list[Object], now: float) -> None:
    status = node.get("status") or {}
    allocatable = status.get("allocatable") or status.get("capacity") or {}
    w.write(0, f"Non-terminated Pods:\t({len(pods)} in total)\n")
    w.write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
    w.write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
    reqs: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    for pod in pods:
        req, lim = _pod_totals(pod, "requests"), _pod_totals(pod, "limits")
        cells = [f"{q} ({_percent(q, allocatable.get(name), name == 'cpu')}%)"
                 for q, name in ((req.get("cpu", ZERO), "cpu"), (lim.get("cpu", ZERO), "cpu"),
                                 (req.get("memory", ZERO), "memory"), (lim.get("memory", ZERO), "memory"))]
        w.write(1, f"{pod['metadata'].get('namespace', '')}\t{pod['metadata']['name']}\t\t"
                   + "\t".join(cells) + f"\t{since(pod['metadata'].get('creationTimestamp'), now)}\n")
        for total, amounts in ((reqs, req), (limits, lim)):
            for name, q in amounts.items():
                total[name] = total.get(name, ZERO) + q
    w.write(0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
    w.write(1, "Resource\tRequests\tLimits\n")
    w.write(1, "--------\t--------\t------\n")
    for name in ("cpu", "memory", "ephemeral-storage"):
        used, cap = reqs.get(name, ZERO), limits.get(name, ZERO)
        w.write(1, f"{name}\t{used} ({_percent(used, allocatable.get(name), name == 'cpu')}%)\t"
                   f"{cap} ({_percent(cap, allocatable.get(name), name == 'cpu')}%)\n")


def describe_pod_template(w: PrefixWriter, template: Object) -> None:
    """DescribePodTemplate: a Deployment's or ReplicaSet's pods, without statuses."""
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    w.write(0, "Pod Template:\n")
    labels_multiline(w, "  Labels", meta.get("labels"))
    if meta.get("annotations"):
        annotations_multiline(w, "  Annotations", meta["annotations"])
    if spec.get("serviceAccountName"):
        w.write(1, f"Service Account:\t{spec['serviceAccountName']}\n")
    if spec.get("initContainers"):
        describe_containers(w, "Init Containers", spec["initContainers"], None, "  ")
    describe_containers(w, "Containers", spec.get("containers") or [], None, "  ")
    w.write(0, "  Volumes:\t<none>\n")
    if spec.get("priorityClassName"):
        w.write(1, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    labels_multiline(w, "  Node-Selectors", spec.get("nodeSelector"))
    tolerations_multiline(w, "  Tolerations", spec.get("tolerations"))


def _conditions(w: PrefixWriter, status: Object) -> None:
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}\n")


def _owned_replica_sets(client: Client, d: Object) -> list[Object]:
    uid = d["metadata"].get("uid")
    selector = str(selector_from_label_selector(d["spec"].get("selector")))
    return [rs for rs in client.list("replicasets", d["metadata"].get("namespace", "default"),
                                     label_selector=selector)["items"]
            if any(r.get("uid") == uid and r.get("controller")
                   for r in rs["metadata"].get("ownerReferences") or ())]


def describe_deployment(client: Client, d: Object, events: list[Object], now: float) -> str:
    meta, spec, status = d["metadata"], d.get("spec") or {}, d.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Selector:\t{selector_from_label_selector(spec.get('selector'))}\n")
    w.write(0, f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('updatedReplicas', 0)} updated"
               f" | {status.get('replicas', 0)} total | {status.get('availableReplicas', 0)} available"
               f" | {status.get('unavailableReplicas', 0)} unavailable\n")
    strategy = spec.get("strategy") or {}
    w.write(0, f"StrategyType:\t{strategy.get('type', '')}\n")
    w.write(0, f"MinReadySeconds:\t{spec.get('minReadySeconds', 0)}\n")
    if strategy.get("rollingUpdate") is not None:
        ru = strategy["rollingUpdate"]
        w.write(0, f"RollingUpdateStrategy:\t{ru.get('maxUnavailable', 0)} max unavailable, "
                   f"{ru.get('maxSurge', 0)} max surge\n")
    describe_pod_template(w, spec.get("template") or {})
    _conditions(w, status)
    rss = _owned_replica_sets(client, d)
    template = _without_hash(spec.get("template") or {})
    new = [rs for rs in rss if _without_hash(rs["spec"].get("template") or {}) == template][:1]
    old = [rs for rs in rss if rs not in new and rs["spec"].get("replicas", 0)]
    if old or new:
        w.write(0, f"OldReplicaSets:\t{_replica_sets(old)}\n")
        w.write(0, f"NewReplicaSet:\t{_replica_sets(new)}\n")
    describe_events(w, events, now)
    return w.text()


def _without_hash(template: Object) -> Object:
    meta = dict(template.get("metadata") or {})
    meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k != "pod-template-hash"}
    return {**template, "metadata": meta}


def _replica_sets(rss: list[Object]) -> str:
    """printReplicaSetsByLabels."""
    return ", ".join(f"{rs['metadata']['name']} ({(rs.get('status') or {}).get('replicas', 0)}/"
                     f"{rs['spec'].get('replicas', 1)} replicas created)" for rs in rss) or "<none>"


def describe_replica_set(client: Client, rs: Object, events: list[Object], now: float) -> str:
    meta, spec, status = rs["metadata"], rs.get("spec") or {}, rs.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    selector = selector_from_label_selector(spec.get("selector"))
    w.write(0, f"Selector:\t{selector}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    if owner := controlled_by(rs):
        w.write(0, f"Controlled By:\t{owner}\n")
    w.write(0, f"Replicas:\t{status.get('replicas', 0)} current / {spec.get('replicas', 1)} desired\n")
    phases = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    for pod in client.list("pods", meta.get("namespace", "default"), label_selector=str(selector))["items"]:
        ref = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        phase = (pod.get("status") or {}).get("phase", "")
        if ref is not None and ref.get("uid") == meta.get("uid") and phase in phases:
            phases[phase] += 1
    w.write(0, f"Pods Status:\t{phases['Running']} Running / {phases['Pending']} Waiting / "
               f"{phases['Succeeded']} Succeeded / {phases['Failed']} Failed\n")
    describe_pod_template(w, spec.get("template") or {})
    _conditions(w, status)
    describe_events(w, events, now)
    return w.text()


def describe_daemon_set(client: Client, ds: Object, events: list[Object], now: float) -> str:
    """describeDaemonSet: the counters in its own words, then the pods' phases and template."""
    meta, spec, status = ds["metadata"], ds.get("spec") or {}, ds.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    selector = selector_from_label_selector(spec.get("selector"))
    w.write(0, f"Selector:\t{selector}\n")
    node_selector = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    w.write(0, "Node-Selector:\t" + (",".join(f"{k}={v}" for k, v in sorted(node_selector.items()))
                                    or "<none>") + "\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    for label, field in (("Desired Number of Nodes Scheduled", "desiredNumberScheduled"),
                         ("Current Number of Nodes Scheduled", "currentNumberScheduled"),
                         ("Number of Nodes Scheduled with Up-to-date Pods", "updatedNumberScheduled"),
                         ("Number of Nodes Scheduled with Available Pods", "numberAvailable"),
                         ("Number of Nodes Misscheduled", "numberMisscheduled")):
        w.write(0, f"{label}: {status.get(field, 0)}\n")
    phases = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    for pod in client.list("pods", meta.get("namespace", "default"), label_selector=str(selector))["items"]:
        ref = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        phase = (pod.get("status") or {}).get("phase", "")
        if ref is not None and ref.get("uid") == meta.get("uid") and phase in phases:
            phases[phase] += 1
    w.write(0, f"Pods Status:\t{phases['Running']} Running / {phases['Pending']} Waiting / "
               f"{phases['Succeeded']} Succeeded / {phases['Failed']} Failed\n")
    describe_pod_template(w, spec.get("template") or {})
    describe_events(w, events, now)
    return w.text()


def describe_job(client: Client, job: Object, events: list[Object], now: float) -> str:
    """describeJob (notebook 08)."""
    meta, spec, status = job["metadata"], job.get("spec") or {}, job.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"Selector:\t{selector_from_label_selector(spec.get('selector'))}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    if owner := controlled_by(job):
        w.write(0, f"Controlled By:\t{owner}\n")
    w.write(0, f"Parallelism:\t{spec.get('parallelism', 1)}\n")
    w.write(0, f"Completions:\t{spec['completions'] if spec.get('completions') is not None else '<unset>'}\n")
    for field, label in (("completionMode", "Completion Mode"), ("suspend", "Suspend"),
                         ("backoffLimit", "Backoff Limit"),
                         ("ttlSecondsAfterFinished", "TTL Seconds After Finished")):
        if spec.get(field) is not None:
            value = str(spec[field]).lower() if isinstance(spec[field], bool) else spec[field]
            w.write(0, f"{label}:\t{value}\n")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{rfc1123z(status['startTime'])}\n")
    if status.get("completionTime"):
        w.write(0, f"Completed At:\t{rfc1123z(status['completionTime'])}\n")
        if status.get("startTime"):
            took = parse_time(status["completionTime"]) - parse_time(status["startTime"])
            w.write(0, f"Duration:\t{human_duration(took)}\n")
    if spec.get("activeDeadlineSeconds") is not None:
        w.write(0, f"Active Deadline Seconds:\t{spec['activeDeadlineSeconds']}s\n")
    counts = f"{status.get('succeeded', 0)} Succeeded / {status.get('failed', 0)} Failed"
    ready = f" ({status['ready']} Ready)" if status.get("ready") is not None else ""
    w.write(0, f"Pods Statuses:\t{status.get('active', 0)} Active{ready} / {counts}\n")
    if spec.get("completionMode") == "Indexed":
        w.write(0, f"Completed Indexes:\t{status.get('completedIndexes') or '<none>'}\n")
    describe_pod_template(w, spec.get("template") or {})
    describe_events(w, events, now)
    return w.text()


DESCRIBERS: dict[str, Describer] = {
    "pods": describe_pod, "nodes": describe_node, "deployments": describe_deployment,
    "replicasets": describe_replica_set, "daemonsets": describe_daemon_set, "jobs": describe_job,
    # --- i31-cron-pdb ---
    "cronjobs": describe_cron_job, "poddisruptionbudgets": describe_pod_disruption_budget,
    # --- i31-hpa ---
    "horizontalpodautoscalers": describe_horizontal_pod_autoscaler,
}

# --- i31-sts --- (imported last: workloads.py uses describe_pod_template from here)
from kubelab.kubectl.describe.workloads import (  # noqa: E402
    describe_replication_controller,
    describe_stateful_set,
)

DESCRIBERS.update({"statefulsets": describe_stateful_set,
                   "replicationcontrollers": describe_replication_controller})
# --- i31-storage --- PersistentVolumes, claims and StorageClasses (storage.py)
DESCRIBERS.update(STORAGE_DESCRIBERS)
# --- netpol --- NetworkPolicies (networking.py)
from kubelab.kubectl.describe.networking import NETWORKING_DESCRIBERS  # noqa: E402

DESCRIBERS.update(NETWORKING_DESCRIBERS)
# --- sa --- ServiceAccounts (serviceaccount.py)
from kubelab.kubectl.describe.serviceaccount import SERVICE_ACCOUNT_DESCRIBERS  # noqa: E402

DESCRIBERS.update(SERVICE_ACCOUNT_DESCRIBERS)
# --- endpoints --- core/v1 Endpoints (endpoints.py)
from kubelab.kubectl.describe.endpoints import ENDPOINTS_DESCRIBERS  # noqa: E402

DESCRIBERS.update(ENDPOINTS_DESCRIBERS)
# Services, with their EndpointSlices (service.py)
from kubelab.kubectl.describe.service import SERVICE_DESCRIBERS  # noqa: E402

DESCRIBERS.update(SERVICE_DESCRIBERS)

# --- csr --- CertificateSigningRequests (certificates.py)
from kubelab.kubectl.describe.certificates import CERTIFICATE_DESCRIBERS  # noqa: E402

DESCRIBERS.update(CERTIFICATE_DESCRIBERS)
# --- quota --- ResourceQuotas (quota.py)
from kubelab.kubectl.describe.quota import QUOTA_DESCRIBERS  # noqa: E402

DESCRIBERS.update(QUOTA_DESCRIBERS)
