"""The prober: liveness, readiness and startup probes, one worker per (pod, container, kind).

Follows pkg/kubelet/prober/worker.go and prober.go:
- a worker wakes every periodSeconds (default 10). If the kubelet itself started less than one
  period ago it first sleeps a random part of a period, so that a restarted kubelet does not
  probe everything at once;
- nothing is probed before initialDelaySeconds have passed since the container started, and
  liveness and readiness wait until the startup probe (if any) has succeeded;
- a result only counts after failureThreshold (default 3) failures in a row, or successThreshold
  (default 1) successes; until then the previous result stands. Initial results: readiness
  Failure, liveness Success, startup Unknown;
- each failed attempt is an event: Warning Unhealthy `Liveness probe failed: HTTP probe failed
  with statuscode: 500`. A liveness or startup result of Failure makes the kubelet restart the
  container (kuberuntime_manager.go); the worker then waits for the new container.
- a probe slower than timeoutSeconds (default 1) fails with the client's timeout message.

A container that runs its command (the process model) answers an exec probe by running the
probe's command in it (ExecSync: exit 0 passes, its output is the failure's message, a command
still running at once is a timeout); httpGet, tcpSocket and grpc probes pass while it runs. A
scripted container (kubelab.dev/behavior) answers every probe according to its Workload
(workload.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubelab.client.events import WARNING
from kubelab.kubelet.runtime import RUNNING, Container, ContainerRuntime
from kubelab.sim.clock import Clock, Timer

__all__ = ["FAILURE", "SUCCESS", "UNKNOWN", "ProbeManager", "ProbeSpec", "probe_message"]

SUCCESS, FAILURE, UNKNOWN = "Success", "Failure", "Unknown"
KINDS = ("startup", "liveness", "readiness")
INITIAL = {"readiness": FAILURE, "liveness": SUCCESS, "startup": UNKNOWN}

Recorder = Callable[[dict[str, Any], str, str, str], None]


@dataclass(frozen=True)
class ProbeSpec:
    """A v1.Probe with the API's defaults (SetDefaults_Probe)."""

    handler: dict[str, Any]
    initial_delay: int = 0
    period: int = 10
    timeout: int = 1
    success_threshold: int = 1
    failure_threshold: int = 3

    @classmethod
    def from_api(cls, probe: dict[str, Any]) -> ProbeSpec:
        return cls({k: v for k, v in probe.items() if k in ("httpGet", "tcpSocket", "exec", "grpc")},
                   int(probe.get("initialDelaySeconds") or 0), int(probe.get("periodSeconds") or 10),
                   int(probe.get("timeoutSeconds") or 1), int(probe.get("successThreshold") or 1),
                   int(probe.get("failureThreshold") or 3))


def probe_message(spec: ProbeSpec, ip: str, timed_out: bool) -> str:
    """What prober.go reports for a failed probe of each handler type."""
    if "httpGet" in spec.handler:
        h = spec.handler["httpGet"] or {}
        url = f"{str(h.get('scheme') or 'HTTP').lower()}://{h.get('host') or ip}:{h.get('port', 80)}" \
              f"{h.get('path') or '/'}"
        if timed_out:
            return f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        return "HTTP probe failed with statuscode: 503"
    if "tcpSocket" in spec.handler:
        port = (spec.handler["tcpSocket"] or {}).get("port", 80)
        return f"dial tcp {ip}:{port}: " + ("i/o timeout" if timed_out else "connect: connection refused")
    if "grpc" in spec.handler:
        port = (spec.handler["grpc"] or {}).get("port", 0)
        return f'timeout: failed to connect service ":{port}" within {spec.timeout}s' if timed_out \
            else 'service unhealthy (responded with "NOT_SERVING")'
    command = " ".join(str(a) for a in ((spec.handler.get("exec") or {}).get("command") or []))
    return f'command "{command}" timed out' if timed_out else ""


