"""Looking at a cluster without becoming part of its story.

Views (the dashboard, the timeline) read objects through the administrator's client like
anyone else, but their reads are not events of the cluster: if they were recorded, every
refresh of a widget would add "kubectl list pods" rows to the trace and to the sequence
diagram. quiet() switches the trace off while a view looks (the switch benchmarks use too).
The API server's audit log still sees them, as a real one would.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["PHASES", "peek", "pod_phase", "quiet"]

# The order in which views stack and list pod phases; Terminating is kubectl's word for a pod
# with a deletionTimestamp (pkg/printers/internalversion/printers.go printPod), not a phase.
PHASES = ("Running", "Pending", "Terminating", "Succeeded", "Failed", "Unknown")


@contextmanager
def quiet(source: Any) -> Iterator[None]:
    """Reads inside this block leave no trace records. source: a Cluster or a Trace."""
    trace = getattr(source, "trace", source)
    was = trace.enabled
    trace.enabled = False
    try:
        yield
    finally:
        trace.enabled = was


def pod_phase(pod: dict[str, Any]) -> str:
    """The pod's phase, or Terminating once it is being deleted (as kubectl prints it; a pod
    deleted while its node is unreachable, status.reason NodeLost, shows as Unknown)."""
    status = pod.get("status") or {}
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    phase = str(status.get("phase") or "Pending")
    return phase if phase in PHASES else "Unknown"


def peek(cluster: Any, resource: str, namespace: str | None = "default", *,
         label_selector: str = "", field_selector: str = "") -> list[dict[str, Any]]:
    """cluster.get(resource, ...) that leaves no mark in the trace: for run_until predicates
    and views, so that the story you then read shows only what the cluster did."""
    with quiet(cluster):
        items: list[dict[str, Any]] = cluster.get(resource, namespace=namespace,
                                                  label_selector=label_selector,
                                                  field_selector=field_selector)
    return items
