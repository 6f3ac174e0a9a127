"""What a node's containers use: the simulated CPU and memory behind the kubelet's resource metrics.

Upstream the kubelet reads usage from the CRI (ListPodSandboxStats, ListContainerStats) or
cAdvisor and serves it at /metrics/resource (pkg/kubelet/metrics/collectors/resource_metrics.go:
node_cpu_usage_seconds_total, node_memory_working_set_bytes, container_cpu_usage_seconds_total,
container_memory_working_set_bytes, container_start_time_seconds) and /stats/summary
(pkg/kubelet/server/stats/summary.go). metrics-server scrapes the first every 15 s.

Nothing runs here, so usage is a model, on the virtual clock and deterministic:

- every running container idles at IDLE_CPU and IDLE_MEMORY, or at what its behavior says
  (`kubelab.dev/behavior: "cpu=250m,memory=64Mi"`, kubelab/kubelet/workload.py);
- a load (`c.faults.load("deployment/web", cpu="800m")`, a LoadGenerator shared by the nodes
  as the image registry is) adds its CPU and memory, shared evenly by the running pods its
  selector matches, as a Service spreads the requests that cost it;
- `Container.usage`, when set (with `set_usage(runtime, container, usage)`, which first brings
  the counters to now), is the container's own process speaking (the seam a container process
  model sets: `yes > /dev/null` burns a whole core) and replaces both;
- CPU never exceeds the container's `limits.cpu` (the CFS quota); memory is not capped here.

CPU is reported as upstream does, as a counter of core-seconds: each read adds the rate in
force since the previous read, and a load or usage change first brings the counters to that
instant (a change in the number of pods sharing a load counts from the next read). A rate is
only known from two reads, which is why metrics-server cannot tell a fresh container's usage
before its second scrape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubelab.api.labels import Selector
from kubelab.api.quantity import parse_quantity

if TYPE_CHECKING:
    from kubelab.kubelet.runtime import Container, ContainerRuntime

__all__ = ["IDLE_CPU", "IDLE_MEMORY", "NODE_OVERHEAD_CPU", "NODE_OVERHEAD_MEMORY", "ContainerStats",
           "CpuAccount", "Demand", "LoadGenerator", "NodeStats", "PodStats", "Usage", "checkpoint",
           "resource_metrics", "set_usage", "usage_of"]

NANO = 1_000_000_000
IDLE_CPU = 1_000_000             # 1m in nanocores: an idle nginx
IDLE_MEMORY = 4 * 1024 * 1024    # 4Mi working set
# What the node itself uses besides its containers (systemd, containerd, the kubelet).
NODE_OVERHEAD_CPU = 50_000_000   # 50m
NODE_OVERHEAD_MEMORY = 512 * 1024 * 1024


@dataclass(frozen=True)
class Usage:
    """An instantaneous usage: CPU in nanocores, memory (working set) in bytes."""

    cpu: int = 0
    memory: int = 0


@dataclass(frozen=True)
class Demand:
    """A load on the pods a selector matches in a namespace: cpu (nanocores) and memory
    (bytes) in total, shared evenly by those pods."""

    namespace: str
    selector: Selector
    cpu: int = 0
    memory: int = 0


@dataclass
class LoadGenerator:
    """The loads on the cluster's workloads, by name ("deployment/web"). One for the whole
    cluster: a pod's share depends on how many pods run the workload on every node."""

    demands: dict[str, Demand] = field(default_factory=dict)
    runtimes: list[ContainerRuntime] = field(default_factory=list)

    def set(self, name: str, demand: Demand) -> None:
        self.checkpoint()
        self.demands[name] = demand

    def clear(self, name: str | None = None) -> None:
        self.checkpoint()
        if name is None:
            self.demands.clear()
        else:
            self.demands.pop(name, None)

    def checkpoint(self) -> None:
        """Bring every running container's CPU counter to now at the rates in force until now,
        before the rates change."""
        for runtime in self.runtimes:
            checkpoint(runtime)

    def share(self, runtime: ContainerRuntime, c: Container) -> Usage:
        """What the loads add to container c of runtime (0 when none matches its pod)."""
        sandbox = runtime.sandboxes.get(c.pod_uid)
        if sandbox is None or not self.demands:
            return Usage()
        cpu = memory = 0
        for demand in self.demands.values():
            if not _matches(demand, sandbox.namespace, sandbox.labels):
                continue
            pods = sum(1 for r in self.runtimes if r.powered for s in r.sandboxes.values()
                       if _matches(demand, s.namespace, s.labels) and _running(r, s.pod_uid))
            here = [x for x in runtime.pod_containers(c.pod_uid) if x.state == "CONTAINER_RUNNING"]
            if pods and here:
                cpu += demand.cpu // pods // len(here)
                memory += demand.memory // pods // len(here)
        return Usage(cpu, memory)


