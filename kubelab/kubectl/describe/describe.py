"""`kubectl describe pod|node|deployment|replicaset NAME`, in describe's own layout.

Follows k8s.io/kubectl pkg/describe/describe.go: describePod, describeContainers,
describeStatus, DescribeEvents, printLabelsMultiline, printAnnotationsMultiline,
printPodTolerationsMultiline. Nodes, Deployments and ReplicaSets are in
apps.py; any other kind gets the generic describer's fields. Times print as
Go's time.RFC1123Z in UTC, ages as HumanDuration. kubelab leaves out what it does not model
(volumes, environment sources, seccomp): those lines print their empty form.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from kubelab.api import Object
from kubelab.api.duration import human_duration
from kubelab.api.meta import epoch, parse_time
from kubelab.client.client import Client
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = [
    "Describer", "annotations_multiline", "controlled_by", "describe_containers", "describe_events",
    "describe_generic", "describe_pod", "labels_multiline", "rfc1123z", "since", "tolerations_multiline",
]

SKIP_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration"}
MAX_ANNOTATION_LEN = 140
Describer = Callable[[Client, Object, list[Object], float], str]


def rfc1123z(timestamp: str | None) -> str:
    """Go's time.RFC1123Z, "Mon, 02 Jan 2006 15:04:05 -0700", of an RFC 3339 timestamp."""
    if not timestamp:
        return "Mon, 01 Jan 0001 00:00:00 +0000"  # Go's zero time
    t = epoch() + timedelta(seconds=parse_time(timestamp))
    return t.strftime("%a, %d %b %Y %H:%M:%S +0000")


def since(timestamp: str | None, now: float) -> str:
    """translateTimestampSince: "<unknown>" for no time, else HumanDuration."""
    return human_duration(now - parse_time(timestamp)) if timestamp else "<unknown>"


def labels_multiline(w: PrefixWriter, title: str, labels: dict[str, str] | None,
                     indent: str = "") -> None:
    w.write(0, f"{indent}{title}:\t")
    keys = sorted(labels or {})
    if not keys:
        w.write_line("<none>")
    for i, key in enumerate(keys):
        w.write(0, f"{indent}\t" if i else "")
        w.write(0, f"{key}={(labels or {})[key]}\n")


def annotations_multiline(w: PrefixWriter, title: str, annotations: dict[str, str] | None) -> None:
    w.write(0, f"{title}:\t")
    keys = sorted(k for k in annotations or {} if k not in SKIP_ANNOTATIONS)
    if not keys:
        w.write_line("<none>")
    for i, key in enumerate(keys):
        w.write(0, "\t" if i else "")
        value = str((annotations or {})[key]).removesuffix("\n")
        if len(value) + len(key) + 2 > MAX_ANNOTATION_LEN or "\n" in value:
            w.write(0, f"{key}:\n")
            for line in value.split("\n"):
                short = line[:MAX_ANNOTATION_LEN - 2] + "..." if len(line) > MAX_ANNOTATION_LEN - 2 else line
                w.write(0, f"\t  {short}\n")
        else:
            w.write(0, f"{key}: {value}\n")


def tolerations_multiline(w: PrefixWriter, title: str, tolerations: list[Object] | None,
                          indent: str = "") -> None:
    w.write(0, f"{indent}{title}:\t")
    items = sorted(tolerations or [], key=lambda t: str(t.get("key", "")))
    if not items:
        w.write_line("<none>")
    for i, t in enumerate(items):
        text = (f"{indent}\t" if i else "") + str(t.get("key", ""))
        text += f"={t['value']}" if t.get("value") else ""
        text += f":{t['effect']}" if t.get("effect") else ""
        if t.get("operator") == "Exists" and not t.get("value"):
            text += " op=Exists" if (t.get("key") or t.get("effect")) else "op=Exists"
        if t.get("tolerationSeconds") is not None:
            text += f" for {t['tolerationSeconds']}s"
        w.write(0, text + "\n")


def controlled_by(obj: Object) -> str:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return ""


