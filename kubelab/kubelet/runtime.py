"""A simulated container runtime: what containerd does for one node, behind the CRI.

The kubelet asks it, as it asks containerd over the CRI (k8s.io/cri-api runtime/v1), to
RunPodSandbox (the pod's network namespace and IP), PullImage, CreateContainer, StartContainer,
StopContainer; it lists what exists and is told when a container exits (an "evented PLEG").
Every step takes a little virtual time, drawn from the cluster's seeded generator.

The runtime belongs to the node, not to the kubelet: when the kubelet crashes, containers keep
running and the next kubelet finds them; when the node dies (`power_off`), they are gone.
A container runs its command in the process model (kubelab/kubelet/process/): what it prints
is its log, one line at a time with the time it was written, its exit code ends it (OOMKilled
when its memory grows past the limit), and SIGTERM (StopContainer) ends it at once when its
program handles the signal (nginx, redis, postgres, pause) or else at the SIGKILL that ends the
grace period (`sleep` or `sh` as PID 1 ignore SIGTERM, as in a real container: 137). A container
of a pod with a `kubelab.dev/behavior` annotation follows that script (workload.py) instead.

exec and attach (the CRI's Exec and Attach, which the kubelet's streaming server serves for
pods/exec and pods/attach) run a command in a running container, in its environment and files,
or join its main process: both hand back a Process, the ExecSession the API server returns.
`network` is the pod network the wiring gives (wget, curl, nslookup reach it); serve_http is a
request arriving at a pod's IP, answered by the server that pod runs.

`processes` ties an image to a process the wiring runs (Cluster(anatomy=True): the control
plane's static pods, kube-proxy): image -> "is that process up?". A container of such an image
that starts while its process is down exits at once with code 1, as a binary that cannot come
up does, so the kubelet's CrashLoopBackOff tells the truth; `crash_image` is the process dying.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from kubelab.api.meta import epoch
from kubelab.kubelet.portforward import PortConnection, port_forward
from kubelab.kubelet.process import (
    DEFAULT_APP,
    IO,
    PROGRAMS,
    Attached,
    ContainerNetwork,
    HttpAnswer,
    Process,
    ProcessContext,
    ProcessSpec,
    image_is_known,
    pid1,
    run_argv,
    serve_http,
    term_exit_code,
)
from kubelab.kubelet.registry import ImageRegistry, PullError, normalize_image, repository
from kubelab.kubelet.stats import CpuAccount, LoadGenerator, Usage
from kubelab.kubelet.workload import Workload
from kubelab.sim.clock import Clock, Timer
from kubelab.sim.tasks import Future
from kubelab.sim.trace import Trace

__all__ = ["CREATED", "EXITED", "RUNNING", "Container", "ContainerRuntime", "PullResult", "Sandbox"]

MAX_EXEC_OUTPUT = 1 << 20  # what an exec session keeps unread before it drops the oldest

CREATED, RUNNING, EXITED = "CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED"
SANDBOX_READY, SANDBOX_NOTREADY = "SANDBOX_READY", "SANDBOX_NOTREADY"


@dataclass
class Sandbox:
    id: str
    pod_uid: str
    ip: str
    state: str = SANDBOX_READY
    created_at: float = 0.0
    # PodSandboxConfig's metadata and labels, as the kubelet passes them to RunPodSandbox.
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Container:
    id: str                      # containerd://<64 hex digits>, as containerStatuses show it
    pod_uid: str
    name: str
    attempt: int                 # restartCount: 0 for the first container of that name
    image: str
    image_ref: str
    workload: Workload
    state: str = CREATED
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    exit_code: int = 0
    reason: str = ""
    timers: list[Timer] = field(default_factory=list, repr=False)
    # What the process wrote to stdout and stderr, one entry per line with the time it was
    # written: containerd keeps it in /var/log/pods, the kubelet serves it for pods/log.
    logs: list[tuple[float, str]] = field(default_factory=list, repr=False)
    # What the process model runs (None: the workload script of a kubelab.dev/behavior pod).
    spec: ProcessSpec | None = field(default=None, repr=False)
    context: ProcessContext | None = field(default=None, repr=False)
    process: Process | None = field(default=None, repr=False)
    execs: list[Process] = field(default_factory=list, repr=False)
    message: str = ""            # the termination message (terminationMessagePath)
    _partial: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def process_usage(self) -> dict[str, int]:
        """CPU (millicores) and memory (bytes) the container uses now, for metrics: what
        `yes > /dev/null` burns and `stress --vm` allocates (0 for a scripted workload)."""
        u = self.context.usage if self.context is not None else None
        return {"cpu": u.cpu_millicores if u else 0, "memory": u.memory_bytes if u else 0}
    # The process's own CPU and memory, when something sets it (a container process model):
    # it replaces the idle usage and the loads of kubelab/kubelet/stats.py. None: the model's.
    usage: Usage | None = None
    # The CPU counter of stats.py (container_cpu_usage_seconds_total) between two reads.
    cpu_seconds: float = field(default=0.0, repr=False)
    cpu_counted_at: float | None = field(default=None, repr=False)
    cpu_rate: int = field(default=0, repr=False)


@dataclass(frozen=True)
class PullResult:
    image_ref: str
    size: int
    seconds: float               # the pull itself (the kubelet adds its own queueing time)


class ContainerRuntime:
    def __init__(self, node: str, registry: ImageRegistry, clock: Clock, rand: random.Random, *,
                 pod_cidr: str = "10.244.1.0/24", node_ip: str = "172.18.0.2",
                 trace: Trace | None = None) -> None:
        self.node, self.registry, self.clock, self.rand, self.trace = node, registry, clock, rand, trace
        self.pod_cidr, self.node_ip = pod_cidr, node_ip
        self.images: dict[str, PullResult] = {}     # normalized ref -> what was pulled
        self.sandboxes: dict[str, Sandbox] = {}      # pod uid -> its current sandbox
        self.containers: dict[str, Container] = {}   # id -> container (exited ones too)
        self._by_pod: dict[str, list[Container]] = {}  # pod uid -> its containers
        self.powered = True
        self.version = 0                             # +1 whenever anything above changes
        self._boot = 0                               # +1 per power-off: older work is void
        self._attempts: dict[tuple[str, str], int] = {}  # on disk: survives a reboot
        self._ips = itertools.count(2)
        self._ids = itertools.count(1)
        self._listeners: list[Callable[[str], None]] = []
        self.processes: dict[str, Callable[[], bool]] = {}  # image -> is its process up?
        self.network: ContainerNetwork | None = None         # the pod network (the wiring's)
        # --- i31-storage --- the node's directories (hostPath, local volumes): path -> files
        self.host_paths: dict[str, dict[str, bytes]] = {}
        # The cluster's loads (kubelab/kubelet/stats.py), shared by every node; the node's CPU counter.
        self.load: LoadGenerator | None = None
        self.node_cpu = CpuAccount()

    @classmethod
    def for_node(cls, node: str, index: int, registry: ImageRegistry, clock: Clock,
                 rand: random.Random, trace: Trace | None = None) -> ContainerRuntime:
        """The runtime of the index-th node (0-based), with its addresses as kind gives them:
        pod CIDR 10.244.<index+1>.0/24 out of the cluster's 10.244.0.0/16 (the node IPAM
        controller's job upstream), node IP 172.18.0.<index+2>."""
        n, ip = index + 1, index + 2
        return cls(node, registry, clock, rand, trace=trace,
                   pod_cidr=f"10.{244 + n // 256}.{n % 256}.0/24",
                   node_ip=f"172.18.{ip // 256}.{ip % 256}")

    # ------------------------------------------------------------------ PLEG

    def subscribe(self, fn: Callable[[str], None]) -> Callable[[], None]:
        """fn(pod_uid) whenever a container of that pod changes state by itself."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _changed(self, pod_uid: str) -> None:
        for fn in list(self._listeners):
            fn(pod_uid)

    # ------------------------------------------------------------------ sandboxes

    def run_pod_sandbox(self, pod_uid: str, *, name: str = "", namespace: str = "",
                        labels: dict[str, str] | None = None) -> Future[Sandbox]:
        """RunPodSandbox: a new network namespace with the next free IP of the node's CIDR."""
        future: Future[Sandbox] = Future()
        sandbox = self._new_sandbox(pod_uid, name, namespace, labels)
        self._later(0.3 + 0.5 * self.rand.random(), self._sandbox_ready, sandbox, future)
        return future

    def _new_sandbox(self, pod_uid: str, name: str, namespace: str,
                     labels: dict[str, str] | None) -> Sandbox:
        prefix = self.pod_cidr.rsplit(".", 1)[0]
        return Sandbox(self._new_id(), pod_uid, f"{prefix}.{(next(self._ips) - 2) % 253 + 2}",
                       name=name, namespace=namespace, labels=dict(labels or {}))

    def _sandbox_ready(self, sandbox: Sandbox, future: Future[Sandbox]) -> None:
        sandbox.created_at = self.clock.now
        self.sandboxes[sandbox.pod_uid] = sandbox
        self.version += 1
        self._record("run-sandbox", sandbox.pod_uid, ip=sandbox.ip)
        future.set_result(sandbox)

    def stop_pod_sandbox(self, pod_uid: str) -> None:
        sandbox = self.sandboxes.get(pod_uid)
        if sandbox is not None and sandbox.state != SANDBOX_NOTREADY:
            sandbox.state = SANDBOX_NOTREADY
            self.version += 1

    def remove_pod(self, pod_uid: str) -> None:
        """RemovePodSandbox and RemoveContainer for everything of a pod (garbage collection)."""
        for c in self._by_pod.pop(pod_uid, ()):
            self._cancel(c)
            del self.containers[c.id]
        self.sandboxes.pop(pod_uid, None)
        self.version += 1

    # ------------------------------------------------------------------ images

    def image_status(self, image: str) -> PullResult | None:
        return self.images.get(normalize_image(image))

    def pull_image(self, image: str) -> Future[PullResult]:
        """PullImage: resolve the manifest with the registry, download what is missing."""
        future: Future[PullResult] = Future()
        ref = normalize_image(image)
        try:
            seconds = self.registry.resolve(image, self.rand)
        except PullError as err:
            self._later(0.1 + 0.2 * self.rand.random(), future.set_error, err)
            return future
        if ref not in self.images:
            seconds += self.registry.download_seconds(image, self.rand)
        result = PullResult(f"{repository(ref)}@sha256:{_digest(ref)}",
                            self.registry.info(image).size, seconds)
        self._later(seconds, self._pulled, ref, result, future)
        return future

    def preload(self, image: str) -> None:
        """An image already in the node's containerd store before the kubelet starts, as kind's
        node image ships the control plane's, kube-proxy's, kindnetd's and CoreDNS's (its
        /kind/images, imported at build time): the kubelet's IfNotPresent finds it present."""
        ref = normalize_image(image)
        self.images[ref] = PullResult(f"{repository(ref)}@sha256:{_digest(ref)}",
                                      self.registry.info(image).size, 0.0)

    def _pulled(self, ref: str, result: PullResult, future: Future[PullResult]) -> None:
        self.images[ref] = result
        future.set_result(result)

    # ------------------------------------------------------------------ containers

    def create_container(self, pod_uid: str, name: str, image: str, workload: Workload,
                         spec: ProcessSpec | None = None) -> Future[Container]:
        future: Future[Container] = Future()
        key = (pod_uid, name)
        attempt = self._attempts.get(key, -1) + 1
        self._attempts[key] = attempt
        pulled = self.image_status(image)
        container = Container(f"containerd://{_digest(f'{self.node}/{next(self._ids)}')}",
                              pod_uid, name, attempt, image,
                              pulled.image_ref if pulled else normalize_image(image), workload,
                              spec=spec)
        self._later(0.05 + 0.1 * self.rand.random(), self._created, container, future)
        return future

    def _created(self, container: Container, future: Future[Container]) -> None:
        container.created_at = self.clock.now
        self.containers[container.id] = container
        self._by_pod.setdefault(container.pod_uid, []).append(container)
        self.version += 1
        future.set_result(container)

    def start_container(self, container_id: str) -> Future[Container]:
        future: Future[Container] = Future()
        self._later(0.05 + 0.1 * self.rand.random(), self._started, container_id, future)
        return future

    def _started(self, container_id: str, future: Future[Container]) -> None:
        c = self.containers.get(container_id)
        if c is None:
            future.set_error(RuntimeError(f"container {container_id} not found"))
            return
        c.state, c.started_at = RUNNING, self.clock.now
        self.version += 1
        self._record("start", c.pod_uid, container=c.name, attempt=c.attempt)
        process = self.processes.get(c.image)
        if c.spec is not None:
            c.context = self._context(c, c.spec, tty=c.spec.tty)
            if not c.spec.scripted and (process is None or process()):
                self._start_process(c)
                future.set_result(c)
                return
        c.logs.append((self.clock.now, f"kubelab: simulated {c.image} started (restart {c.attempt})"))
        end = c.workload.end()
        if process is not None and not process():
            end = (0.5, 1, "Error")  # the binary cannot come up
        if end is not None:
            seconds, code, reason = end
            c.timers.append(self.clock.call_later(seconds, self._exit, c, code, reason,
                                                  background=True))
        future.set_result(c)

    def stop_container(self, container_id: str, grace: float) -> Future[Container | None]:
        """StopContainer: SIGTERM now, SIGKILL when `grace` seconds have passed."""
        future: Future[Container | None] = Future()
        c = self.containers.get(container_id)
        if c is None or c.state != RUNNING:
            future.set_result(c)
            return future
        shutdown = c.workload.shutdown
        if c.spec is not None and not c.spec.scripted:
            code = term_exit_code(c.spec.argv)
            if code is not None:  # it handles SIGTERM and exits at once
                self._later(0.0, self._exit, c, code, "Completed" if code == 0 else "Error", future)
                return future
            shutdown = None        # PID 1 without a handler ignores SIGTERM
        if shutdown is not None and shutdown <= grace:
            self._later(shutdown, self._exit, c, 143, "Error", future)
        else:
            self._later(grace, self._exit, c, 137, "Error", future)
        return future

    def _exit(self, c: Container, code: int, reason: str,
              future: Future[Container | None] | None = None) -> None:
        if c.state == RUNNING and self.containers.get(c.id) is c:
            self._cancel(c)
            c.state, c.finished_at, c.exit_code, c.reason = EXITED, self.clock.now, code, reason
            self._end_processes(c, code)
            # a script's last words; a SIGKILL (an OOM kill too) leaves none
            if (c.spec is None or c.spec.scripted) and code != 137:
                c.logs.append((self.clock.now, f"kubelab: exiting with code {code}"))
            self.version += 1
            self._record("exit", c.pod_uid, container=c.name, code=code, reason=reason)
            if future is None:
                self._changed(c.pod_uid)
        if future is not None:
            future.set_result(c)

    def crash_container(self, pod_uid: str, name: str, exit_code: int = 1) -> Container:
        """A fault: the process dies now (a segfault, a panic)."""
        running = [c for c in self.pod_containers(pod_uid) if c.name == name and c.state == RUNNING]
        if not running:
            raise ValueError(f'container "{name}" of pod {pod_uid} is not running on node {self.node}')
        self._exit(running[-1], exit_code, "Error")
        return running[-1]

    def crash_image(self, image: str, exit_code: int = 1) -> list[Container]:
        """The process behind every running container of `image` dies now."""
        dead = [c for c in self.containers.values() if c.image == image and c.state == RUNNING]
        for c in dead:
            self._exit(c, exit_code, "Error")
        return dead

    def pod_containers(self, pod_uid: str) -> list[Container]:
        """ListContainers for one pod, oldest first."""
        return sorted(self._by_pod.get(pod_uid, ()), key=lambda c: (c.created_at, c.attempt))

    def read_logs(self, pod_uid: str, name: str, previous: bool = False) -> list[tuple[float, str]] | None:
        """ReadLogs: the lines of the pod's latest container of that name (previous: the one
        before it); None when there is no such container on this node."""
        attempts = [c for c in self.pod_containers(pod_uid) if c.name == name]
        index = -2 if previous else -1
        return list(attempts[index].logs) if len(attempts) >= -index else None

    def pod_uids(self) -> set[str]:
        return set(self._by_pod) | set(self.sandboxes)

    def running(self) -> list[Container]:
        return [c for c in self.containers.values() if c.state == RUNNING]

    # ------------------------------------------------------------------ the process model

    def _start_process(self, c: Container) -> None:
        """StartContainer for a container of the process model: its argv runs on the clock.
        An argv[0] that is no program of a known image (busybox, nginx, ...) fails as runc fails
        it: StartError, 128; in any other image it is that image's own binary, which runs as
        kubelab's default app (a long-running server)."""
        spec, ctx = c.spec, c.context
        assert spec is not None and ctx is not None
        if spec.argv and spec.argv[0].rsplit("/", 1)[-1] not in PROGRAMS and \
                not image_is_known(c.image):
            # An application's (or the control plane's) own binary: kubelab's default app.
            spec.argv = [DEFAULT_APP, *spec.argv]
        if not spec.argv or spec.argv[0].rsplit("/", 1)[-1] not in PROGRAMS:
            name = spec.argv[0] if spec.argv else ""
            c.message = ("failed to create containerd task: failed to create shim task: OCI "
                         "runtime create failed: runc create failed: unable to start container "
                         "process: error during container init: exec: "
                         f'"{name}": executable file not found in $PATH: unknown')
            self._later(0.0, self._exit, c, 128, "StartError")
            return

        def output(stream: str, data: bytes) -> None:
            self._log(c, stream, data)

        c.process = Process(self.clock, lambda io: run_argv(ctx, spec.argv, io), stdin=spec.stdin,
                            tty=spec.tty, on_output=output, on_exit=lambda p: self._process_exit(c, p))
        c.process.start()

    def _context(self, c: Container, spec: ProcessSpec, *, tty: bool) -> ProcessContext:
        sandbox = self.sandboxes.get(c.pod_uid)
        return ProcessContext(env=dict(spec.env), files=spec.files, hostname=spec.hostname,
                              pod_uid=c.pod_uid, namespace=spec.namespace,
                              pod_ip=sandbox.ip if sandbox is not None else "", network=self.network,
                              cpu_limit_millicores=spec.cpu_limit_millicores,
                              memory_limit_bytes=spec.memory_limit_bytes,
                              now=lambda: self.clock.now, tty=tty, image=c.image, restart=c.attempt)

    def _log(self, c: Container, stream: str, data: bytes) -> None:
        """containerd's log writer: each line the process ends goes to the log, timestamped."""
        text = c._partial.get(stream, "") + data.decode(errors="replace").replace("\r\n", "\n")
        *lines, rest = text.split("\n")
        c._partial[stream] = rest
        for line in lines:
            c.logs.append((self.clock.now, line))

    def _process_exit(self, c: Container, p: Process) -> None:
        code = p.exit_code or 0
        reason = p.reason or ("Completed" if code == 0 else "Error")
        for rest in c._partial.values():  # a last line without its newline
            if rest:
                c.logs.append((self.clock.now, rest))
        c._partial.clear()
        if c.spec is not None and c.context is not None:
            c.message = termination_message(c, code)
        self._exit(c, code, reason)

    def _end_processes(self, c: Container, code: int) -> None:
        """The container's processes die with it (its main process and every exec)."""
        for p in [*c.execs, *([c.process] if c.process is not None else [])]:
            if p.exit_code is None:
                p.kill(code)
        if c.context is not None:
            c.context.usage.cpu_millicores = c.context.usage.memory_bytes = 0

    def exec(self, pod_uid: str, container: str, command: list[str], stdin: bool, tty: bool
             ) -> Process | None:
        """The CRI's Exec: run command in the running container, in its environment and files.
        The session starts now and advances on the clock; None: no such running container."""
        c = self._running(pod_uid, container)
        if c is None or c.context is None or not command:
            return None
        ctx = c.context
        exec_ctx = ProcessContext(env=dict(ctx.env), files=ctx.files, hostname=ctx.hostname,
                                  pod_uid=pod_uid, namespace=ctx.namespace, pod_ip=ctx.pod_ip,
                                  network=self.network,
                                  cpu_limit_millicores=ctx.cpu_limit_millicores,
                                  memory_limit_bytes=ctx.memory_limit_bytes, usage=ctx.usage,
                                  now=ctx.now, tty=tty, image=ctx.image, restart=ctx.restart)
        argv = list(command)
        run = run_argv if argv[0].rsplit("/", 1)[-1] in PROGRAMS else _exec_failed
        process = Process(self.clock, lambda io: run(exec_ctx, argv, io),
                          stdin=stdin, tty=tty, max_buffer=MAX_EXEC_OUTPUT)
        c.execs = [p for p in c.execs if p.exit_code is None] + [process]
        self._record("exec", pod_uid, container=container, command=" ".join(command))
        return process.start()

    def probe_exec(self, c: Container, command: list[str], timeout: float) -> tuple[int | None, str]:
        """An exec probe (the CRI's ExecSync): run command in the container now; (exit code,
        what it printed), or (None, "") when it did not end within timeout seconds (it ends
        at once unless it sleeps or waits: then it is killed at once, as a timed-out probe)."""
        if c.context is None or c.state != RUNNING:
            return 1, ""
        ctx = c.context
        probe_ctx = ProcessContext(env=dict(ctx.env), files=ctx.files, hostname=ctx.hostname,
                                   pod_uid=c.pod_uid, namespace=ctx.namespace, pod_ip=ctx.pod_ip,
                                   network=self.network, usage=ctx.usage, now=ctx.now,
                                   image=ctx.image, restart=ctx.restart)
        p = Process(self.clock, lambda io: run_argv(probe_ctx, command, io)).start()
        if p.exit_code is None:
            p.kill(137)
            return None, ""
        out, err = p.read()
        return p.exit_code, (out + err).decode(errors="replace")

    def attach(self, pod_uid: str, container: str, stdin: bool, tty: bool) -> Attached | None:
        """The CRI's Attach: the container's main process itself (its stdin, if the container
        has `stdin: true`, and what it prints from now on); None: no such running container."""
        c = self._running(pod_uid, container)
        if c is None or c.process is None:
            return None
        return c.process.attach(stdin=stdin)

    def has_pod(self, pod_uid: str) -> bool:
        """Does this node know the pod (a sandbox or containers, even exited)? The kubelet's
        GetPodByName, which its pod manager answers for every pod it was given."""
        return pod_uid in self._by_pod or pod_uid in self.sandboxes

    def port_forward(self, pod_uid: str, port: int) -> PortConnection | str:
        """The CRI's PortForward: a connection to port in the pod's sandbox (portforward.py)."""
        return port_forward(self, pod_uid, port)

    def _running(self, pod_uid: str, name: str) -> Container | None:
        running = [c for c in self.pod_containers(pod_uid) if c.name == name and c.state == RUNNING]
        return running[-1] if running else None

    def serve_http(self, ip: str, port: int, path: str, client_ip: str, user_agent: str
                   ) -> HttpAnswer:
        """A GET arriving at ip:port: the pod with that IP answers with the server it runs."""
        sandbox = next((s for s in self.sandboxes.values() if s.ip == ip), None)
        if sandbox is None or sandbox.state != SANDBOX_READY or not self.powered:
            return HttpAnswer(error="unreachable")
        for c in self.pod_containers(sandbox.pod_uid):
            if c.state != RUNNING:
                continue
            if c.spec is None or c.spec.scripted:  # a script answers on every port while ready
                if c.workload.responds("readiness", self.clock.now - (c.started_at or 0.0)):
                    return HttpAnswer(200, f"kubelab: {c.image}\n".encode(), address=f"{ip}:{port}")
                continue
            if c.context is None:
                continue
            answer = serve_http(pid1(c.spec.argv), c.spec.ports, c.context, port, path)
            if answer is not None:
                if answer.status and pid1(c.spec.argv) == "nginx":
                    stamp = f"{epoch() + timedelta(seconds=self.clock.now):%d/%b/%Y:%H:%M:%S +0000}"
                    c.logs.append((self.clock.now, f'{client_ip} - - [{stamp}] "GET {path} HTTP/1.1" '
                                   f'{answer.status} {len(answer.body)} "-" "{user_agent}" "-"'))
                return answer
        return HttpAnswer(error="refused")

    # ------------------------------------------------------------------ the machine

    def power_off(self) -> None:
        """The node dies: every process is gone. containerd's records survive on disk and say
        so after the reboot: sandboxes not ready, containers exited with 255, reason Unknown."""
        for c in self.containers.values():
            self._cancel(c)
            if c.state == RUNNING:
                self._end_processes(c, 255)
                c.state, c.finished_at, c.exit_code, c.reason = EXITED, self.clock.now, 255, "Unknown"
        for sandbox in self.sandboxes.values():
            sandbox.state = SANDBOX_NOTREADY
        self.powered = False
        self._boot += 1
        self.version += 1
        self._record("power-off", "")

    def power_on(self) -> None:
        self.powered = True
        self._record("power-on", "")

    # ------------------------------------------------------------------ helpers

    def _later(self, delay: float, fn: Callable[..., Any], *args: Any) -> None:
        boot = self._boot

        def run() -> None:
            if self._boot == boot:  # work started before a power-off never completes
                fn(*args)
        self.clock.call_later(delay, run)

    def _new_id(self) -> str:
        return _digest(f"{self.node}/sandbox/{next(self._ids)}")

    @staticmethod
    def _cancel(c: Container) -> None:
        for timer in c.timers:
            timer.cancel()
        c.timers.clear()

    def _record(self, verb: str, pod_uid: str, **detail: Any) -> None:
        if self.trace is not None:
            self.trace.record(f"runtime/{self.node}", verb, pod_uid, **detail)


