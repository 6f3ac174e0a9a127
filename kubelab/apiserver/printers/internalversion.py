"""The columns and cells of the built-in kinds' Tables: kubernetes
pkg/printers/internalversion/printers.go (AddHandlers: printPod, printNode, printDeployment,
printReplicaSet, printDaemonSet, printControllerRevision, printPriorityClass, printJob,
printEvent, printNamespace, printLease, printFlowSchema, printHorizontalPodAutoscaler,
printPriorityLevelConfiguration). services.py holds printService and printEndpointSlice.

Departures, so that `kubectl get` prints what it printed before kubelab served Tables: cells
are the strings kubectl prints (upstream sends integers for the integer columns); nodes,
events, replicasets and jobs carry none of upstream's wide columns (INTERNAL-IP, CONTAINERS,
SUBOBJECT...); and the kinds kubelab has no printer for (config maps, secrets, service
accounts, RBAC, admission policies) print as kubectl's own fallback does
(tableprinter.go's objectMetaColumnDefinitions: Name, Age), where upstream's printers.go
adds DATA, TYPE, ROLE... CRDs have no handler here, as upstream: the CRD registry (1.34
apiextensions-apiserver pkg/registry/customresourcedefinition/etcd.go) answers with
rest.NewDefaultTableConvertor, Name and Created At (kubelab/apiserver/registry/table.py).
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.duration import human_duration
from kubelab.api.meta import parse_time
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["OBJECT_META_RESOURCES", "add_handlers", "pod_status"]


def pod_status(pod: Object) -> str:
    """The STATUS column of `kubectl get pods` (printPod's reason)."""
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    init = status.get("initContainerStatuses") or []
    sidecars = _sidecars(pod)
    initializing = False
    for i, cs in enumerate(init):
        state = cs.get("state") or {}
        if cs.get("name") in sidecars and cs.get("started"):
            continue  # a sidecar that runs: initialization goes on past it
        if (state.get("terminated") or {}).get("exitCode") == 0:
            continue
        if state.get("terminated"):
            reason = "Init:" + (state["terminated"].get("reason") or "Error")
        elif state.get("waiting", {}).get("reason") not in (None, "", "PodInitializing"):
            reason = "Init:" + state["waiting"]["reason"]
        else:
            reason = f"Init:{i}/{len(pod.get('spec', {}).get('initContainers') or [])}"
        initializing = True
        break
    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True"
                      for c in status.get("conditions") or ())
    if not initializing or initialized:  # isPodInitializedConditionTrue
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


def _sidecars(pod: Object) -> set[str]:
    """The restartable init containers (restartPolicy Always): they count as containers."""
    return {str(c.get("name")) for c in (pod.get("spec") or {}).get("initContainers") or ()
            if c.get("restartPolicy") == "Always"}


def _pod_row(pod: Object, now: float) -> list[str]:
    status = pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    sidecars = _sidecars(pod)
    init = [c for c in status.get("initContainerStatuses") or () if c.get("name") in sidecars]
    total = len((pod.get("spec") or {}).get("containers") or []) + len(sidecars)
    ready = sum(1 for c in statuses if c.get("ready")) + \
        sum(1 for c in init if c.get("started") and c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in statuses) + \
        sum(int(c.get("restartCount", 0)) for c in init)
    return [pod["metadata"]["name"], f"{ready}/{total}", pod_status(pod), str(restarts), _age(pod, now),
            (pod.get("status") or {}).get("podIP") or "<none>",
            (pod.get("spec") or {}).get("nodeName") or "<none>",
            (pod.get("status") or {}).get("nominatedNodeName") or "<none>",  # --- preempt ---
            _readiness_gates(pod)]


def _readiness_gates(pod: Object) -> str:
    """printPod's READINESS GATES: how many of spec.readinessGates have their condition True
    in status.conditions (the first condition of the type counts), "<none>" without gates."""
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = (pod.get("status") or {}).get("conditions") or []
    true = 0
    for gate in gates:
        condition = next((c for c in conditions if c.get("type") == gate.get("conditionType")), None)
        true += condition is not None and condition.get("status") == "True"
    return f"{true}/{len(gates)}"