def describe_pod(client: Client, pod: Object, events: list[Object], now: float) -> str:
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("priority") is not None:
        w.write(0, f"Priority:\t{spec['priority']}\n")
    if spec.get("priorityClassName"):
        w.write(0, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    if spec.get("serviceAccountName"):
        w.write(0, f"Service Account:\t{spec['serviceAccountName']}\n")
    node = spec.get("nodeName")
    w.write(0, f"Node:\t{node}/{status.get('hostIP', '')}\n" if node else "Node:\t<none>\n")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{rfc1123z(status['startTime'])}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Failed", "Succeeded"):
        w.write(0, f"Status:\tTerminating (lasts {since(meta['deletionTimestamp'], now)})\n")
        w.write(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s\n")
    else:
        w.write(0, f"Status:\t{status.get('phase', '')}\n")
    if status.get("reason"):
        w.write(0, f"Reason:\t{status['reason']}\n")
    if status.get("message"):
        w.write(0, f"Message:\t{status['message']}\n")
    w.write(0, f"IP:\t{status.get('podIP', '')}\n")
    ips = status.get("podIPs") or []
    w.write(0, "IPs:\n" if ips else "IPs:\t<none>\n")
    for ip in ips:
        w.write(1, f"IP:\t{ip.get('ip', '')}\n")
    if owner := controlled_by(pod):
        w.write(0, f"Controlled By:\t{owner}\n")
    if status.get("nominatedNodeName"):
        w.write(0, f"NominatedNodeName:\t{status['nominatedNodeName']}\n")
    if spec.get("initContainers"):
        describe_containers(w, "Init Containers", spec["initContainers"],
                            status.get("initContainerStatuses"))
    describe_containers(w, "Containers", spec.get("containers") or [], status.get("containerStatuses"))
    if spec.get("readinessGates"):
        w.write(0, "Readiness Gates:\n  Type\tStatus\n")
        for gate in spec["readinessGates"]:
            found = next((c for c in status.get("conditions") or []
                          if c.get("type") == gate.get("conditionType")), None)
            w.write(1, f"{gate.get('conditionType')} \t{found.get('status') if found else '<none>'} \n")
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')} \t{c.get('status')} \n")
    describe_volumes(w, spec.get("volumes") or [])
    w.write(0, f"QoS Class:\t{status.get('qosClass', '')}\n")
    labels_multiline(w, "Node-Selectors", spec.get("nodeSelector"))
    tolerations_multiline(w, "Tolerations", spec.get("tolerations"))
    describe_events(w, events, now)
    return w.text()


def describe_containers(w: PrefixWriter, label: str, containers: list[Object],
                        statuses: list[Object] | None, space: str = "") -> None:
    """describeContainers: with statuses (a pod) or without (a pod template, space "  ")."""
    by_name = {s.get("name"): s for s in statuses or ()}
    w.write(0, f"{space}{label}:{'' if containers else ' <none>'}\n")
    for c in containers:
        status = by_name.get(c.get("name"))
        w.write(1, f"{' ' if space else ''}{c.get('name')}:\n")
        if status is not None:
            w.write(2, f"Container ID:\t{status.get('containerID', '')}\n")
        w.write(2, f"Image:\t{c.get('image', '')}\n")
        if status is not None:
            w.write(2, f"Image ID:\t{status.get('imageID', '')}\n")
        ports = ", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}"
                          + (f" ({p['name']})" if p.get("name") else "") for p in c.get("ports") or ())
        w.write(2, f"Ports:\t{ports}\n" if "," in ports else f"Port:\t{ports or '<none>'}\n")
        hosts = ", ".join(f"{p.get('hostPort', 0)}/{p.get('protocol', 'TCP')}"
                          + (f" ({p['name']})" if p.get("name") else "") for p in c.get("ports") or ())
        w.write(2, f"Host Ports:\t{hosts}\n" if "," in hosts else f"Host Port:\t{hosts or '<none>'}\n")
        for title, words in (("Command", c.get("command")), ("Args", c.get("args"))):
            if words:
                w.write(2, f"{title}:\n")
                for word in words:
                    for line in str(word).split("\n"):
                        w.write(3, f"{line}\n")
        if status is not None:
            _describe_state(w, "State", status.get("state") or {})
            if (status.get("lastState") or {}).get("terminated"):
                _describe_state(w, "Last State", status["lastState"])
            w.write(2, f"Ready:\t{'True' if status.get('ready') else 'False'}\n")
            w.write(2, f"Restart Count:\t{status.get('restartCount', 0)}\n")
        resources = c.get("resources") or {}
        for title in ("limits", "requests"):
            if resources.get(title):
                w.write(2, f"{title.capitalize()}:\n")
                for name in sorted(resources[title]):
                    w.write(3, f"{name}:\t{resources[title][name]}\n")
        for title, key in (("Liveness", "livenessProbe"), ("Readiness", "readinessProbe"),
                           ("Startup", "startupProbe")):
            if c.get(key):
                w.write(2, f"{title}:\t{describe_probe(c[key])}\n")
        env = c.get("env") or []
        w.write(2, "Environment:\n" if env else "Environment:\t<none>\n")
        for e in env:
            w.write(3, f"{e.get('name')}:\t{e.get('value', '')}\n")
        describe_container_volumes(w, c)


def describe_container_volumes(w: PrefixWriter, c: Object) -> None:
    """describeContainerVolumes: each mount by path, "from" its volume, (ro|rw[,path=...])."""
    mounts = sorted(c.get("volumeMounts") or [], key=lambda m: str(m.get("mountPath", "")))
    w.write(2, "Mounts:\n" if mounts else "Mounts:\t<none>\n")
    for m in mounts:
        flags = ["ro" if m.get("readOnly") else "rw"]
        if m.get("subPath"):
            flags.append(f'path="{m["subPath"]}"')
        w.write(3, f"{m.get('mountPath', '')} from {m.get('name', '')} ({','.join(flags)})\n")


def _optional(value: Any) -> str:
    return "<nil>" if value is None else str(bool(value)).lower()


def describe_volumes(w: PrefixWriter, volumes: list[Object]) -> None:
    """describeVolumes, for the volume types the kubelet mounts."""
    if not volumes:
        w.write(0, "Volumes:\t<none>\n")
        return
    w.write(0, "Volumes:\n")
    for v in volumes:
        w.write(1, f"{v.get('name', '')}:\n")
        if v.get("hostPath") is not None:
            w.write(2, "Type:\tHostPath (bare host directory volume)\n"
                    f"    Path:\t{v['hostPath'].get('path', '')}\n"
                    f"    HostPathType:\t{v['hostPath'].get('type', '')}\n")
        elif v.get("emptyDir") is not None:
            w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n"
                    f"    Medium:\t{v['emptyDir'].get('medium', '')}\n"
                    f"    SizeLimit:\t{v['emptyDir'].get('sizeLimit') or '<unset>'}\n")
        elif v.get("secret") is not None:
            w.write(2, "Type:\tSecret (a volume populated by a Secret)\n"
                    f"    SecretName:\t{v['secret'].get('secretName', '')}\n"
                    f"    Optional:\t{str(bool(v['secret'].get('optional'))).lower()}\n")
        elif v.get("configMap") is not None:
            w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n"
                    f"    Name:\t{v['configMap'].get('name', '')}\n"
                    f"    Optional:\t{str(bool(v['configMap'].get('optional'))).lower()}\n")
        elif v.get("persistentVolumeClaim") is not None:
            claim = v["persistentVolumeClaim"]
            w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the "
                    f"same namespace)\n    ClaimName:\t{claim.get('claimName', '')}\n"
                    f"    ReadOnly:\t{str(bool(claim.get('readOnly'))).lower()}\n")
        elif v.get("downwardAPI") is not None:
            w.write(2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n"
                    "    Items:\n")
            for item in v["downwardAPI"].get("items") or []:
                ref = (item.get("fieldRef") or {}).get("fieldPath") or \
                    (item.get("resourceFieldRef") or {}).get("resource", "")
                w.write(3, f"{ref} -> {item.get('path', '')}\n")
        elif v.get("projected") is not None:
            w.write(2, "Type:\tProjected (a volume that contains injected data from multiple "
                    "sources)\n")
            for source in v["projected"].get("sources") or []:
                if source.get("secret") is not None:
                    w.write(2, f"SecretName:\t{source['secret'].get('name', '')}\n"
                            f"    SecretOptionalName:\t{_optional(source['secret'].get('optional'))}\n")
                elif source.get("downwardAPI") is not None:
                    w.write(2, "DownwardAPI:\ttrue\n")
                elif source.get("configMap") is not None:
                    w.write(2, f"ConfigMapName:\t{source['configMap'].get('name', '')}\n"
                            f"    ConfigMapOptional:\t{_optional(source['configMap'].get('optional'))}\n")
                elif source.get("serviceAccountToken") is not None:
                    seconds = source["serviceAccountToken"].get("expirationSeconds", 3600)
                    w.write(2, f"TokenExpirationSeconds:\t{seconds}\n")
        else:
            kind = next((k for k in v if k != "name"), "")
            w.write(2, f"Type:\t{kind[:1].upper() + kind[1:]}\n")


