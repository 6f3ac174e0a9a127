"""The kubelet's volume manager: before a pod's containers start, every volume it names is set
up, and what each container can read there is known (kubernetes pkg/kubelet/volumemanager:
volume_manager.go WaitForAttachAndMount; populator/desired_state_of_world_populator.go, which
resolves a persistentVolumeClaim to its volume; reconciler/reconciler.go, which mounts with
exponential back-off, pkg/util/goroutinemap/exponentialbackoff: 500 ms doubling to 2m2s).

- A volume whose SetUp fails (a ConfigMap or Secret that does not exist, a key an item names
  that is not there) is retried after its back-off, each failure a Warning FailedMount event:
  `MountVolume.SetUp failed for volume "config" : configmap "app-config" not found`.
  An `optional: true` source that is missing gives an empty volume instead.
- A claim that does not exist or is not bound cannot even be resolved to a volume: it is among
  the "failed to process" volumes, without an event of its own.
- A CSI volume whose driver needs attaching (its CSIDriver's attachRequired; true without one)
  waits for its VolumeAttachment, made by the attach/detach controller, to be attached: until
  then it is among the "unattached volumes".
- While any volume is not mounted the pod's containers are not started, so the pod stays
  ContainerCreating; every podAttachAndMountTimeout (2m3s) SyncPod reports Warning FailedMount
  `Unable to attach or mount volumes: unmounted volumes=[...], unattached volumes=[],
  failed to process volumes=[...]: context deadline exceeded`. When the object appears, the
  next retry mounts the volume and the pod starts: it heals by itself.
- Mounted configMap, secret, downwardAPI and projected volumes are refreshed at each pod sync
  (upstream: at the kubelet's periodic resync), so an edited ConfigMap shows in the files, and
  a projected service account token is the one the token manager holds (a new TokenRequest
  once the old token is past 80 % of its life).
- A mounted claim whose expansion waits for the node (allocatedResourceStatuses storage:
  NodeResizePending, condition FileSystemResizePending, left by a CSI external-resizer) has its
  file system grown at the next pod sync (operation_generator.go nodeExpandVolume,
  util/resize_util.go MarkFSResizeFinished): status.capacity becomes the volume's, the
  condition and the status go, and the pod gets Normal FileSystemResizeSuccessful
  `MountVolume.NodeExpandVolume succeeded for volume "pvc-..." <node>`.

What the volumes hold lives here, in memory: an emptyDir is a writable directory shared by the
pod's containers and gone with the pod; a hostPath, and the hostPath or local directory behind
a persistentVolumeClaim, belongs to the node (the runtime's `host_paths`), so data outlives the
pod and a kubelet crash, as a disk does. container_files(pod, container) is what a container
sees (a snapshot); container_mounts(pod, container) is what the runtime mounts into the
container's file system (kubelab/kubelet/process/filesystem.py), live, so a program's writes to
an emptyDir land here and the pod's other containers read them; write_file puts a file there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubelab.api import Object
from kubelab.api.csi import attach_required, attachment_name
from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.kubelet.pod_workers import SyncResult
from kubelab.kubelet.process.filesystem import Mount
from kubelab.kubelet.token import Manager as TokenManager
from kubelab.kubelet.volumemanager.volumes import (
    MountError,
    configmap_payload,
    downward_api_payload,
    projected_payload,
    secret_payload,
)
from kubelab.sim.clock import Clock

__all__ = ["ATTACH_AND_MOUNT_TIMEOUT", "MountedVolume", "VolumeManager"]

Recorder = Callable[[Object, str, str, str], None]
ATTACH_AND_MOUNT_TIMEOUT = 123.0      # podAttachAndMountTimeout: 2m3s
INITIAL_BACKOFF, MAX_BACKOFF = 0.5, 122.0
REFRESHED = ("configMap", "secret", "downwardAPI", "projected")
SOURCES = ("emptyDir", "configMap", "secret", "downwardAPI", "projected", "persistentVolumeClaim",
           "hostPath")


class ProcessError(Exception):
    """The populator could not resolve the volume (a claim that is missing or unbound)."""


class AttachError(Exception):
    """--- hpacsi --- The volume needs attaching and its VolumeAttachment is not attached yet
    (the reconciler's VerifyControllerAttachedVolume; csi_attacher.go WaitForAttach)."""


@dataclass
class MountedVolume:
    name: str
    source: str                      # "emptyDir", "configMap", ...
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> content
    writable: bool = False           # emptyDir, hostPath and claims (unless readOnly)
    claim: tuple[str, str] | None = None  # a persistentVolumeClaim's (namespace, name)


def _source_of(volume: Object) -> str:
    return next((s for s in SOURCES if volume.get(s) is not None), "")


class VolumeManager:
    def __init__(self, client: Client, clock: Clock, record: Recorder,
                 host_paths: dict[str, dict[str, bytes]], token_manager: TokenManager, *,
                 node_name: str = "") -> None:
        """host_paths: the node's directories (path -> files), which outlive the kubelet;
        token_manager: the kubelet's, for the projected service account tokens."""
        self.client, self.clock, self.record, self.host_paths = client, clock, record, host_paths
        self.token_manager = token_manager
        self.node_name = node_name
        self.mounted: dict[str, dict[str, MountedVolume]] = {}   # pod uid -> name -> volume
        self._backoff: dict[tuple[str, str], tuple[float, float]] = {}  # -> (retry at, delay)
        self._unprocessed: set[tuple[str, str]] = set()
        self._unattached: set[tuple[str, str]] = set()
        self._waiting_since: dict[str, float] = {}

    # ------------------------------------------------------------------ reading the API

    def _get(self, resource: str, namespace: str, name: str) -> Object | None:
        try:
            return dict(self.client.get(resource, name, namespace))
        except ApiError as err:
            if err.code == 404:
                return None
            raise MountError(err.message) from err

    def _claim_volume(self, pod: Object, source: Object) -> MountedVolume:
        """The populator's processPodVolumes for a claim: the claim, bound, and its volume."""
        namespace = pod["metadata"].get("namespace", "default")
        name = str(source.get("claimName") or "")
        what = f"error processing PVC {namespace}/{name}"
        claim = self._get("persistentvolumeclaims", namespace, name)
        if claim is None:
            raise ProcessError(f'{what}: failed to fetch PVC from API server: '
                               f'persistentvolumeclaims "{name}" not found')
        volume_name = (claim.get("spec") or {}).get("volumeName")
        if (claim.get("status") or {}).get("phase") != "Bound" or not volume_name:
            raise ProcessError(f"{what}: PVC is not bound")
        pv = self._get("persistentvolumes", "", str(volume_name))
        if pv is None:
            raise ProcessError(f"{what}: failed to fetch PV {volume_name} from API server: "
                               f'persistentvolumes "{volume_name}" not found')
        spec = pv.get("spec") or {}
        csi = spec.get("csi")
        if isinstance(csi, dict) and self.node_name:
            self._wait_for_attach(str(csi.get("driver", "")), str(csi.get("volumeHandle", "")))
        path = (spec.get("hostPath") or spec.get("local") or {}).get("path") or f"pv/{volume_name}"
        return MountedVolume("", "persistentVolumeClaim", self.host_paths.setdefault(str(path), {}),
                             writable=not source.get("readOnly"), claim=(namespace, name))

    def _wait_for_attach(self, driver: str, handle: str) -> None:
        """A CSI volume whose driver needs attaching mounts once its VolumeAttachment is."""
        if not attach_required(self._get("csidrivers", "", driver)):
            return
        va = self._get("volumeattachments", "", attachment_name(handle, driver, self.node_name))
        if va is None or not (va.get("status") or {}).get("attached"):
            raise AttachError(driver)

    def set_up(self, pod: Object, volume: Object) -> MountedVolume:
        """SetUp of the volume's plugin. Raises MountError or ProcessError."""
        source = _source_of(volume)
        spec = volume.get(source) or {}
        namespace = pod["metadata"].get("namespace", "default")
        if source == "emptyDir":
            mounted = MountedVolume(volume["name"], source, writable=True)
        elif source == "hostPath":
            mounted = MountedVolume(volume["name"], source,
                                    self.host_paths.setdefault(str(spec.get("path")), {}), True)
        elif source == "persistentVolumeClaim":
            mounted = self._claim_volume(pod, spec)
        elif source == "configMap":
            mounted = MountedVolume(volume["name"], source, configmap_payload(spec, namespace, self._get))
        elif source == "secret":
            mounted = MountedVolume(volume["name"], source, secret_payload(spec, namespace, self._get))
        elif source == "downwardAPI":
            mounted = MountedVolume(volume["name"], source, downward_api_payload(spec, pod))
        elif source == "projected":
            mounted = MountedVolume(volume["name"], source,
                                    projected_payload(spec, pod, self._get,
                                                      self.token_manager.get_service_account_token))
        else:  # csi, nfs, image, ...: nothing kubelab mounts; an empty directory stands in
            mounted = MountedVolume(volume["name"], source or "unknown")
        mounted.name = volume["name"]
        return mounted

    # ------------------------------------------------------------------ WaitForAttachAndMount

    def wait_for_attach_and_mount(self, pod: Object) -> SyncResult | None:
        """None when every volume is mounted; else the SyncResult that retries when the next
        back-off ends (the pod's containers are not started meanwhile)."""
        uid, now = pod["metadata"]["uid"], self.clock.now
        mounted = self.mounted.setdefault(uid, {})
        unmounted: list[str] = []
        retry: list[float] = []
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            name = volume.get("name", "")
            if name in mounted:
                if mounted[name].source in REFRESHED:
                    self._refresh(pod, volume, mounted[name])
                elif (claim_key := mounted[name].claim) is not None:
                    self._expand_if_pending(pod, claim_key)
                continue
            key = (uid, name)
            retry_at, delay = self._backoff.get(key, (0.0, 0.0))
            if now < retry_at:
                unmounted.append(name)
                retry.append(retry_at)
                continue
            try:
                mounted[name] = self.set_up(pod, volume)
            except (MountError, ProcessError, AttachError) as err:
                if isinstance(err, AttachError):
                    self._unattached.add(key)
                elif isinstance(err, MountError):
                    self._unprocessed.discard(key)
                    self.record(pod, "Warning", "FailedMount",
                                f'MountVolume.SetUp failed for volume "{name}" : {err}')
                else:
                    self._unprocessed.add(key)
                delay = INITIAL_BACKOFF if delay == 0 else min(delay * 2, MAX_BACKOFF)
                self._backoff[key] = (now + delay, delay)
                unmounted.append(name)
                retry.append(now + delay)
                continue
            self._backoff.pop(key, None)
            self._unprocessed.discard(key)
            self._unattached.discard(key)
        if not unmounted:
            self._waiting_since.pop(uid, None)
            return None
        since = self._waiting_since.setdefault(uid, now)
        if now >= since + ATTACH_AND_MOUNT_TIMEOUT:  # the same sum as retry_at below
            failed = sorted(n for n in unmounted if (uid, n) in self._unprocessed)
            unattached = sorted(n for n in unmounted if (uid, n) in self._unattached)
            self.record(pod, "Warning", "FailedMount", "Unable to attach or mount volumes: "
                        f"unmounted volumes=[{' '.join(sorted(unmounted))}], "
                        f"unattached volumes=[{' '.join(unattached)}], "
                        f"failed to process volumes=[{' '.join(failed)}]: context deadline exceeded")
            self._waiting_since[uid] = since = now
        return SyncResult(error=f"unmounted volumes=[{' '.join(sorted(unmounted))}]",
                          retry_at=min([*retry, since + ATTACH_AND_MOUNT_TIMEOUT]))

    def _refresh(self, pod: Object, volume: Object, mounted: MountedVolume) -> None:
        try:
            fresh = self.set_up(pod, volume)
        except (MountError, ProcessError, AttachError):
            return  # the files stay as they were, as the atomic writer leaves them
        if fresh.files != mounted.files:
            mounted.files.clear()
            mounted.files.update(fresh.files)

    # --- hpacsi ---
    def _expand_if_pending(self, pod: Object, claim_key: tuple[str, str]) -> None:
        """NodeExpandVolume for a mounted claim the resizer left NodeResizePending."""
        try:
            claim = self._get("persistentvolumeclaims", *claim_key)
        except MountError:
            return
        status = (claim or {}).get("status") or {}
        if claim is None or (status.get("allocatedResourceStatuses") or {}).get("storage") != \
                "NodeResizePending":
            return
        volume_name = str((claim.get("spec") or {}).get("volumeName") or "")
        try:
            pv = self._get("persistentvolumes", "", volume_name)
        except MountError:
            return
        size = (((pv or {}).get("spec") or {}).get("capacity") or {}).get("storage")
        if size is None:
            return
        status["capacity"] = {**(status.get("capacity") or {}), "storage": size}  # MarkFSResizeFinished
        status["conditions"] = [c for c in status.get("conditions") or []
                                if c.get("type") != "FileSystemResizePending"]
        if not status["conditions"]:
            del status["conditions"]
        statuses = {k: v for k, v in (status.get("allocatedResourceStatuses") or {}).items()
                    if k != "storage"}
        if statuses:
            status["allocatedResourceStatuses"] = statuses
        else:
            status.pop("allocatedResourceStatuses", None)
        try:
            self.client.update_status(claim)
        except ApiError:
            return  # the next sync tries again
        self.record(pod, "Normal", "FileSystemResizeSuccessful",
                    f'MountVolume.NodeExpandVolume succeeded for volume "{volume_name}" {self.node_name}'
                    .rstrip())

    def unmount_pod(self, uid: str) -> None:
        """The pod is gone: its volumes are torn down (an emptyDir's files with them), and a
        projected volume's TearDown drops the pod's tokens from the token manager."""
        self.mounted.pop(uid, None)
        self.token_manager.delete_service_account_token(uid)
        self._waiting_since.pop(uid, None)
        for key in [k for k in self._backoff if k[0] == uid]:
            del self._backoff[key]
        self._unprocessed = {k for k in self._unprocessed if k[0] != uid}

    # ------------------------------------------------------------------ what a container sees

    def _mounts(self, pod: Object, container_name: str) -> list[tuple[Object, MountedVolume]]:
        spec = pod.get("spec") or {}
        container = next((c for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or []),
                                      *(spec.get("ephemeralContainers") or [])]
                          if c.get("name") == container_name), None)
        if container is None:
            raise KeyError(f'container "{container_name}" is not in pod '
                           f'{pod["metadata"].get("name", "")}')
        volumes = self.mounted.get(pod["metadata"]["uid"], {})
        return [(m, volumes[m["name"]]) for m in container.get("volumeMounts") or []
                if m.get("name") in volumes]

    def container_files(self, pod: Object, container_name: str) -> dict[str, bytes]:
        """Absolute path in the container -> content, for every file of every volumeMount
        (subPath: only that file or directory of the volume, at mountPath)."""
        out: dict[str, bytes] = {}
        for mount, volume in self._mounts(pod, container_name):
            at = str(mount.get("mountPath") or "").rstrip("/")
            sub = str(mount.get("subPath") or "").strip("/")
            for rel, data in sorted(volume.files.items()):
                if not sub:
                    out[f"{at}/{rel}"] = data
                elif rel == sub:
                    out[at] = data
                elif rel.startswith(sub + "/"):
                    out[f"{at}/{rel[len(sub) + 1:]}"] = data
        return out

    def container_mounts(self, pod: Object, container_name: str) -> list[Mount]:
        """makeMounts (kubelet_pods.go): the container's volumeMounts as the runtime mounts
        them, each over the volume's own files, so what one container writes to an emptyDir
        the others read at once. configMap, secret, downwardAPI and projected volumes are
        always read-only, as the kubelet mounts them."""
        return [Mount(str(m.get("mountPath") or ""), volume.files,
                      read_only=bool(m.get("readOnly")) or not volume.writable,
                      sub_path=str(m.get("subPath") or ""))
                for m, volume in self._mounts(pod, container_name)]

    def write_file(self, pod: Object, container_name: str, path: str, data: bytes) -> bool:
        """Write a file where a container's volume is mounted. False: the path is on no volume
        (the container's own file system). PermissionError: a readOnly mount, or a
        configMap, secret, downwardAPI or projected volume (always read-only)."""
        best: tuple[Object, MountedVolume] | None = None
        for mount, volume in self._mounts(pod, container_name):
            at = str(mount.get("mountPath") or "").rstrip("/")
            if (path == at or path.startswith(at + "/")) and \
                    (best is None or len(at) > len(str(best[0].get("mountPath") or "").rstrip("/"))):
                best = (mount, volume)
        if best is None:
            return False
        mount, volume = best
        if mount.get("readOnly") or not volume.writable:
            raise PermissionError(f"{path}: Read-only file system")
        at = str(mount.get("mountPath") or "").rstrip("/")
        rel = path[len(at):].lstrip("/")
        sub = str(mount.get("subPath") or "").strip("/")
        key = "/".join(p for p in (sub, rel) if p)
        volume.files[key] = bytes(data)
        return True