def _node_row(node: Object, now: float) -> list[str]:
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


def _deployment_row(d: Object, now: float) -> list[str]:
    st, spec = d.get("status") or {}, d.get("spec") or {}
    return [d["metadata"]["name"], f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
            str(st.get("updatedReplicas", 0)), str(st.get("availableReplicas", 0)), _age(d, now)]


def _format_labels(labels: dict[str, str] | None) -> str:
    """labels.FormatLabels: k=v pairs by key, "<none>" when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def _daemonset_row(ds: Object, now: float) -> list[str]:
    """printDaemonSet: the counters, NODE SELECTOR, and (wide) CONTAINERS, IMAGES, SELECTOR."""
    st, spec = ds.get("status") or {}, ds.get("spec") or {}
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    containers = pod_spec.get("containers") or []
    selector = spec.get("selector") or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or []:
        values = ",".join(e.get("values") or [])
        parts.append({"In": f"{e['key']} in ({values})", "NotIn": f"{e['key']} notin ({values})",
                      "Exists": e["key"], "DoesNotExist": f"!{e['key']}"}.get(e.get("operator"), ""))
    return [ds["metadata"]["name"], *(str(st.get(k, 0)) for k in (
        "desiredNumberScheduled", "currentNumberScheduled", "numberReady",
        "updatedNumberScheduled", "numberAvailable")),
        _format_labels(pod_spec.get("nodeSelector")), _age(ds, now),
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers), ",".join(parts) or "<none>"]


def _controller_revision_row(cr: Object, now: float) -> list[str]:
    """printControllerRevision: CONTROLLER is kind.group/name of its controller."""
    owner = next((o for o in (cr["metadata"].get("ownerReferences") or []) if o.get("controller")),
                 None)
    controller = "<none>"
    if owner is not None:
        group = str(owner.get("apiVersion", "")).rpartition("/")[0]
        kind = str(owner.get("kind", "")).lower()
        controller = f"{kind}.{group}/{owner.get('name')}" if group else f"{kind}/{owner.get('name')}"
    return [cr["metadata"]["name"], controller, str(cr.get("revision", 0)), _age(cr, now)]


def _priority_class_row(pc: Object, now: float) -> list[str]:
    """printPriorityClass."""
    return [pc["metadata"]["name"], str(pc.get("value", 0)), str(bool(pc.get("globalDefault"))).lower(),
            _age(pc, now), str(pc.get("preemptionPolicy") or "")]


def _replicaset_row(rs: Object, now: float) -> list[str]:
    st, spec = rs.get("status") or {}, rs.get("spec") or {}
    return [rs["metadata"]["name"], str(spec.get("replicas", 1)), str(st.get("replicas", 0)),
            str(st.get("readyReplicas", 0)), _age(rs, now)]


def _job_row(job: Object, now: float) -> list[str]:
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


def _event_row(ev: Object, now: float) -> list[str]:
    last = ev.get("lastTimestamp") or ev.get("eventTime")
    seen = human_duration(now - parse_time(last)) if last else "<unknown>"
    obj = ev.get("involvedObject") or {}
    return [seen, ev.get("type", ""), ev.get("reason", ""),
            f"{str(obj.get('kind', '')).lower()}/{obj.get('name', '')}", ev.get("message", "")]


def _namespace_row(ns: Object, now: float) -> list[str]:
    return [ns["metadata"]["name"], (ns.get("status") or {}).get("phase", "Active"), _age(ns, now)]


def _lease_row(lease: Object, now: float) -> list[str]:
    """printLease: the holder ("" when none holds it)."""
    holder = (lease.get("spec") or {}).get("holderIdentity") or ""
    return [lease["metadata"]["name"], str(holder), _age(lease, now)]


def _object_meta_row(obj: Object, now: float) -> list[str]:
    """tableprinter.go printObjectMeta."""
    return [obj["metadata"]["name"], _age(obj, now)]


# --- sa ---
def _service_account_row(sa: Object, now: float) -> list[str]:
    """printServiceAccount: NAME SECRETS AGE, SECRETS the length of .secrets."""
    return [sa["metadata"]["name"], str(len(sa.get("secrets") or [])), _age(sa, now)]


def _webhooks_row(obj: Object, now: float) -> list[str]:
    """printers.go printMutatingWebhook, printValidatingWebhook: NAME WEBHOOKS AGE."""
    return [obj["metadata"]["name"], str(len(obj.get("webhooks") or [])), _age(obj, now)]


# flowcontrol.apiserver.k8s.io (printers.go printFlowSchema, printPriorityLevelConfiguration)
def _flow_schema_row(fs: Object, now: float) -> list[str]:
    spec = fs.get("spec") or {}
    method = (spec.get("distinguisherMethod") or {}).get("type") or "<none>"
    missing = next((str(c.get("status", "")) for c in (fs.get("status") or {}).get("conditions") or []
                    if c.get("type") == "Dangling"), "?")
    return [fs["metadata"]["name"], (spec.get("priorityLevelConfiguration") or {}).get("name", ""),
            str(spec.get("matchingPrecedence", 0)), method, _age(fs, now), missing]


def _priority_level_row(pl: Object, now: float) -> list[str]:
    spec = pl.get("spec") or {}
    cells = ["<none>"] * 4
    limited = spec.get("limited")
    if limited is not None:
        cells[0] = str(limited.get("nominalConcurrencyShares", 0))
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if queuing is not None:
            cells[1:] = [str(queuing.get(k, 0)) for k in ("queues", "handSize", "queueLengthLimit")]
    return [pl["metadata"]["name"], spec.get("type", ""), *cells, _age(pl, now)]


def _component_status_row(cs: Object, now: float) -> list[str]:
    # printComponentStatus: the Healthy condition's status, message and error.
    healthy = next((c for c in cs.get("conditions") or () if c.get("type") == "Healthy"), None)
    if healthy is None:
        return [cs["metadata"]["name"], "Unknown", "", ""]
    status = "Healthy" if healthy.get("status") == "True" else "Unhealthy"
    return [cs["metadata"]["name"], status, healthy.get("message", ""), healthy.get("error", "")]


def _by_precedence(objects: list[Object]) -> list[Object]:
    """printFlowSchemaList's order (FlowSchemaSequence): matchingPrecedence, then name."""
    return sorted(objects, key=lambda fs: ((fs.get("spec") or {}).get("matchingPrecedence", 0),
                                           fs["metadata"]["name"]))