def _matches(demand: Demand, namespace: str, labels: Mapping[str, str]) -> bool:
    return namespace == demand.namespace and bool(labels) and demand.selector.matches(labels)


def _running(runtime: ContainerRuntime, pod_uid: str) -> bool:
    return any(c.state == "CONTAINER_RUNNING" for c in runtime.pod_containers(pod_uid))


def usage_of(runtime: ContainerRuntime, c: Container) -> Usage:
    """The container's usage now: what set_usage gave it; else what its process burns, or
    idle, plus its share of the loads; CPU capped at its limit. (A process's own usage changes
    without a checkpoint, so the CPU counter catches up at the next read.)"""
    own = c.process_usage  # what its process model burns (`yes > /dev/null`, `stress --vm`)
    w = c.workload
    load = runtime.load.share(runtime, c) if runtime.load is not None else Usage()
    if c.usage is not None:
        usage = c.usage
    else:  # what the process burns, else the script's or the idle figure, plus the loads
        cpu = own["cpu"] * 1_000_000 or (IDLE_CPU if w.cpu is None else w.cpu)
        memory = own["memory"] or (IDLE_MEMORY if w.memory is None else w.memory)
        usage = Usage(cpu + load.cpu, memory + load.memory)
    limit = c.workload.cpu_limit
    return Usage(min(usage.cpu, limit), usage.memory) if limit is not None else usage


def checkpoint(runtime: ContainerRuntime) -> None:
    """Advance the counters of a node's running containers to now (before a rate changes)."""
    now = runtime.clock.now
    for c in runtime.running():
        _cpu_seconds(runtime, c, now)


def set_usage(runtime: ContainerRuntime, c: Container, usage: Usage | None) -> None:
    """The process seam: container c's own process now uses `usage` (None: the model again).
    The counters are brought to now first, so the old rate counts until this instant."""
    checkpoint(runtime)
    c.usage = usage


def _cpu_seconds(runtime: ContainerRuntime, c: Container, now: float) -> float:
    """The container's CPU counter (core-seconds) now: the rate in force since the last read,
    over the time since then; a first read counts the current rate since the start."""
    rate = usage_of(runtime, c).cpu
    since = c.cpu_counted_at if c.cpu_counted_at is not None else (c.started_at or now)
    previous = c.cpu_rate if c.cpu_counted_at is not None else rate
    c.cpu_seconds += previous * max(0.0, now - since) / NANO
    c.cpu_counted_at, c.cpu_rate = now, rate
    return c.cpu_seconds


@dataclass(frozen=True)
class ContainerStats:
    name: str
    start_time: float
    cpu_seconds: float           # container_cpu_usage_seconds_total
    memory: int                  # container_memory_working_set_bytes


@dataclass(frozen=True)
class PodStats:
    namespace: str
    name: str
    uid: str
    containers: tuple[ContainerStats, ...]


