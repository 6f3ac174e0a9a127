"""VolumeBinding: a pod goes only where its claims' volumes can be, and the scheduler binds the
claims it was asked to wait for (pkg/scheduler/framework/plugins/volumebinding/volume_binding.go
and binder.go: GetPodVolumeClaims, FindPodVolumes, AssumePodVolumes, BindPodVolumes).

- PreFilter: a pod without claims is skipped. A claim that does not exist, or is being deleted,
  rules the pod out everywhere; so does a claim that is unbound although its class binds at
  once (Immediate): "pod has unbound immediate PersistentVolumeClaims", for the PV controller
  to bind first.
- Filter: a bound claim's volume must accept the node (its node affinity: "node(s) had volume
  node affinity conflict"); a claim of a WaitForFirstConsumer class needs an Available volume
  that fits and accepts the node, or a class with a provisioner ("node(s) didn't find
  available persistent volumes to bind").
- PreBind: on the chosen node, bind each chosen static volume (its claimRef), and hand the rest
  to provisioning by writing the annotation volume.kubernetes.io/selected-node on the claim;
  then wait, polling every second for up to bindTimeoutSeconds (600 s), until the PV
  controller has bound them all. Only then is the pod bound.

EventsToRegister (in kubelab/scheduler/events.py, with the other plugins'): a pod turned away
here is requeued when one of its own claims is created or changes, when a volume is created
or changes, when a class is created or its allowedTopologies change, and on a node's Add or
label change; the scheduler runs informers for claims, volumes and classes to hear of them.

Departure (docs/ARCHITECTURE.md): the plugin reads claims, volumes and classes with GETs and a
LIST through the scheduler's client, for pods that have claims, instead of from those
informers' listers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubelab.api import deep_copy
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.quantity import parse_quantity
from kubelab.scheduler.interface import Code, CycleState, Handle, PreFilterResult, Status
from kubelab.scheduler.plugins.helper import node_selector_term_matches
from kubelab.scheduler.types import NodeInfo, Object

__all__ = ["ERR_REASON_BIND_CONFLICT", "ERR_REASON_NODE_CONFLICT", "ERR_UNBOUND_IMMEDIATE",
           "VolumeBinding"]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
BIND_TIMEOUT = 600.0   # VolumeBindingArgs.bindTimeoutSeconds
POLL_PERIOD = 1.0
_STATE_KEY = "PreFilterVolumeBinding"


@dataclass
class _State:
    bound: list[Object] = field(default_factory=list)        # claims with a volumeName
    to_bind: list[Object] = field(default_factory=list)      # delayed claims, unbound
    volumes: dict[str, Object] = field(default_factory=dict)  # every PV, by name
    classes: dict[str, Object | None] = field(default_factory=dict)
    # node -> (static bindings: claim key -> volume, claims to provision)
    by_node: dict[str, tuple[dict[str, Object], list[Object]]] = field(default_factory=dict)
    written: bool = False


def _volume_accepts(volume: Object, node: NodeInfo) -> bool:
    """CheckNodeAffinity: no affinity, or one of its required terms matches the node."""
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if not required:
        return True
    return any(node_selector_term_matches(t, node.labels, node.name)
               for t in required.get("nodeSelectorTerms") or ())


def _claim_class(claim: Object) -> str:
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def _size(text: Any) -> float:
    try:
        return float(parse_quantity(text).as_decimal())
    except (ParseError, TypeError):
        return -1.0


def _claim_volumes(pod: Object) -> list[str]:
    return [str((v.get("persistentVolumeClaim") or {}).get("claimName"))
            for v in (pod.get("spec") or {}).get("volumes") or []
            if isinstance(v, dict) and (v.get("persistentVolumeClaim") or {}).get("claimName")]


class VolumeBinding:
    name = "VolumeBinding"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.bind_timeout = float(args.get("bindTimeoutSeconds", BIND_TIMEOUT)) if args else BIND_TIMEOUT

    @property
    def client(self) -> Any:
        return getattr(self.handle, "client", None)

    def _get(self, resource: str, name: str, namespace: str = "default") -> Object | None:
        try:
            return dict(self.client.get(resource, name, namespace))
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    def _class(self, state: _State, name: str) -> Object | None:
        if name not in state.classes:
            state.classes[name] = self._get("storageclasses", name) if name else None
        return state.classes[name]

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, state: CycleState, pod: Object,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        names = _claim_volumes(pod)
        if not names:
            return None, Status(Code.Skip)
        if self.client is None:
            return None, Status(Code.Error, "VolumeBinding has no client to read claims with")
        namespace = (pod.get("metadata") or {}).get("namespace", "default")
        s = _State()
        immediate = False
        for name in names:
            claim = self._get("persistentvolumeclaims", name, namespace)
            if claim is None:
                return None, Status(Code.UnschedulableAndUnresolvable,
                                    f'persistentvolumeclaim "{name}" not found')
            if claim["metadata"].get("deletionTimestamp"):
                return None, Status(Code.UnschedulableAndUnresolvable,
                                    f'persistentvolumeclaim "{name}" is being deleted')
            if (claim.get("spec") or {}).get("volumeName"):
                s.bound.append(claim)
                continue
            sc = self._class(s, _claim_class(claim))
            if sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer":
                s.to_bind.append(claim)
            else:
                immediate = True
        if immediate:
            return None, Status(Code.UnschedulableAndUnresolvable, ERR_UNBOUND_IMMEDIATE)
        for claim in s.bound:
            volume = self._get("persistentvolumes", claim["spec"]["volumeName"])
            if volume is not None:
                s.volumes[volume["metadata"]["name"]] = volume
        if s.to_bind:
            for volume in self.client.list("persistentvolumes").get("items") or []:
                s.volumes[volume["metadata"]["name"]] = dict(volume)
        state.write(_STATE_KEY, s)
        return None, None

    # ------------------------------------------------------------------ Filter

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        s: _State = state.read(_STATE_KEY)
        for claim in s.bound:  # checkBoundClaims
            volume = s.volumes.get(claim["spec"]["volumeName"])
            if volume is None:
                return Status(Code.UnschedulableAndUnresolvable,
                              f'persistentvolume "{claim["spec"]["volumeName"]}" not found')
            if not _volume_accepts(volume, node_info):
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_CONFLICT)
        static: dict[str, Object] = {}
        provision: list[Object] = []
        chosen: set[str] = set()
        for claim in s.to_bind:  # findMatchingVolumes, then checkVolumeProvisions
            volume = self._match(claim, s, node_info, chosen)
            if volume is not None:
                chosen.add(volume["metadata"]["name"])
                static[_key(claim)] = volume
                continue
            sc = self._class(s, _claim_class(claim)) or {}
            if sc.get("provisioner") in (None, "", NO_PROVISIONER):
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT)
            provision.append(claim)
        s.by_node[node_info.name] = (static, provision)
        return None

    def _match(self, claim: Object, s: _State, node: NodeInfo, chosen: set[str]) -> Object | None:
        """FindMatchingVolume with the node: the smallest Available volume of the claim's class,
        modes and size that accepts the node (or the one pre-bound to the claim)."""
        spec = claim.get("spec") or {}
        want = _size((spec.get("resources") or {}).get("requests", {}).get("storage"))
        modes = set(spec.get("accessModes") or [])
        best: Object | None = None
        for name in sorted(s.volumes):
            volume = s.volumes[name]
            vspec = volume.get("spec") or {}
            if name in chosen or _size((vspec.get("capacity") or {}).get("storage")) < want:
                continue
            if not _volume_accepts(volume, node):
                continue
            ref = vspec.get("claimRef") or {}
            if ref:
                if ref.get("name") == claim["metadata"]["name"] and \
                        ref.get("namespace") == claim["metadata"].get("namespace") and \
                        ref.get("uid") in (None, "", claim["metadata"].get("uid")):
                    return volume
                continue
            if (volume.get("status") or {}).get("phase") != "Available" or \
                    str(vspec.get("storageClassName") or "") != _claim_class(claim) or \
                    not modes <= set(vspec.get("accessModes") or []):
                continue
            size = _size((vspec.get("capacity") or {}).get("storage"))
            if best is None or size < _size(best["spec"]["capacity"]["storage"]):
                best = volume
        return best

    # ------------------------------------------------------------------ PreBind

    def pre_bind(self, state: CycleState, pod: Object, node_name: str) -> Status | None:
        """BindPodVolumes: write the bindings once, then Wait until they are all done."""
        try:
            s: _State = state.read(_STATE_KEY)
        except KeyError:
            return None  # the pod has no claims
        if not s.to_bind:
            return None
        static, provision = s.by_node.get(node_name, ({}, []))
        try:
            if not s.written:
                s.written = True
                for key, volume in static.items():
                    claim = next(c for c in s.to_bind if _key(c) == key)
                    new = deep_copy(dict(volume))
                    meta = claim["metadata"]
                    new["spec"]["claimRef"] = {
                        "kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""),
                        "name": meta["name"], "uid": meta.get("uid", ""), "apiVersion": "v1",
                        "resourceVersion": meta.get("resourceVersion", "")}
                    new["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
                    self.client.update(new)
                for claim in provision:
                    new = deep_copy(dict(claim))
                    new["metadata"].setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
                    self.client.update(new)
            for claim in s.to_bind:  # checkBindings
                fresh = self._get("persistentvolumeclaims", claim["metadata"]["name"],
                                  claim["metadata"].get("namespace", "default"))
                if fresh is None:
                    return Status(Code.Error, f'binding volumes: persistentvolumeclaim '
                                  f'"{claim["metadata"]["name"]}" not found')
                if not (fresh.get("spec") or {}).get("volumeName") or \
                        ANN_BIND_COMPLETED not in (fresh["metadata"].get("annotations") or {}):
                    return Status(Code.Wait, "waiting for the volumes to be bound")
        except ApiError as err:
            return Status(Code.Error, f"binding volumes: {err.message}")
        return None


def _key(claim: Object) -> str:
    return f"{claim['metadata'].get('namespace', '')}/{claim['metadata']['name']}"