# The kinds printed with objectMetaColumnDefinitions (see the docstring).
OBJECT_META_RESOURCES = ("configmaps", "secrets", "roles", "rolebindings",
                         "clusterroles", "clusterrolebindings",
                         "validatingadmissionpolicies", "validatingadmissionpolicybindings")
_NAME, _AGE = column("Name", format_="name"), column("Age")


# --- i31-hpa ---
def _hpa_row(hpa: Object, now: float) -> list[str]:
    """printHorizontalPodAutoscaler: REFERENCE is kind/name, TARGETS formatHPAMetrics'."""
    spec, st = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    minimum = spec.get("minReplicas")
    return [hpa["metadata"]["name"], f"{ref.get('kind', '')}/{ref.get('name', '')}",
            format_hpa_metrics(spec.get("metrics") or [], st.get("currentMetrics") or []),
            "<unset>" if minimum is None else str(minimum), str(spec.get("maxReplicas", 0)),
            str(st.get("currentReplicas", 0)), _age(hpa, now)]


def format_hpa_metrics(specs: list[Object], statuses: list[Object]) -> str:
    """formatHPAMetrics (1.34): "cpu: 50%/80%" per metric, two at most, then "+ N more..."."""
    if not specs:
        return "<none>"
    shown: list[str] = []
    for i, spec in enumerate(specs):
        kind = str(spec.get("type", ""))
        key = kind[:1].lower() + kind[1:]
        source = spec.get(key) or {}
        target = source.get("target") or {}
        current = ((statuses[i].get(key) or {}).get("current") or {}) if i < len(statuses) else {}
        if kind in ("Resource", "ContainerResource"):
            name = source.get("name", "")
            if target.get("averageValue") is not None:
                shown.append(f"{name}: {current.get('averageValue') or '<unknown>'}/"
                             f"{target['averageValue']}")
            else:
                have = current.get("averageUtilization")
                want = target.get("averageUtilization")
                shown.append(f"{name}: {'<unknown>' if have is None else f'{have}%'}/"
                             f"{'<auto>' if want is None else f'{want}%'}")
        elif kind in ("External", "Object", "Pods"):  # --- hpacsi --- no metric name, as upstream
            average = kind == "Pods" or target.get("averageValue") is not None
            field = "averageValue" if average else "value"
            have = current.get(field) or "<unknown>"
            suffix = " (avg)" if average and kind != "Pods" else ""
            shown.append(f"{have}/{target.get(field, '<nil>')}{suffix}")
        else:
            shown.append("<unknown type>")
        if len(shown) > 2:
            return f"{', '.join(shown[:2])} + {len(specs) - 2} more..."
    return ", ".join(shown)