def _exec_failed(ctx: ProcessContext, argv: list[str], io: IO) -> Generator[Any, Any, int]:
    """What runc says when exec's binary is not in the image; kubectl shows it and exits 126."""
    io.out(f'OCI runtime exec failed: exec failed: unable to start container process: exec: '
           f'"{argv[0]}": executable file not found in $PATH: unknown\n')
    return 126
    yield


def termination_message(c: Container, code: int) -> str:
    """What the kubelet reports as the terminated state's message: the file at
    terminationMessagePath (at most 4096 bytes), or with FallbackToLogsOnError and a failure,
    the log's last 80 lines (at most 2048 bytes): kuberuntime_container.go
    getTerminationMessage and readLastStringFromContainerLogs."""
    spec, ctx = c.spec, c.context
    if spec is None or ctx is None:
        return ""
    message = ctx.files.get(spec.termination_message_path, b"")[:4096].decode(errors="replace")
    if not message and code != 0 and spec.termination_message_policy == "FallbackToLogsOnError":
        tail = "".join(f"{text}\n" for _, text in c.logs[-80:])
        message = tail.encode()[-2048:].decode(errors="replace")
    return message


def _digest(text: str) -> str:
    """A stable 64-hex-digit id for text (container ids, image digests)."""
    return hashlib.sha256(text.encode()).hexdigest()
