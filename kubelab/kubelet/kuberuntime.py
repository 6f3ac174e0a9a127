"""SyncPod: make the runtime match one pod, a step at a time.

Follows pkg/kubelet/kuberuntime/kuberuntime_manager.go (SyncPod, computePodActions,
computeInitContainerActions, doBackOff, killPodWithSyncResult) and kuberuntime_container.go
(startContainer, killContainer). compute_pod_actions decides, sync_pod does, in SyncPod's
numbered steps:
1. compute sandbox and container changes (PodActions): no ready sandbox means a new one and
   everything starts over; a running container whose liveness (or startup) probe failed is
   to be killed (and started again unless restartPolicy is Never); init containers run one
   at a time, in order, and the regular containers start once they all succeeded (a sidecar,
   an init container with restartPolicy Always, counts once it runs, and is restarted
   whenever it exits);
2. kill the pod if the sandbox changed (event SandboxChanged);
3. otherwise kill the containers not to keep: event Killing
   `Container app failed liveness probe, will be restarted`;
4. create the sandbox if necessary; 5. start the ephemeral containers not yet started
   (`kubectl debug`: spec.ephemeralContainers, added through pods/ephemeralcontainers; they
   never restart);
6. start the next init container; 8. start the containers to start: first the crash back-off
   check (CrashLoopBackOff: `back-off 20s restarting failed container=app pod=web_default(uid)`),
   then the image (images.py), then create (event `Created container: app`) and start
   (event `Started container app`). (Step 7, in-place resize, has nothing to do here.)
Why a container did not start is kept in the reason cache; status.py turns it into the
container's waiting reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.quantity import parse_quantity
from kubelab.client.client import Client
from kubelab.client.events import NORMAL, WARNING
from kubelab.kubelet.backoff import Backoff
from kubelab.kubelet.envvars import (
    ConfigError,
    container_files,
    expand,
    make_environment_variables,
    resolv_conf,
)
from kubelab.kubelet.images import ImageManager, go_duration
from kubelab.kubelet.pod_workers import SyncResult
from kubelab.kubelet.probes import FAILURE, ProbeManager
from kubelab.kubelet.process import FileSystem, Mount, ProcessSpec, command_line, os_release
from kubelab.kubelet.process.filesystem import DIRS
from kubelab.kubelet.process.images import image_dirs
from kubelab.kubelet.runtime import EXITED, RUNNING, SANDBOX_READY, Container, ContainerRuntime
from kubelab.kubelet.status import should_container_be_restarted
from kubelab.kubelet.workload import has_behavior, workload_for
from kubelab.sim.clock import Clock
from kubelab.sim.tasks import Future, Step
from kubelab.sim.trace import Trace

__all__ = ["CRASH_LOOP_BACK_OFF", "PodActions", "RuntimeManager", "format_pod"]

Recorder = Callable[[Object, str, str, str], None]
CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
CREATE_CONTAINER_CONFIG_ERROR = "CreateContainerConfigError"


def format_pod(pod: Object) -> str:
    """format.Pod: `web_default(0c8e...)`."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', 'default')}({meta.get('uid', '')})"