def add_handlers(h: TableGenerator) -> None:
    """AddHandlers: each kind's column definitions (priority 1: shown by `-o wide`)."""
    h.table_handler("pods", [
        _NAME, column("Ready"), column("Status"), column("Restarts"), _AGE,
        column("IP", priority=1), column("Node", priority=1), column("Nominated Node", priority=1),
        column("Readiness Gates", priority=1)], _pod_row)
    h.table_handler("nodes", [_NAME, column("Status"), column("Roles"), _AGE, column("Version")],
                    _node_row)
    h.table_handler("deployments", [_NAME, column("Ready"), column("Up-to-date", "integer"),
                                    column("Available", "integer"), _AGE], _deployment_row)
    h.table_handler("replicasets", [_NAME, column("Desired", "integer"), column("Current", "integer"),
                                    column("Ready", "integer"), _AGE], _replicaset_row)
    h.table_handler("daemonsets", [
        _NAME, *(column(n, "integer") for n in ("Desired", "Current", "Ready", "Up-to-date",
                                                 "Available")),
        column("Node Selector"), _AGE, column("Containers", priority=1),
        column("Images", priority=1), column("Selector", priority=1)], _daemonset_row)
    h.table_handler("controllerrevisions", [_NAME, column("Controller"),
                                            column("Revision", "integer"), _AGE],
                    _controller_revision_row)
    h.table_handler("priorityclasses", [_NAME, column("Value", "integer"),
                                        column("Global-Default", "boolean"), _AGE,
                                        column("PreemptionPolicy")], _priority_class_row)
    h.table_handler("events", [column("Last Seen"), column("Type"), column("Reason"),
                               column("Object"), column("Message")], _event_row)
    h.table_handler("namespaces", [_NAME, column("Status"), _AGE], _namespace_row)
    h.table_handler("leases", [_NAME, column("Holder"), _AGE], _lease_row)
    h.table_handler("flowschemas", [
        _NAME, column("PriorityLevel"), column("MatchingPrecedence", "integer"),
        column("DistinguisherMethod"), _AGE, column("MissingPL")], _flow_schema_row, _by_precedence)
    h.table_handler("prioritylevelconfigurations", [
        _NAME, column("Type"), column("NominalConcurrencyShares"), column("Queues"),
        column("HandSize"), column("QueueLengthLimit"), _AGE], _priority_level_row)
    h.table_handler("jobs", [_NAME, column("Status"), column("Completions"), column("Duration"), _AGE],
                    _job_row)
    h.table_handler("componentstatuses", [_NAME, column("Status"), column("Message"),
                                          column("Error")], _component_status_row)
    for resource in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        h.table_handler(resource, [_NAME, column("Webhooks", "integer"), _AGE], _webhooks_row)
    for resource in OBJECT_META_RESOURCES:
        h.table_handler(resource, [_NAME, _AGE], _object_meta_row)
    # --- sa ---
    h.table_handler("serviceaccounts", [_NAME, column("Secrets"), _AGE], _service_account_row)
    # --- i31-hpa ---
    h.table_handler("horizontalpodautoscalers", [
        _NAME, column("Reference"), column("Targets"), column("MinPods"), column("MaxPods", "integer"),
        column("Replicas", "integer"), _AGE], _hpa_row)
