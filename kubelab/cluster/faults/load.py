"""Load on a workload: the CPU and memory its users cost (kubelab/kubelet/stats.py).

Mixed into `Faults` (kubelab/cluster/faults/faults.py); recorded in the trace like every fault.

    c.faults.load("deployment/web", cpu="800m")     # 800m in all, shared by web's running pods
    c.faults.load("deployment/web", cpu="0")        # the users are gone
    c.faults.clear_load()                           # every load

The load follows the workload's selector, as a Service's traffic would: when an HPA adds pods,
each pod's share falls. metrics-server sees it at its next scrapes (every 15 s), `kubectl top`
and the HPA a scrape after that, since a usage is a rate between two scrapes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api.labels import parse_selector, selector_from_label_selector, selector_from_set
from kubelab.kubelet.stats import Demand, parse_usage

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["LoadFaults"]


class LoadFaults:
    _cluster: Cluster

    def _record(self, name: str, obj: str = "", **detail: Any) -> None: ...

    def load(self, workload: str, cpu: str | int = 0, memory: str | int = 0, *,
             namespace: str = "default") -> None:
        """Put a load of cpu and memory (quantities, in all) on a workload: "deployment/web",
        "replicaset/web-abc", "pod/web-0", or "app=web" (a label selector)."""
        kind, sep, name = workload.partition("/")
        if not sep:
            selector = parse_selector(workload)
        elif kind in ("pod", "pods", "po"):
            pod = self._cluster.client.get("pods", name, namespace)
            selector = selector_from_set((pod.get("metadata") or {}).get("labels") or {})
        else:
            obj = self._cluster.client.get(kind, name, namespace)
            selector = selector_from_label_selector((obj.get("spec") or {}).get("selector"))
        usage = parse_usage(cpu, memory)
        if usage.cpu == 0 and usage.memory == 0:
            self._cluster.load.clear(f"{namespace}/{workload}")
        else:
            self._cluster.load.set(f"{namespace}/{workload}",
                                   Demand(namespace, selector, usage.cpu, usage.memory))
        self._record("load", f"{namespace}/{workload}", cpu=str(cpu), memory=str(memory))

    def clear_load(self) -> None:
        """Every load is gone: containers idle."""
        self._cluster.load.clear()
        self._record("clear_load", "*")