class _Worker:
    def __init__(self, manager: ProbeManager, pod: dict[str, Any], container: str, kind: str,
                 spec: ProbeSpec) -> None:
        self.m, self.pod, self.container, self.kind, self.spec = manager, pod, container, kind, spec
        self.uid = pod["metadata"]["uid"]
        self.container_id = ""
        self.last, self.run = UNKNOWN, 0
        self.on_hold = False
        self.timer: Timer | None = None

    def start(self) -> None:
        delay = 0.0
        if self.spec.period > self.m.clock.now - self.m.started_at:
            delay = self.m.rand.random() * self.spec.period
        self.timer = self.m.clock.call_later(delay, self.tick, background=True)

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def tick(self) -> None:
        if self.do_probe():
            self.timer = self.m.clock.call_later(self.spec.period, self.tick, background=True)

    def do_probe(self) -> bool:
        c = self.m.current(self.uid, self.container)
        if c is None:
            return True  # not created yet (or removed): wait for more information
        if c.id != self.container_id:
            self.m.forget(self.container_id)
            self.container_id = c.id
            self.m.results[(c.id, self.kind)] = INITIAL[self.kind]
            self.on_hold, self.last, self.run = False, UNKNOWN, 0
        if self.on_hold:
            return True
        if c.state != RUNNING:
            self.m.results[(c.id, self.kind)] = FAILURE
            return True
        if (self.pod["metadata"].get("deletionTimestamp") and self.kind != "readiness"):
            self.m.results[(c.id, self.kind)] = SUCCESS
            return False
        running_for = self.m.clock.now - (c.started_at or self.m.clock.now)
        if int(running_for) < self.spec.initial_delay:
            return True
        started = self.m.started(c)
        if self.kind == "startup" and started:
            return True
        if self.kind != "startup" and not started:
            return True
        command = (self.spec.handler.get("exec") or {}).get("command")
        if command and c.spec is not None and not c.spec.scripted:
            # an exec probe runs its command in the container (the process model): its exit
            # code decides, its output is the message (prober.go runProbe, execprobe)
            code, output = self.m.runtime.probe_exec(c, [str(w) for w in command], self.spec.timeout)
            timed_out, ok = code is None, code == 0
            message = output if code is not None else probe_message(self.spec, "", True)
        else:
            timed_out = c.workload.probe_latency >= self.spec.timeout
            ok = not timed_out and c.workload.responds(self.kind, running_for)
            message = probe_message(self.spec, self.m.ip(self.uid), timed_out)
        result = SUCCESS if ok else FAILURE
        if not ok:
            self.m.record(self.pod, WARNING, "Unhealthy",
                          f"{self.kind.capitalize()} probe failed: {message}")
        if result == self.last:
            self.run += 1
        else:
            self.last, self.run = result, 1
        if (result == FAILURE and self.run < self.spec.failure_threshold) or \
                (result == SUCCESS and self.run < self.spec.success_threshold):
            return True
        previous = self.m.results.get((c.id, self.kind))
        self.m.results[(c.id, self.kind)] = result
        if previous != result:
            self.m.on_change(self.uid)
        if self.kind in ("liveness", "startup") and result == FAILURE:
            self.on_hold, self.run = True, 0   # until the kubelet has restarted the container
        return True


class ProbeManager:
    """Holds the workers and their results; the kubelet reads `result()` when it syncs a pod."""

    def __init__(self, runtime: ContainerRuntime, clock: Clock, rand: Any, record: Recorder,
                 on_change: Callable[[str], None]) -> None:
        self.runtime, self.clock, self.rand, self.record = runtime, clock, rand, record
        self.on_change = on_change            # a result changed: sync that pod
        self.started_at = clock.now
        self.results: dict[tuple[str, str], str] = {}  # (container id, kind) -> result
        self._workers: dict[str, list[_Worker]] = {}   # pod uid -> its workers

    def add_pod(self, pod: dict[str, Any]) -> None:
        uid = pod["metadata"]["uid"]
        if uid in self._workers:
            for w in self._workers[uid]:
                w.pod = pod   # a newer copy (deletionTimestamp matters to the workers)
            return
        workers = []
        for container in (pod.get("spec") or {}).get("containers") or []:
            for kind in KINDS:
                probe = container.get(f"{kind}Probe")
                if isinstance(probe, dict):
                    workers.append(_Worker(self, pod, container.get("name", ""), kind,
                                           ProbeSpec.from_api(probe)))
        self._workers[uid] = workers
        for w in workers:
            w.start()

    def remove_pod(self, uid: str) -> None:
        for w in self._workers.pop(uid, []):
            w.stop()
            self.forget(w.container_id)

    def stop(self) -> None:
        for uid in list(self._workers):
            self.remove_pod(uid)

    def forget(self, container_id: str) -> None:
        for kind in KINDS:
            self.results.pop((container_id, kind), None)

    def result(self, container: Container, kind: str, has_probe: bool) -> str:
        if not has_probe:
            return SUCCESS
        return self.results.get((container.id, kind), INITIAL[kind])

    # what workers need to know
    def current(self, uid: str, name: str) -> Container | None:
        mine = [c for c in self.runtime.pod_containers(uid) if c.name == name]
        return mine[-1] if mine else None

    def started(self, c: Container) -> bool:
        pod_workers = self._workers.get(c.pod_uid, [])
        has_startup = any(w.container == c.name and w.kind == "startup" for w in pod_workers)
        return c.state == RUNNING and (not has_startup or
                                       self.results.get((c.id, "startup")) == SUCCESS)

    def ip(self, uid: str) -> str:
        sandbox = self.runtime.sandboxes.get(uid)
        return sandbox.ip if sandbox else ""
