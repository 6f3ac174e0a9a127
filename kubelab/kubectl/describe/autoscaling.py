"""`kubectl describe hpa` (pkg/describe/describe.go: describeHorizontalPodAutoscalerV2 and
printDirectionBehavior), for every metric type."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import (
    annotations_multiline,
    describe_events,
    labels_multiline,
    rfc1123z,
)
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["describe_horizontal_pod_autoscaler"]


def describe_horizontal_pod_autoscaler(client: Client, hpa: Object, events: list[Object],
                                       now: float) -> str:
    meta, spec, status = hpa["metadata"], hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    w.write(0, f"Reference:\t{ref.get('kind', '')}/{ref.get('name', '')}\n")
    w.write(0, "Metrics:\t( current / target )\n")
    statuses = status.get("currentMetrics") or []
    for i, metric in enumerate(spec.get("metrics") or []):
        kind = metric.get("type")
        if kind not in ("Resource", "ContainerResource"):  # --- hpacsi ---
            _custom_metric(w, metric, statuses[i] if i < len(statuses) else {})
            continue
        key = "resource" if kind == "Resource" else "containerResource"
        source = metric.get(key) or {}
        target = source.get("target") or {}
        current = ((statuses[i].get(key) or {}).get("current") or {}) if i < len(statuses) else {}
        name = source.get("name", "")
        where = "on pods" if kind == "Resource" else f"of container \"{source.get('container', '')}\" on pods"
        if target.get("averageValue") is not None:
            w.write(1, f"resource {name} {where}:\t{current.get('averageValue') or '<unknown>'} / "
                       f"{target['averageValue']}\n")
        else:
            have = "<unknown>" if current.get("averageUtilization") is None else \
                f"{current['averageUtilization']}% ({current.get('averageValue', '')})"
            want = "<auto>" if target.get("averageUtilization") is None else \
                f"{target['averageUtilization']}%"
            w.write(1, f"resource {name} {where}  (as a percentage of request):\t{have} / {want}\n")
    minimum = spec.get("minReplicas")
    w.write(0, f"Min replicas:\t{'<unset>' if minimum is None else minimum}\n")
    w.write(0, f"Max replicas:\t{spec.get('maxReplicas', 0)}\n")
    behavior = spec.get("behavior")
    if behavior is not None:
        w.write(0, "Behavior:\n")
        for direction, rules in (("Scale Up", behavior.get("scaleUp")),
                                 ("Scale Down", behavior.get("scaleDown"))):
            _direction(w, direction, rules)
    w.write(0, f"{ref.get('kind', '')} pods:\t")
    w.write(0, f"{status.get('currentReplicas', 0)} current / {status.get('desiredReplicas', 0)} desired\n")
    if status.get("conditions"):
        w.write(0, "Conditions:\n")
        w.write(1, "Type\tStatus\tReason\tMessage\n")
        w.write(1, "----\t------\t------\t-------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')}\t{c.get('status')}\t{c.get('reason', '')}\t{c.get('message', '')}\n")
    describe_events(w, events, now)
    return w.text()


def _direction(w: PrefixWriter, direction: str, rules: Object | None) -> None:
    """printDirectionBehavior."""
    if rules is None:
        return
    w.write(1, f"{direction}:\n")
    if rules.get("stabilizationWindowSeconds") is not None:
        w.write(2, f"Stabilization Window: {rules['stabilizationWindowSeconds']} seconds\n")
    if rules.get("policies"):
        w.write(2, f"Select Policy: {rules.get('selectPolicy') or 'Max'}\n")
        w.write(2, "Policies:\n")
        for p in rules["policies"]:
            w.write(3, f"- Type: {p.get('type')}\tValue: {p.get('value')}\tPeriod: "
                       f"{p.get('periodSeconds')} seconds\n")


# --- hpacsi ---
def _custom_metric(w: PrefixWriter, metric: Object, status: Object) -> None:
    """The External, Pods and Object cases of describeHorizontalPodAutoscalerV2's switch."""
    kind = str(metric.get("type", ""))
    key = kind[:1].lower() + kind[1:]
    source = metric.get(key) or {}
    target = source.get("target") or {}
    name = (source.get("metric") or {}).get("name", "")
    current = (status.get(key) or {}).get("current") if status.get(key) is not None else None

    def shown(field: str) -> str:
        if current is None:
            return "<unknown>"
        return str(current.get(field)) if current.get(field) is not None else "<nil>"

    if kind == "External":
        if target.get("averageValue") is not None:
            have = "<unknown>" if current is None or current.get("averageValue") is None \
                else str(current["averageValue"])
            w.write(1, f'"{name}" (target average value):\t{have} / {target["averageValue"]}\n')
        else:
            w.write(1, f'"{name}" (target value):\t{shown("value")} / {target.get("value", "<nil>")}\n')
    elif kind == "Pods":
        w.write(1, f'"{name}" on pods:\t{shown("averageValue")} / {target.get("averageValue", "<nil>")}\n')
    elif kind == "Object":
        described = source.get("describedObject") or {}
        w.write(1, f'"{name}" on {described.get("kind", "")}/{described.get("name", "")} ')
        if target.get("type") == "AverageValue":
            w.write(0, f"(target average value):\t{shown('averageValue')} / "
                       f"{target.get('averageValue', '<nil>')}\n")
        else:
            w.write(0, f"(target value):\t{shown('value')} / {target.get('value', '<nil>')}\n")
    else:
        w.write(1, f'<unknown metric type "{kind}">\n')