class RuntimeManager:
    def __init__(self, runtime: ContainerRuntime, images: ImageManager, probes: ProbeManager,
                 clock: Clock, record: Recorder, *, backoff: Backoff,
                 reasons: dict[str, dict[str, tuple[str, str]]], minimum_grace: float = 2.0,
                 trace: Trace | None = None, name: str = "kubelet", client: Client | None = None
                 ) -> None:
        self.runtime, self.images, self.probes, self.clock = runtime, images, probes, clock
        self.client = client
        self.allocatable: dict[str, str] = {"cpu": "4", "memory": "8Gi"}
        # The volume manager's mounts of a container (makeMounts); None: no volumes yet.
        self.container_mounts: Callable[[Object, str], list[Mount]] | None = None
        self.record, self.backoff, self.reasons = record, backoff, reasons
        self.minimum_grace, self.trace, self.name = minimum_grace, trace, name

    def _latest(self, uid: str) -> dict[str, Container]:
        return {c.name: c for c in self.runtime.pod_containers(uid)}  # newest wins

    def sync_pod(self, pod: Object) -> Step:
        """SyncPod, in upstream's numbered steps. Returns a SyncResult. (Step 7, in-place
        resize, has nothing to do here.)"""
        uid = pod["metadata"]["uid"]
        # Step 1: Compute sandbox and container changes.
        changes = self.compute_pod_actions(pod)
        if changes.kill_pod:
            # Step 2: Kill the pod if the sandbox has changed.
            self.record(pod, NORMAL, "SandboxChanged",
                        "Pod sandbox changed, it will be killed and re-created.")
            yield from self.kill_containers(pod, self._grace(pod))
        else:
            # Step 3: kill any running containers in this pod which are not to keep.
            for c, message in changes.containers_to_kill:
                yield from self.kill_container(pod, c, message, self._grace(pod))
        # Step 4: Create a sandbox for the pod if necessary.
        if changes.create_sandbox:
            meta = pod["metadata"]
            yield self.runtime.run_pod_sandbox(uid, name=meta.get("name", ""),
                                               namespace=meta.get("namespace", ""),
                                               labels=meta.get("labels") or {})
        latest = self._latest(uid)
        # Step 5: start the ephemeral containers not started yet (`kubectl debug`); they never
        # restart, and start before the init containers so that a pod stuck initialising can
        # be debugged.
        if not changes.create_sandbox:
            for c_spec in (pod.get("spec") or {}).get("ephemeralContainers") or []:
                if c_spec.get("name", "") not in latest:
                    yield from self.start_container(pod, c_spec, None, init=False)
        # Step 6: start the next init container.
        if changes.init_container_to_start is not None:
            c_spec = changes.init_container_to_start
            result = yield from self.start_container(pod, c_spec, latest.get(c_spec["name"]),
                                                     init=True)
            if result.error or not is_restartable(c_spec):
                return result
            # A sidecar runs on: what comes after it starts now (upstream, its PLEG's
            # ContainerStarted event brings the next sync at once).
            return (yield from self.sync_pod(pod))
        # Step 8: start containers in changes.containers_to_start.
        results = []
        for c_spec in changes.containers_to_start:
            previous = latest.get(c_spec.get("name", ""))
            results.append((yield from self.start_container(pod, c_spec, previous, init=False)))
        errors = [r for r in results if r.error]
        if not errors:
            return SyncResult()
        retry = [r.retry_at for r in errors if r.retry_at is not None]
        return SyncResult(error=errors[0].error,
                          retry_at=min(retry) if len(retry) == len(errors) else None)

    def compute_pod_actions(self, pod: Object) -> PodActions:
        """computePodActions: what this sync must kill, create and start."""
        uid, spec = pod["metadata"]["uid"], pod.get("spec") or {}
        policy = spec.get("restartPolicy") or "Always"
        sandbox = self.runtime.sandboxes.get(uid)
        latest = self._latest(uid)
        changes = PodActions()
        if sandbox is None or sandbox.state != SANDBOX_READY:  # PodSandboxChanged
            if latest and policy == "Never":
                return changes  # it ran once and may not run again: the pod will fail
            changes.create_sandbox = True
            changes.kill_pod = sandbox is not None or bool(latest)
            # A new sandbox starts over: from the first init container, if there are any.
            init_specs = spec.get("initContainers") or []
            if init_specs:
                changes.init_container_to_start = init_specs[0]
                return changes
            changes.containers_to_start = [
                c_spec for c_spec in spec.get("containers") or []
                if not (policy == "OnFailure" and _succeeded(latest.get(c_spec.get("name", ""))))]
            return changes
        if not self._compute_init_container_actions(pod, latest, changes):
            return changes  # initialization failed or is still in progress
        # Sidecars (restartable init containers) are restarted whenever they exit, whatever
        # the pod's restartPolicy, before the regular containers are looked at.
        for c_spec in spec.get("initContainers") or []:
            c = latest.get(c_spec.get("name", ""))
            if is_restartable(c_spec) and c is not None and c.state == EXITED and \
                    not (pod.get("metadata") or {}).get("deletionTimestamp"):
                changes.init_container_to_start = c_spec
                return changes
        for c_spec in spec.get("containers") or []:
            c = latest.get(c_spec.get("name", ""))
            # If container does not exist, or is not running, check whether we need to
            # restart it.
            if c is None or c.state != RUNNING:
                if should_container_be_restarted(pod, c):
                    changes.containers_to_start.append(c_spec)
                continue
            # The container is running, but is killed if its liveness or startup probe failed.
            kind = next((k for k in ("liveness", "startup")
                         if self.probes.result(c, k, f"{k}Probe" in c_spec) == FAILURE), None)
            if kind is None:
                continue  # keep the container
            message = f"Container {c.name} failed {kind} probe"
            if policy != "Never":  # shouldRestartOnFailure
                message += ", will be restarted"
                changes.containers_to_start.append(c_spec)
            changes.containers_to_kill.append((c, message))
        return changes

    def _compute_init_container_actions(self, pod: Object, latest: dict[str, Container],
                                        changes: PodActions) -> bool:
        """computeInitContainerActions: the next init container to start, if any; True once
        every init container has succeeded (the regular containers may run)."""
        if not (pod.get("spec") or {}).get("initContainers"):
            return True
        failed, next_init, done = self.find_next_init_container(pod, latest)
        if done:
            return True
        policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        if not (failed is not None and policy == "Never"):  # Never: getPhase makes it Failed
            changes.init_container_to_start = next_init  # None: one is running; wait for it
        return False

    def find_next_init_container(self, pod: Object, latest: dict[str, Container]
                                 ) -> tuple[Container | None, Object | None, bool]:
        """findNextInitContainerToRun: (last failed, next to start, all done)."""
        spec = pod.get("spec") or {}
        inits = spec.get("initContainers") or []
        if any((latest.get(c.get("name", "")) or _NONE).state == RUNNING
               for c in spec.get("containers") or []):
            return None, None, True
        for c_spec in reversed(inits):
            c = latest.get(c_spec["name"])
            if c is not None and c.state == EXITED and c.exit_code != 0 and not is_restartable(c_spec):
                return c, c_spec, False
        for i in range(len(inits) - 1, -1, -1):
            c = latest.get(inits[i]["name"])
            if c is None:
                continue
            if c.state == RUNNING and not is_restartable(inits[i]):
                return None, None, False
            if c.state == EXITED or (c.state == RUNNING and is_restartable(inits[i])):
                # a sidecar that runs counts as done: the next one may start
                return (None, None, True) if i == len(inits) - 1 else (None, inits[i + 1], False)
        return None, inits[0], False

    def start_container(self, pod: Object, c_spec: Object, previous: Container | None, *,
                        init: bool) -> Step:
        uid, name = pod["metadata"]["uid"], c_spec.get("name", "")
        reasons = self.reasons.setdefault(uid, {})
        if previous is not None and previous.state == EXITED:
            key = f"{pod['metadata'].get('name')}_{pod['metadata'].get('namespace')}_{uid}_{name}"
            finished = previous.finished_at or 0.0
            if self.backoff.is_in_back_off_since(key, finished):
                window = self.backoff.get(key)
                self.record(pod, WARNING, "BackOff",
                            f"Back-off restarting failed container {name} in pod {format_pod(pod)}")
                reasons[name] = (CRASH_LOOP_BACK_OFF, f"back-off {go_duration(window)} restarting "
                                 f"failed container={name} pod={format_pod(pod)}")
                return SyncResult(CRASH_LOOP_BACK_OFF, retry_at=finished + window)
            self.backoff.next(key, finished)
        self._trace("start-container", pod, container=name, init=init)
        image_default = self.runtime.registry.info(str(c_spec.get("image") or "")).behavior
        try:
            _text, workload = workload_for(pod, c_spec, init=init, image_default=image_default)
        except ValueError as err:
            message = f"invalid container behavior ({err})"
            self.record(pod, WARNING, "Failed", f"Error: {message}")
            reasons[name] = (CREATE_CONTAINER_CONFIG_ERROR, message)
            return SyncResult(CREATE_CONTAINER_CONFIG_ERROR)
        outcome = yield from self.images.ensure_image_exists(pod, c_spec)
        if not outcome.ok:
            self.record(pod, WARNING, "Failed", f"Error: {outcome.reason}")
            reasons[name] = (outcome.reason, outcome.message)
            return SyncResult(outcome.reason, retry_at=outcome.retry_at)
        try:  # generateContainerConfig: the environment, the command, the files
            spec = self.process_spec(pod, c_spec, init=init)
        except ConfigError as err:
            self.record(pod, WARNING, "Failed", f"Error: {err}")
            reasons[name] = (CREATE_CONTAINER_CONFIG_ERROR, str(err))
            return SyncResult(CREATE_CONTAINER_CONFIG_ERROR)
        c = yield self.runtime.create_container(uid, name, str(c_spec.get("image") or ""), workload,
                                                spec=spec)
        self.record(pod, NORMAL, "Created", f"Created container: {name}")
        yield self.runtime.start_container(c.id)
        self.record(pod, NORMAL, "Started", f"Started container {name}")
        reasons.pop(name, None)
        return SyncResult()

    def process_spec(self, pod: Object, c_spec: Object, *, init: bool) -> ProcessSpec:
        """generateContainerConfig: what the runtime runs (argv with $(VAR) expanded), in which
        environment, with which files and limits. Raises ConfigError (CreateContainerConfigError)."""
        meta, uid = pod.get("metadata") or {}, pod["metadata"]["uid"]
        sandbox = self.runtime.sandboxes.get(uid)
        pod_ip = sandbox.ip if sandbox is not None else ""
        env = make_environment_variables(pod, c_spec, self._get, host_ip=self.runtime.node_ip,
                                         pod_ip=pod_ip, allocatable=self.allocatable)
        image = str(c_spec.get("image") or "")
        argv = [expand(word, env) for word in command_line(image, c_spec)]
        hostname = env["HOSTNAME"]
        files = container_files(hostname, pod_ip, resolv_conf(meta.get("namespace", "default")),
                                os_release(image))
        if image_dirs(image):  # the image's own directories (filesystem.py's DIRS list)
            files[DIRS] = " ".join(image_dirs(image)).encode()
        mounts: list[Mount] = []  # the volumes the kubelet mounted, bind-mounted over the image's files
        if self.container_mounts is not None:
            mounts = self.container_mounts(pod, str(c_spec.get("name") or ""))
        limits = (c_spec.get("resources") or {}).get("limits") or {}
        cpu = parse_quantity(str(limits["cpu"])).milli_value() if "cpu" in limits else None
        memory = parse_quantity(str(limits["memory"])).value() if "memory" in limits else None
        ports = [int(p.get("containerPort") or 0) for p in c_spec.get("ports") or ()]
        return ProcessSpec(argv, env, FileSystem(files, mounts), hostname, ports, cpu, memory,
                           stdin=bool(c_spec.get("stdin")), tty=bool(c_spec.get("tty")),
                           termination_message_path=str(c_spec.get("terminationMessagePath")
                                                        or "/dev/termination-log"),
                           termination_message_policy=str(c_spec.get("terminationMessagePolicy")
                                                          or "File"),
                           scripted=has_behavior(pod, c_spec, init=init),
                           namespace=str(meta.get("namespace") or "default"))

    def _get(self, resource: str, namespace: str, name: str) -> Object | None:
        """The kubelet's ConfigMap and Secret managers: read through the API (get-on-use)."""
        if self.client is None:
            return None
        try:
            return self.client.get(resource, name, namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    # ------------------------------------------------------------------ stopping

    def _grace(self, pod: Object) -> float:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        grace = meta.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds", 30)
        return max(float(grace), self.minimum_grace)

    def kill_container(self, pod: Object, c: Container, message: str, grace: float) -> Step:
        """killContainer: event Killing, SIGTERM, SIGKILL after the grace period."""
        self.record(pod, NORMAL, "Killing", message or f"Stopping container {c.name}")
        yield self.runtime.stop_container(c.id, grace)

    def kill_containers(self, pod: Object, grace: float) -> Step:
        """killContainersWithSyncResult: stop every running container at once, wait for all.

        Each container's preStop hook runs first (executePreStopHook), within the grace
        period; SIGTERM follows with what is left of it, at least minimumGracePeriod. The
        simulated hooks take time only when they sleep: `sleep: {seconds: N}` or an exec of
        `sleep N`; any other hook is done at once."""
        futures: list[Future[Container | None]] = []
        running = [c for c in self.runtime.pod_containers(pod["metadata"]["uid"]) if c.state == RUNNING]
        for c in running:
            self.record(pod, NORMAL, "Killing", f"Stopping container {c.name}")
        hooks = sorted(((min(pre_stop_seconds(pod, c.name), grace), i) for i, c in enumerate(running)))
        waited = 0.0
        for seconds, i in hooks:
            if seconds > waited:
                yield seconds - waited
                waited = seconds
            futures.append(self.runtime.stop_container(running[i].id,
                                                       max(grace - seconds, self.minimum_grace)))
        for future in futures:  # noqa: UP028 (a task sends results back: no `yield from`)
            yield future


    def _trace(self, verb: str, pod: Object, **detail: Any) -> None:
        if self.trace is not None:
            meta = pod.get("metadata") or {}
            self.trace.record(self.name, verb, f"pods/{meta.get('namespace', 'default')}/{meta.get('name')}",
                              **detail)


def pre_stop_seconds(pod: Object, name: str) -> float:
    """How long the container's preStop hook keeps it from its SIGTERM."""
    for spec in (pod.get("spec") or {}).get("containers") or ():
        if spec.get("name") != name:
            continue
        hook = ((spec.get("lifecycle") or {}).get("preStop") or {})
        sleep = hook.get("sleep")
        if isinstance(sleep, dict) and isinstance(sleep.get("seconds"), (int, float)):
            return float(sleep["seconds"])
        command = " ".join(str(w) for w in (hook.get("exec") or {}).get("command") or ())
        words = command.replace('"', " ").replace("'", " ").split()
        if "sleep" in words and words.index("sleep") + 1 < len(words):
            try:
                return float(words[words.index("sleep") + 1])
            except ValueError:
                return 0.0
    return 0.0


@dataclass
class PodActions:
    """podActions (kuberuntime_manager.go): the changes one SyncPod makes."""

    kill_pod: bool = False        # stop every container first: the sandbox is gone or changed
    create_sandbox: bool = False
    containers_to_kill: list[tuple[Container, str]] = field(default_factory=list)  # (c, why)
    init_container_to_start: Object | None = None  # one at a time; then nothing else starts
    containers_to_start: list[Object] = field(default_factory=list)  # specs, in spec order


def is_restartable(c_spec: Object) -> bool:
    """A sidecar: an init container with restartPolicy Always (podutil.IsRestartableInitContainer)."""
    return c_spec.get("restartPolicy") == "Always"


def _succeeded(c: Container | None) -> bool:
    """containerSucceeded: it exited with code 0."""
    return c is not None and c.state == EXITED and c.exit_code == 0


class _NoContainer:
    state = ""


_NONE: Any = _NoContainer()
