"""The kubelet: the node agent that makes the pods bound to its node real.

It never learns why a pod exists. It watches only the pods with spec.nodeName=<its node>
(a field-selected informer), asks the container runtime to run them, reports what happens as
pod status and events, and heartbeats so that the control plane knows the node is alive.

Read it next to pkg/kubelet/kubelet.go (syncLoop, SyncPod, SyncTerminatingPod,
HandlePodCleanups) and kubelet_pods.go (generateAPIPodStatus):
- anything that concerns a pod (the API changed it, a container exited, a probe result
  changed) asks that pod's worker to sync it (pod_workers.py);
- a sync computes the status from what the runtime reports (status.py), hands it to the status
  manager (status_manager.py), mounts the pod's volumes (volumemanager/: until they are all
  mounted no container starts), then drives the runtime towards the spec (kuberuntime.py);
- a pod with a deletionTimestamp is terminated: its containers are stopped within the grace
  period, then the status manager deletes it for good;
- a pod gone from the API, or found in the runtime and unknown (after a kubelet restart), is
  cleaned up by housekeeping.

stop() is a crash: the kubelet's memory is gone, but the runtime belongs to the node and its
containers keep running; the next kubelet finds them.

The runtime is the constructor's own argument, as NewMainKubelet gets its runtime service in
kubelet.Dependencies (cmd/kubelet/app/server.go): the Cluster passes each kubelet its node's.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.meta import namespace_key
from kubelab.client.component import ComponentContext
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.kubelet.backoff import Backoff
from kubelab.kubelet.certificate import ClientCertificate
from kubelab.kubelet.config import KubeletConfiguration
from kubelab.kubelet.heartbeat import NodeHeartbeat
from kubelab.kubelet.images import ImageManager
from kubelab.kubelet.kuberuntime import RuntimeManager
from kubelab.kubelet.pod_workers import PodWorkers, SyncResult
from kubelab.kubelet.probes import SUCCESS, ProbeManager
from kubelab.kubelet.registry import ImageRegistry
from kubelab.kubelet.runtime import RUNNING, SANDBOX_READY, Container, ContainerRuntime
from kubelab.kubelet.static_pods import MirrorClient, is_mirror_pod, static_pods_from
from kubelab.kubelet.status import (
    KUBELET_CONDITIONS,
    container_statuses,
    get_phase,
    need_to_reconcile_pod_readiness,
    pod_conditions,
)
from kubelab.kubelet.status_manager import StatusManager
from kubelab.kubelet.token import Manager as TokenManager
from kubelab.kubelet.volumemanager import VolumeManager
from kubelab.sim.clock import Timer
from kubelab.sim.tasks import Step

__all__ = ["Kubelet"]

TERMINAL = ("Succeeded", "Failed")


class Kubelet:
    def __init__(self, ctx: ComponentContext, runtime: ContainerRuntime | None = None, *,
                 config: KubeletConfiguration | None = None,
                 static_pods: list[Object] | None = None, tls_bootstrap: str | None = None) -> None:
        """runtime: the node's container runtime, which outlives a kubelet crash as containerd
        does (None: a runtime of its own, for a kubelet run by hand). tls_bootstrap: ask for a
        client certificate (certificate.py) with this bootstrap token, or "" with the node's
        own identity; None (kubelab's default outside the anatomy): ask for none."""
        self.ctx, self.clock, self.client = ctx, ctx.clock, ctx.client
        self.manifest: Object = ctx.node or {"metadata": {"name": ctx.name.rsplit("/", 1)[-1]}}
        self.node_name = str(self.manifest["metadata"]["name"])
        self.name = ctx.name
        self.config = config or KubeletConfiguration()
        self.runtime: ContainerRuntime = runtime or ContainerRuntime(
            self.node_name, ImageRegistry(), ctx.clock, ctx.rand, trace=ctx.trace)
        self.static_manifests = static_pods
        self.running = False
        self.pods: dict[str, Object] = {}          # uid -> the pod to run (API and static pods)
        self.removed: dict[str, Object | None] = {}  # uid -> last copy of a pod gone from the API
        self.mirrors: dict[str, Object] = {}       # "ns/name" -> a mirror pod, as the API shows it
        self.static_keys: dict[str, str] = {}      # "ns/name" -> the static pod's uid
        self.reasons: dict[str, dict[str, tuple[str, str]]] = {}  # the reason cache
        self._timer: Timer | None = None
        self.client_certificate = ClientCertificate(ctx, self.node_name, self.runtime.host_paths,
                                                    tls_bootstrap) if tls_bootstrap is not None else None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        ctx, config, alive = self.ctx, self.config, self.alive
        self.running = True
        self.recorder = ctx.recorder("kubelet", host=self.node_name)
        self.images = ImageManager(self.runtime, self.clock, self.event,
                                   backoff=Backoff(self.clock, *config.image_backoff),
                                   serialize=config.serialize_image_pulls, trace=ctx.trace, name=self.name)
        self.workers = PodWorkers(self.clock, self._sync, alive=alive, trace=ctx.trace, name=self.name,
                                  resync_interval=config.sync_frequency,
                                  backoff_period=config.pod_worker_backoff)
        self.probes = ProbeManager(self.runtime, self.clock, ctx.rand, self.event, self.workers.update_pod)
        self.kuberuntime = RuntimeManager(self.runtime, self.images, self.probes, self.clock, self.event,
                                          backoff=Backoff(self.clock, *config.container_backoff),
                                          reasons=self.reasons, minimum_grace=config.minimum_grace_period,
                                          trace=ctx.trace, name=self.name, client=self.client)
        self.status_manager = StatusManager(self.client, self.clock, self._api_pod, trace=ctx.trace,
                                            name=self.name)
        self.heartbeat = NodeHeartbeat(self.client, self.clock, self.manifest, config, self.event,
                                       node_ip=self.node_ip, pod_cidr=self.runtime.pod_cidr,
                                       alive=alive, get_node=self._node, trace=ctx.trace, name=self.name)
        self.mirror_client = MirrorClient(self.client, self.node_name)
        # token.NewManager(kubeDeps.KubeClient): the pods' service account tokens, by TokenRequest
        self.token_manager = TokenManager(
            lambda name, namespace, tr: self.client.create_token(name, namespace, tr),
            self.clock, ctx.rand)
        self.volume_manager = VolumeManager(self.client, self.clock, self.event,
                                            self.runtime.host_paths, self.token_manager,
                                            node_name=self.node_name)
        # What a container's cat and ls see of its volumes: what the volume manager mounted.
        self.kuberuntime.container_mounts = self.volume_manager.container_mounts
        self._unsubscribe = self.runtime.subscribe(self._on_container_event)
        if self.client_certificate is not None:  # --- csr --- bootstrap.LoadClientCert
            self.client_certificate.start()
        self.event(self.heartbeat.ref, "Normal", "Starting", "Starting kubelet.")
        self.heartbeat.register()
        self.heartbeat.start()
        self.status_manager.start()
        self.factory = SharedInformerFactory(self.client, self.clock, rand=ctx.rand, trace=ctx.trace,
                                             name=self.name)
        self.pod_informer = self.factory.informer_for("pods",
                                                      field_selector=f"spec.nodeName={self.node_name}")
        self.pod_informer.add_event_handler(ResourceEventHandler(
            on_add=self._on_pod, on_update=self._on_pod_update, on_delete=self._on_pod_delete))
        self.node_informer = self.factory.informer_for("nodes",
                                                       field_selector=f"metadata.name={self.node_name}")
        self.factory.start()
        for pod in static_pods_from(self.manifest, self.static_manifests, self.node_name, self.clock.now):
            self.static_keys[namespace_key(pod)] = pod["metadata"]["uid"]
            self._add(pod)
        self._housekeeping_soon()

    def stop(self) -> None:
        """A crash: everything in memory is gone. The containers keep running."""
        self.running = False
        for part in (self.factory, self.heartbeat, self.status_manager, self.probes, self.workers):
            part.stop()
        if self.client_certificate is not None:
            self.client_certificate.stop()
        self._unsubscribe()
        if self._timer is not None:
            self._timer.cancel()

    def alive(self) -> bool:
        return self.running

    @property
    def node_ip(self) -> str:
        return self.runtime.node_ip

    def event(self, obj: Object, type_: str, reason: str, message: str) -> None:
        if self.running:
            self.recorder.event(obj, type_, reason, message)

    # ------------------------------------------------------------------ the pod sources

    def _add(self, pod: Object) -> None:
        uid = pod["metadata"]["uid"]
        self.pods[uid] = pod
        self.probes.add_pod(pod)
        self.workers.update_pod(uid)

    def _on_pod(self, pod: Object) -> None:
        if is_mirror_pod(pod):
            key = namespace_key(pod)
            self.mirrors[key] = pod
            if key in self.static_keys:
                self.workers.update_pod(self.static_keys[key])
            return
        self._add(pod)

    def _on_pod_update(self, old: Object, new: Object) -> None:
        """Our own status writes come back as updates: they need no sync (upstream's
        HandlePodReconcile), unless a readiness gate's condition, which someone else sets,
        changed what Ready should say; a change of spec or metadata (a deletionTimestamp)
        does."""
        uid = new["metadata"].get("uid", "")
        if uid in self.pods and old.get("spec") == new.get("spec") and \
                _meta(old) == _meta(new) and not is_mirror_pod(new):
            self.pods[uid] = new
            if need_to_reconcile_pod_readiness(new):
                self.workers.update_pod(uid)
            return
        self._on_pod(new)

    def _node(self) -> Object | None:
        node, exists = self.node_informer.indexer.get_by_key(self.node_name)
        return node if exists else None

    def _on_pod_delete(self, obj: Any) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not isinstance(pod, dict):
            return
        key, uid = namespace_key(pod), pod["metadata"].get("uid", "")
        if is_mirror_pod(pod):
            if self.mirrors.get(key, {}).get("metadata", {}).get("uid") == uid:
                del self.mirrors[key]
            if key in self.static_keys:
                self.workers.update_pod(self.static_keys[key])  # make a new mirror
            return
        if self.pods.pop(uid, None) is not None:
            self.removed[uid] = pod
            self.workers.update_pod(uid)
        self._housekeeping_soon()

    def _on_container_event(self, uid: str) -> None:
        if self.running and (uid in self.pods or uid in self.removed):
            self.workers.update_pod(uid)
        self._housekeeping_soon()

    def _api_pod(self, uid: str) -> Object | None:
        """The pod as the API shows it (a static pod's mirror), for the status manager."""
        pod = self.pods.get(uid) or self.removed.get(uid)
        if pod is None:
            return None
        key = namespace_key(pod)
        if key in self.static_keys:
            return self.mirrors.get(key)
        cached, exists = self.pod_informer.indexer.get_by_key(key)
        return cached if exists and cached["metadata"].get("uid") == uid else None

    def _housekeeping_soon(self) -> None:
        if self.running and self._timer is None:
            self._timer = self.clock.call_later(self.config.housekeeping_interval, self._housekeeping,
                                                background=True)

    def _housekeeping(self) -> None:
        """HandlePodCleanups: containers of pods nobody wants any more are stopped. Upstream
        runs it every 2 s; we run it 2 s after whatever could leave such containers behind (a
        start, a pod deleted, a container event), which finds the same ones."""
        self._timer = None
        if not self.pod_informer.has_synced():
            self._housekeeping_soon()  # not before the first LIST: every pod would look orphaned
            return
        for uid in self.runtime.pod_uids() - set(self.pods) - set(self.removed):
            self.removed[uid] = None
            self.workers.update_pod(uid)

    # ------------------------------------------------------------------ syncing one pod

    def _sync(self, uid: str) -> Step:
        pod = self.pods.get(uid)
        if pod is None:
            return (yield from self._sync_removed(uid))
        meta, status = pod["metadata"], pod.get("status") or {}
        static = namespace_key(pod) in self.static_keys
        if status.get("phase") in TERMINAL and not static:
            yield from self.kuberuntime.kill_containers(pod, self.kuberuntime._grace(pod))
            self.runtime.stop_pod_sandbox(uid)
            if meta.get("deletionTimestamp"):
                self.status_manager.terminated(uid)
            return SyncResult(finished=True)
        if meta.get("deletionTimestamp"):
            return (yield from self._sync_terminating(pod))
        self.status_manager.set_pod_status(pod, self.generate_api_status(pod))
        if self.status_manager.statuses[uid]["phase"] in TERMINAL:
            # restartPolicy Never / OnFailure: it is over; what still runs (sidecars) stops
            yield from self.kuberuntime.kill_containers(pod, self.kuberuntime._grace(pod))
            self.runtime.stop_pod_sandbox(uid)
            self.probes.remove_pod(uid)
            return SyncResult(finished=True)
        mirror_error = ""
        if static:
            try:
                self.mirror_client.ensure(pod, self.mirrors.get(namespace_key(pod)))
            except Exception as err:  # the API is away: the static pod runs anyway
                mirror_error = f"mirror pod: {err}"
        # WaitForAttachAndMount: no container starts before the pod's volumes are mounted.
        unmounted = self.volume_manager.wait_for_attach_and_mount(pod)
        if unmounted is not None:
            return unmounted
        version, reasons = self.runtime.version, dict(self.reasons.get(uid, {}))
        result: SyncResult = yield from self.kuberuntime.sync_pod(pod)
        latest = self.pods.get(uid)
        if latest is not None and (self.runtime.version != version or self.reasons.get(uid, {}) != reasons):
            # Upstream reports this at the next sync, which a PLEG event triggers soon after.
            self.status_manager.set_pod_status(latest, self.generate_api_status(latest))
        return result if result.error or not mirror_error else SyncResult(error=mirror_error)

    def _sync_terminating(self, pod: Object) -> Step:
        """SyncTerminatingPod: stop every container within the grace period, then hand the
        final status to the status manager, which deletes the pod."""
        uid = pod["metadata"]["uid"]
        yield from self.kuberuntime.kill_containers(pod, self.kuberuntime._grace(pod))
        self.runtime.stop_pod_sandbox(uid)
        self.probes.remove_pod(uid)
        self.volume_manager.unmount_pod(uid)
        latest = self.pods.get(uid, pod)
        self.status_manager.set_pod_status(latest, self.generate_api_status(latest, terminal=True))
        self.status_manager.terminated(uid)
        return SyncResult(finished=True)

    def _sync_removed(self, uid: str) -> Step:
        pod = self.removed.get(uid)
        if pod is not None:
            yield from self.kuberuntime.kill_containers(pod, self.kuberuntime._grace(pod))
        else:
            for c in self.runtime.pod_containers(uid):
                if c.state == RUNNING:
                    yield self.runtime.stop_container(c.id, self.config.minimum_grace_period)
        self.runtime.remove_pod(uid)
        self.probes.remove_pod(uid)
        self.volume_manager.unmount_pod(uid)
        self.status_manager.forget(uid)
        self.reasons.pop(uid, None)
        self.removed.pop(uid, None)
        self.workers.forget(uid)
        return SyncResult(finished=True)

    # ------------------------------------------------------------------ status

    def _ready(self, pod: Object, c: Container) -> tuple[bool, bool]:
        spec: Object = next((s for s in (pod.get("spec") or {}).get("containers") or []
                             if s.get("name") == c.name), {})
        started = c.state == RUNNING and self.probes.started(c)
        ready = started and self.probes.result(c, "readiness", "readinessProbe" in spec) == SUCCESS
        return ready, started

    def generate_api_status(self, pod: Object, terminal: bool = False) -> Object:
        """generateAPIPodStatus."""
        uid, spec = pod["metadata"]["uid"], pod.get("spec") or {}
        api_status = pod.get("status") or {}
        old = self.status_manager.get_pod_status(uid) or api_status
        containers = self.runtime.pod_containers(uid)
        reasons = self.reasons.get(uid, {})
        inits = container_statuses(pod, spec.get("initContainers") or [], containers,
                                   old.get("initContainerStatuses") or [], reasons,
                                   lambda c: self._ready(pod, c), init=True)
        regular = container_statuses(pod, spec.get("containers") or [], containers,
                                     old.get("containerStatuses") or [], reasons,
                                     lambda c: self._ready(pod, c), init=False)
        ephemeral = container_statuses(pod, spec.get("ephemeralContainers") or [], containers,
                                       old.get("ephemeralContainerStatuses") or [], reasons,
                                       lambda c: (False, c.state == RUNNING), init=False)
        phase = get_phase(pod, regular + inits, terminal)
        for previous in (old.get("phase"), api_status.get("phase")):
            if phase not in TERMINAL and previous in TERMINAL:
                phase = previous  # pods never leave a terminal phase
        sandbox = self.runtime.sandboxes.get(uid)
        ready = sandbox is not None and sandbox.state == SANDBOX_READY
        conditions = [c for c in api_status.get("conditions") or []
                      if c.get("type") not in KUBELET_CONDITIONS]
        status: Object = {"phase": phase,
                          "conditions": conditions + pod_conditions(pod, inits, regular, phase, ready,
                                                                    conditions),
                          "hostIP": self.node_ip, "hostIPs": [{"ip": self.node_ip}],
                          "containerStatuses": regular}
        if sandbox is not None:  # a hostNetwork pod has the node's address
            ip = self.node_ip if spec.get("hostNetwork") else sandbox.ip
            status.update(podIP=ip, podIPs=[{"ip": ip}])
        if ephemeral:
            status["ephemeralContainerStatuses"] = ephemeral
        if inits:
            status["initContainerStatuses"] = inits
        if api_status.get("qosClass"):
            status["qosClass"] = api_status["qosClass"]
        if phase == old.get("phase") and old.get("reason"):
            status.update(reason=old["reason"], message=old.get("message", ""))
        return status


def _meta(pod: Object) -> Object:
    return {k: v for k, v in (pod.get("metadata") or {}).items()
            if k not in ("resourceVersion", "managedFields")}
