"""TriggerTimeTracker (pkg/controller/util/endpoint/trigger_time_tracker.go): the time of the
change that made an Endpoints object change, for its
`endpoints.kubernetes.io/last-change-trigger-time` annotation (the start of the
network-programming latency SLI).

A pod's trigger time is the lastTransitionTime of its Ready condition, a Service's its
creationTimestamp. For a Service seen the first time the answer is its creationTimestamp; after
that, the earliest trigger time that changed since the last sync, or None when none did (the
annotation is then removed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubelab.api import Object
from kubelab.api.meta import parse_time

__all__ = ["TriggerTimeTracker"]


@dataclass
class _State:
    last_pod_trigger_times: dict[str, float] = field(default_factory=dict)
    last_service_trigger_time: float = float("-inf")


def _time(text: str | None) -> float | None:
    return parse_time(text) if text else None


def get_pod_trigger_time(pod: Object) -> float | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return _time(condition.get("lastTransitionTime"))
    return None


def get_service_trigger_time(service: Object) -> float | None:
    return _time(service["metadata"].get("creationTimestamp"))


class TriggerTimeTracker:
    def __init__(self) -> None:
        self.endpoints_states: dict[str, _State] = {}

    def compute_endpoint_last_change_trigger_time(self, namespace: str, service: Object,
                                                  pods: list[Object]) -> float | None:
        key = f"{namespace}/{service['metadata']['name']}"
        was_known = key in self.endpoints_states
        state = self.endpoints_states.get(key) or _State()
        changed: list[float] = []
        pod_trigger_times: dict[str, float] = {}
        for pod in pods:
            when = get_pod_trigger_time(pod)
            if when is not None:
                name = pod["metadata"]["name"]
                pod_trigger_times[name] = when
                if when > state.last_pod_trigger_times.get(name, float("-inf")):
                    changed.append(when)
        service_time = get_service_trigger_time(service)
        if service_time is not None and service_time > state.last_service_trigger_time:
            changed.append(service_time)
        self.endpoints_states[key] = _State(
            pod_trigger_times, float("-inf") if service_time is None else service_time)
        if not was_known:
            return service_time  # a new Service: its creationTimestamp
        return min(changed) if changed else None

    def delete_service(self, namespace: str, name: str) -> None:
        self.endpoints_states.pop(f"{namespace}/{name}", None)