@dataclass(frozen=True)
class NodeStats:
    """One scrape of a node's /metrics/resource: the node's counters and its pods'."""

    node: str
    time: float
    cpu_seconds: float           # node_cpu_usage_seconds_total
    memory: int                  # node_memory_working_set_bytes
    pods: tuple[PodStats, ...]

    def prometheus_text(self) -> str:
        """The endpoint's body, in the exposition format the kubelet writes (times in ms)."""
        ms = int(self.time * 1000)
        lines = ["# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time "
                 "consumed by the container in core-seconds",
                 "# TYPE container_cpu_usage_seconds_total counter"]
        lines += [f'container_cpu_usage_seconds_total{{container="{c.name}",namespace='
                  f'"{p.namespace}",pod="{p.name}"}} {c.cpu_seconds:.9g} {ms}'
                  for p in self.pods for c in p.containers]
        lines += ["# HELP container_memory_working_set_bytes [STABLE] Current working set of "
                  "the container in bytes", "# TYPE container_memory_working_set_bytes gauge"]
        lines += [f'container_memory_working_set_bytes{{container="{c.name}",namespace='
                  f'"{p.namespace}",pod="{p.name}"}} {c.memory} {ms}'
                  for p in self.pods for c in p.containers]
        lines += ["# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by "
                  "the node in core-seconds", "# TYPE node_cpu_usage_seconds_total counter",
                  f"node_cpu_usage_seconds_total {self.cpu_seconds:.9g} {ms}",
                  "# HELP node_memory_working_set_bytes [STABLE] Current working set of the node "
                  "in bytes", "# TYPE node_memory_working_set_bytes gauge",
                  f"node_memory_working_set_bytes {self.memory} {ms}"]
        return "\n".join(lines) + "\n"


def resource_metrics(runtime: ContainerRuntime) -> NodeStats:
    """What the node's kubelet serves at /metrics/resource now (every running container of a
    pod whose sandbox is ready; the node adds its own overhead)."""
    now = runtime.clock.now
    pods: list[PodStats] = []
    node_rate, node_memory = NODE_OVERHEAD_CPU, NODE_OVERHEAD_MEMORY
    for uid, sandbox in sorted(runtime.sandboxes.items(), key=lambda kv: (kv[1].namespace,
                                                                          kv[1].name, kv[0])):
        if sandbox.state != "SANDBOX_READY":
            continue
        stats = []
        for c in _latest_running(runtime.pod_containers(uid)):
            seconds = _cpu_seconds(runtime, c, now)
            memory = usage_of(runtime, c).memory
            stats.append(ContainerStats(c.name, c.started_at or now, seconds, memory))
            node_rate += c.cpu_rate
            node_memory += memory
        if stats:
            pods.append(PodStats(sandbox.namespace, sandbox.name or uid, uid, tuple(stats)))
    # The node's own counter, kept the same way: its containers' rates plus its overhead.
    account = runtime.node_cpu
    if account.counted_at is None:
        account.seconds = NODE_OVERHEAD_CPU * now / NANO
    else:
        account.seconds += account.rate * max(0.0, now - account.counted_at) / NANO
    account.counted_at, account.rate = now, node_rate
    return NodeStats(runtime.node, now, account.seconds, node_memory, tuple(pods))


@dataclass
class CpuAccount:
    """A node's CPU counter between reads (the containers keep theirs on Container)."""

    seconds: float = 0.0
    counted_at: float | None = None
    rate: int = 0


def _latest_running(containers: Iterable[Container]) -> list[Container]:
    return [c for c in containers if c.state == "CONTAINER_RUNNING"]


def parse_usage(cpu: Any = None, memory: Any = None) -> Usage:
    """Usage from quantities ("800m", "1", "64Mi")."""
    return Usage(parse_quantity(cpu).milli_value() * 1_000_000 if cpu is not None else 0,
                 parse_quantity(memory).value() if memory is not None else 0)