def _describe_state(w: PrefixWriter, title: str, state: Object) -> None:
    """describeStatus."""
    if "running" in state:
        w.write(2, f"{title}:\tRunning\n")
        w.write(3, f"Started:\t{rfc1123z((state['running'] or {}).get('startedAt'))}\n")
    elif "terminated" in state:
        term = state["terminated"] or {}
        w.write(2, f"{title}:\tTerminated\n")
        if term.get("reason"):
            w.write(3, f"Reason:\t{term['reason']}\n")
        if term.get("message"):
            w.write(3, f"Message:\t{term['message']}\n")
        w.write(3, f"Exit Code:\t{term.get('exitCode', 0)}\n")
        if term.get("signal"):
            w.write(3, f"Signal:\t{term['signal']}\n")
        w.write(3, f"Started:\t{rfc1123z(term.get('startedAt'))}\n")
        w.write(3, f"Finished:\t{rfc1123z(term.get('finishedAt'))}\n")
    else:
        w.write(2, f"{title}:\tWaiting\n")
        if (state.get("waiting") or {}).get("reason"):
            w.write(3, f"Reason:\t{state['waiting']['reason']}\n")


def describe_probe(probe: Object) -> str:
    """DescribeProbe: the handler, then delay/timeout/period and the thresholds (defaulted)."""
    attrs = (f"delay={probe.get('initialDelaySeconds', 0)}s timeout={probe.get('timeoutSeconds', 1)}s "
             f"period={probe.get('periodSeconds', 10)}s successThreshold={probe.get('successThreshold', 1)} "
             f"failureThreshold={probe.get('failureThreshold', 3)}")
    if probe.get("exec"):
        return f"exec [{' '.join(map(str, probe['exec'].get('command') or []))}] {attrs}"
    if probe.get("httpGet"):
        get = probe["httpGet"]
        scheme = str(get.get("scheme", "HTTP")).lower()
        return f"http-get {scheme}://{get.get('host', '')}:{get.get('port', '')}{get.get('path', '')} {attrs}"
    if probe.get("tcpSocket"):
        sock = probe["tcpSocket"]
        return f"tcp-socket {sock.get('host', '')}:{sock.get('port', '')} {attrs}"
    return f"unknown {attrs}"


def describe_events(w: PrefixWriter, events: list[Object], now: float) -> None:
    """DescribeEvents: its own column block (a flush first), oldest first."""
    if not events:
        w.write(0, "Events:\t<none>\n")
        return
    w.flush()
    w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
    w.write(1, "----\t------\t----\t----\t-------\n")
    for e in sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""):
        first = since(e.get("eventTime") or e.get("firstTimestamp"), now)
        count = int(e.get("count") or 0)
        age = f"{since(e.get('lastTimestamp'), now)} (x{count} over {first})" if count > 1 else first
        source = (e.get("source") or {}).get("component") or e.get("reportingController") or ""
        message = str(e.get("message", "")).strip()
        if (e.get("involvedObject") or {}).get("fieldPath"):
            message = f"{e['involvedObject']['fieldPath']}: {message}"
        w.write(1, f"{e.get('type', '')}\t{e.get('reason', '')}\t{age}\t{source}\t{message}\n")


def describe_generic(client: Client, obj: Object, events: list[Object], now: float) -> str:
    """GenericDescriberFor: name, namespace, labels, annotations, then the events."""
    meta = obj.get("metadata") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    describe_events(w, events, now)
    return w.text()
