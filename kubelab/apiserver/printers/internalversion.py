"""How kubectl prints objects: tables per kind, ages, pod status.

Follows kubectl's printers (pkg/printers/internalversion/printers.go: printPod, printNode,
printDeployment, printReplicaSet, printJob, printEvent) and apimachinery's duration.HumanDuration.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object
from kubelab.api.meta import parse_time
from kubelab.apiserver.printers.services import SERVICE_COLUMNS, SERVICE_WIDE_EXTRA

__all__ = ["human_duration", "pod_status", "table"]

def human_duration(seconds: float) -> str:
    """duration.HumanDuration: 45s, 3m20s, 5h, 3d4h, 2y3d."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    y, days = h // (24 * 365), (h // 24) % 365
    return f"{y}y{days}d" if y < 8 and days else f"{y}y"


def _age(obj: Object, now: float) -> str:
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    return human_duration(now - parse_time(created)) if created else "<unknown>"


def pod_status(pod: Object) -> str:
    """The STATUS column of `kubectl get pods` (printPod's reason)."""
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    init = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init):
        state = cs.get("state") or {}
        if (state.get("terminated") or {}).get("exitCode") == 0:
            continue
        if state.get("terminated"):
            reason = "Init:" + (state["terminated"].get("reason") or "Error")
        elif state.get("waiting", {}).get("reason") not in (None, "", "PodInitializing"):
            reason = "Init:" + state["waiting"]["reason"]
        else:
            reason = f"Init:{i}/{len(pod.get('spec', {}).get('initContainers') or [])}"
        break
    else:
        running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            if state.get("waiting", {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif state.get("terminated", {}).get("reason"):
                reason = state["terminated"]["reason"]
            elif state.get("terminated"):
                term = state["terminated"]
                reason = (f"Signal:{term['signal']}" if term.get("signal")
                          else f"ExitCode:{term.get('exitCode', 0)}")
            elif state.get("running") and cs.get("ready"):
                running = True
        if reason == "Completed" and running:
            reason = "Running"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def _pod_row(pod: Object, now: float, wide: bool) -> list[str]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in statuses)
    row = [pod["metadata"]["name"], f"{ready}/{total}", pod_status(pod), str(restarts), _age(pod, now)]
    if wide:
        row += [(pod.get("status") or {}).get("podIP") or "<none>",
                (pod.get("spec") or {}).get("nodeName") or "<none>", "<none>", "<none>"]
    return row


def _node_row(node: Object, now: float, wide: bool) -> list[str]:
    conditions = {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []}
    # printNode (pkg/printers/internalversion/printers.go): any Ready status but True is
    # NotReady; Unknown only for a node with no Ready condition at all.
    ready = "Unknown" if "Ready" not in conditions else \
        ("Ready" if conditions["Ready"] == "True" else "NotReady")
    if (node.get("spec") or {}).get("unschedulable"):
        ready += ",SchedulingDisabled"
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = ",".join(sorted(k.split("/", 1)[1] for k in labels
                            if k.startswith("node-role.kubernetes.io/"))) or "<none>"
    version = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion") or ""
    return [node["metadata"]["name"], ready, roles, _age(node, now), version]


def _deployment_row(d: Object, now: float, wide: bool) -> list[str]:
    st, spec = d.get("status") or {}, d.get("spec") or {}
    return [d["metadata"]["name"], f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
            str(st.get("updatedReplicas", 0)), str(st.get("availableReplicas", 0)), _age(d, now)]


def _replicaset_row(rs: Object, now: float, wide: bool) -> list[str]:
    st, spec = rs.get("status") or {}, rs.get("spec") or {}
    return [rs["metadata"]["name"], str(spec.get("replicas", 1)), str(st.get("replicas", 0)),
            str(st.get("readyReplicas", 0)), _age(rs, now)]


def _job_row(job: Object, now: float, wide: bool) -> list[str]:
    """printJob (1.34): STATUS from the conditions, COMPLETIONS succeeded/completions,
    DURATION from startTime to completionTime (or now)."""
    st, spec = job.get("status") or {}, job.get("spec") or {}
    succeeded, parallelism = st.get("succeeded", 0), spec.get("parallelism") or 0
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    else:
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    duration = ""
    if st.get("startTime"):
        end = parse_time(st["completionTime"]) if st.get("completionTime") else now
        duration = human_duration(end - parse_time(st["startTime"]))
    true = {c.get("type") for c in st.get("conditions") or () if c.get("status") == "True"}
    if "Complete" in true:
        status = "Complete"
    elif "Failed" in true:
        status = "Failed"
    elif (job.get("metadata") or {}).get("deletionTimestamp"):
        status = "Terminating"
    elif "Suspended" in true:
        status = "Suspended"
    elif "FailureTarget" in true:
        status = "FailureTarget"
    else:
        status = "Running"
    return [job["metadata"]["name"], status, completions, duration, _age(job, now)]


def _event_row(ev: Object, now: float, wide: bool) -> list[str]:
    last = ev.get("lastTimestamp") or ev.get("eventTime")
    seen = human_duration(now - parse_time(last)) if last else "<unknown>"
    obj = ev.get("involvedObject") or {}
    return [seen, ev.get("type", ""), ev.get("reason", ""),
            f"{str(obj.get('kind', '')).lower()}/{obj.get('name', '')}", ev.get("message", "")]


def _namespace_row(ns: Object, now: float, wide: bool) -> list[str]:
    return [ns["metadata"]["name"], (ns.get("status") or {}).get("phase", "Active"), _age(ns, now)]


def _lease_row(lease: Object, now: float, wide: bool) -> list[str]:
    """printLease: the holder ("" when none holds it)."""
    holder = (lease.get("spec") or {}).get("holderIdentity") or ""
    return [lease["metadata"]["name"], str(holder), _age(lease, now)]


def _generic_row(obj: Object, now: float, wide: bool) -> list[str]:
    return [obj["metadata"]["name"], _age(obj, now)]


# flowcontrol.apiserver.k8s.io (printers.go printFlowSchema, printPriorityLevelConfiguration)
def _flow_schema_row(fs: Object, now: float, wide: bool) -> list[str]:
    spec = fs.get("spec") or {}
    method = (spec.get("distinguisherMethod") or {}).get("type") or "<none>"
    missing = next((str(c.get("status", "")) for c in (fs.get("status") or {}).get("conditions") or []
                    if c.get("type") == "Dangling"), "?")
    return [fs["metadata"]["name"], (spec.get("priorityLevelConfiguration") or {}).get("name", ""),
            str(spec.get("matchingPrecedence", 0)), method, _age(fs, now), missing]


def _priority_level_row(pl: Object, now: float, wide: bool) -> list[str]:
    spec = pl.get("spec") or {}
    cells = ["<none>"] * 4
    limited = spec.get("limited")
    if limited is not None:
        cells[0] = str(limited.get("nominalConcurrencyShares", 0))
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if queuing is not None:
            cells[1:] = [str(queuing.get(k, 0)) for k in ("queues", "handSize", "queueLengthLimit")]
    return [pl["metadata"]["name"], spec.get("type", ""), *cells, _age(pl, now)]


def _by_precedence(objects: list[Object]) -> list[Object]:
    """printFlowSchemaList's order (FlowSchemaSequence): matchingPrecedence, then name."""
    return sorted(objects, key=lambda fs: ((fs.get("spec") or {}).get("matchingPrecedence", 0),
                                           fs["metadata"]["name"]))


Row = Callable[[Object, float, bool], list[str]]
COLUMNS: dict[str, tuple[list[str], Row]] = {
    "pods": (["NAME", "READY", "STATUS", "RESTARTS", "AGE"], _pod_row),
    "nodes": (["NAME", "STATUS", "ROLES", "AGE", "VERSION"], _node_row),
    "deployments": (["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], _deployment_row),
    "replicasets": (["NAME", "DESIRED", "CURRENT", "READY", "AGE"], _replicaset_row),
    "events": (["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"], _event_row),
    "namespaces": (["NAME", "STATUS", "AGE"], _namespace_row),
    "leases": (["NAME", "HOLDER", "AGE"], _lease_row),
    "flowschemas": (["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE",
                     "MISSINGPL"], _flow_schema_row),
    "prioritylevelconfigurations": (["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES",
                                     "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"], _priority_level_row),
    "jobs": (["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], _job_row),
}
WIDE_EXTRA = {"pods": ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]}
# Kinds whose list printer sorts the items first.
LIST_ORDER: dict[str, Callable[[list[Object]], list[Object]]] = {"flowschemas": _by_precedence}
# Services and EndpointSlices (notebook 09) print from their own module.
COLUMNS.update(SERVICE_COLUMNS(_age))
WIDE_EXTRA.update(SERVICE_WIDE_EXTRA)


def table(resource: str, objects: list[Object], now: float, *, wide: bool = False,
          namespace_column: bool = False, no_headers: bool = False, name_prefix: str = "",
          custom: tuple[list[str], list[list[str]]] | None = None) -> str:
    """Objects as kubectl's column table: columns padded with three spaces, as tabwriter does.
    name_prefix ("deployment.apps/") goes before each name when several kinds print; custom
    is a custom resource's (headers, rows) from its printer columns (apiextensions/tableconvertor.py)."""
    headers, row = COLUMNS.get(resource, (["NAME", "AGE"], _generic_row))
    headers = headers + (WIDE_EXTRA.get(resource, []) if wide else [])
    objects = LIST_ORDER.get(resource, list)(objects)
    rows = [row(o, now, wide) for o in objects]
    if custom is not None:
        headers, rows = custom
    rows = [[name_prefix + r[0], *r[1:]] for r in rows]
    if namespace_column:
        headers = ["NAMESPACE", *headers]
        rows = [[(o.get("metadata") or {}).get("namespace", ""), *r]
                for o, r in zip(objects, rows, strict=True)]
    if not no_headers:
        rows = [headers, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(headers))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)
