"""NodesView: each node, what the API says about it, its pods, and requested vs allocatable.

Requests are counted the way `kubectl describe node` counts them under "Allocated resources"
(staging/src/k8s.io/kubectl/pkg/describe/describe.go): the pods bound to the node that have
not terminated (phase not Succeeded or Failed), each pod's requests as the scheduler adds them
up (kubelab.scheduler.types.pod_requests, from component-helpers' PodRequests), as a share of
the node's status.allocatable, truncated to a whole percent.

Beside the API's view the panel shows the machine's: powered off (c.faults.kill_node) or cut
off the network (c.faults.partition). The difference between the two is the lesson: a dead
node still says Ready until the node lifecycle controller notices the missing heartbeats.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W

from kubelab.api.quantity import parse_quantity
from kubelab.scheduler.types import pod_requests
from kubelab.viz.observe import pod_phase, quiet

__all__ = ["NodeRow", "NodesView", "node_rows"]


@dataclass
class NodeRow:
    name: str
    status: str                                        # as `kubectl get nodes` prints it
    pods: list[tuple[str, str]] = field(default_factory=list)  # (name, phase) of non-terminated pods
    requested: dict[str, int] = field(default_factory=dict)    # cpu in millicores, memory in bytes
    allocatable: dict[str, int] = field(default_factory=dict)
    machine: str = ""                                  # "", "powered off", "network cut"

    def percent(self, resource: str) -> int:
        total = self.allocatable.get(resource, 0)
        return int(self.requested.get(resource, 0) * 100 / total) if total else 0


def _status(node: dict[str, Any]) -> str:
    """kubectl's STATUS column: the Ready condition, plus SchedulingDisabled when cordoned."""
    ready = next((c for c in (node.get("status") or {}).get("conditions") or ()
                  if c.get("type") == "Ready"), None)
    text = "Unknown" if ready is None else {"True": "Ready", "False": "NotReady"}.get(
        str(ready.get("status")), "Unknown")
    return text + (",SchedulingDisabled" if (node.get("spec") or {}).get("unschedulable") else "")


def _amount(resource: str, value: Any) -> int:
    quantity = parse_quantity(str(value))
    return quantity.milli_value() if resource == "cpu" else quantity.value()


def node_rows(cluster: Any) -> list[NodeRow]:
    """One row per node, read quietly through the administrator's client."""
    with quiet(cluster):
        nodes = cluster.client.list("nodes")["items"]
        pods = cluster.client.list("pods")["items"]
    rows = {}
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = node["metadata"]["name"]
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        rows[name] = NodeRow(name, _status(node), allocatable={
            r: _amount(r, allocatable[r]) for r in ("cpu", "memory", "pods") if r in allocatable})
        runtime = cluster.runtimes.get(name)
        link = cluster.faults._links.get(name)  # only a node whose link was made (never make one)
        if runtime is not None and not runtime.powered:
            rows[name].machine = "powered off"
        elif link is not None and not link.up:
            rows[name].machine = "network cut"
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        row = rows.get((pod.get("spec") or {}).get("nodeName") or "")
        if row is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        row.pods.append((pod["metadata"]["name"], pod_phase(pod)))
        for resource, amount in pod_requests(pod).items():
            row.requested[resource] = row.requested.get(resource, 0) + amount
        row.requested["pods"] = row.requested.get("pods", 0) + 1
    return list(rows.values())


def _bar(percent: int) -> str:
    colour = "#58d68d" if percent < 80 else "#f5b041" if percent <= 100 else "#e74c3c"
    return (f"<div style='display:inline-block;width:80px;height:8px;background:#eee;"
            f"vertical-align:middle'><div style='width:{min(percent, 100)}%;height:8px;"
            f"background:{colour}'></div></div> {percent}%")


def _human(resource: str, amount: int) -> str:
    if resource == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if resource == "memory":
        for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if amount >= size and amount % size == 0:
                return f"{amount // size}{unit}"
        return f"{amount / (1 << 20):.0f}Mi" if amount >= 1 << 20 else str(amount)
    return str(amount)


class NodesView:
    """Each node with its pods and requested vs allocatable cpu, memory and pod slots."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.widget = W.HTML()
        self.widget.add_class("kubelab-nodes")
        self.rows: list[NodeRow] = []
        self.refresh()

    def refresh(self) -> None:
        self.rows = node_rows(self.cluster)
        cells = []
        for row in self.rows:
            status_colour = "#1e8449" if row.status.startswith("Ready") else "#c0392b"
            machine = (f" <b style='color:#c0392b'>⚡ {row.machine}</b>" if row.machine else "")
            usage = "".join(
                f"<tr><td>{r}</td><td>{_human(r, row.requested.get(r, 0))} / "
                f"{_human(r, row.allocatable[r])}</td><td>{_bar(row.percent(r))}</td></tr>"
                for r in ("cpu", "memory", "pods") if r in row.allocatable)
            pods = "".join(f"<li><code>{html.escape(name)}</code> {html.escape(phase)}</li>"
                           for name, phase in row.pods) or "<li><i>no pods</i></li>"
            cells.append(
                f"<div class='kubelab-node' data-node='{html.escape(row.name)}' style='display:"
                f"inline-block;vertical-align:top;border:1px solid #aab7b8;border-radius:4px;"
                f"padding:4px 8px;margin:2px;min-width:230px'><b>{html.escape(row.name)}</b> "
                f"<span style='color:{status_colour}'>{html.escape(row.status)}</span>{machine}"
                f"<table style='font-size:11px'>{usage}</table>"
                f"<ul style='margin:2px 0;padding-left:16px;font-size:11px'>{pods}</ul></div>")
        self.widget.value = "".join(cells) or "<i>this cluster has no nodes</i>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]
