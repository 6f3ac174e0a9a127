"""How the control plane knows a node is alive: its Node object, its status and its Lease.

Follows pkg/kubelet/kubelet_node_status.go (registerWithAPIServer, tryUpdateNodeStatus),
pkg/kubelet/nodestatus/setters.go and pkg/kubelet/nodelease (the lease controller):
- on start the kubelet creates its Node (labels, taints, capacity, allocatable, addresses);
  if it already exists (a restart) it keeps the existing one;
- every nodeStatusUpdateFrequency (10 s) it computes the node's conditions (MemoryPressure,
  DiskPressure, PIDPressure: False; Ready: True, reason KubeletReady, `kubelet is posting ready
  status`), but it posts them only when something changed or nodeStatusReportFrequency (5 min)
  has passed: the cheap heartbeat is the Lease;
- every leaseDuration/4 (10 s) it renews its Lease `kube-node-lease/<node>`: spec.renewTime.
The node lifecycle controller watches both; silence from both for node-monitor-grace-period
makes the node's Ready condition Unknown.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import micro_time, rfc3339
from kubelab.client.client import Client
from kubelab.client.events import NORMAL
from kubelab.kubelet.config import KubeletConfiguration
from kubelab.sim.clock import Clock, Timer
from kubelab.sim.trace import Trace

__all__ = ["NODE_LEASE_NAMESPACE", "NodeHeartbeat", "node_conditions"]

NODE_LEASE_NAMESPACE = "kube-node-lease"
KUBELET_VERSION = "v1.34.0"  # the release kubelab follows (docs/ARCHITECTURE.md)

# (type, status, reason, message): what a healthy kubelet reports (nodestatus/setters.go).
HEALTHY = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def node_conditions(old: list[Object], now: float) -> list[Object]:
    """The conditions at `now`, keeping lastTransitionTime of those that did not change."""
    before = {c.get("type"): c for c in old}
    out = []
    for kind, status, reason, message in HEALTHY:
        prev = before.get(kind) or {}
        changed = prev.get("status") != status
        out.append({"type": kind, "status": status, "reason": reason, "message": message,
                    "lastHeartbeatTime": rfc3339(now),
                    "lastTransitionTime": rfc3339(now) if changed else prev.get("lastTransitionTime")})
    return out


class NodeHeartbeat:
    def __init__(self, client: Client, clock: Clock, manifest: Object, config: KubeletConfiguration,
                 record: Callable[[Object, str, str, str], None], *, node_ip: str, pod_cidr: str,
                 alive: Callable[[], bool], get_node: Callable[[], Object | None] = lambda: None,
                 trace: Trace | None = None, name: str = "kubelet") -> None:
        self.client, self.clock, self.manifest, self.config = client, clock, manifest, config
        self.record, self.node_ip, self.pod_cidr, self.alive = record, node_ip, pod_cidr, alive
        self.trace, self.name, self.get_node = trace, name, get_node
        self.node_name = str(manifest["metadata"]["name"])
        self.node: Object | None = None     # the Node as we last wrote or read it
        self.lease: Object | None = None
        self.last_report = -1e18            # when the node status was last posted
        self._healthy: Object | None = None  # the Node object last found healthy
        self.renewals = 0
        self._timers: list[Timer] = []

    @property
    def ref(self) -> Object:
        """The kubelet's nodeRef: events about the node name it with the node's name as UID."""
        return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": self.node_name,
                                                                 "uid": self.node_name}}

    def start(self) -> None:
        self._every(self.config.node_status_update_frequency, self.update_node_status)
        self._every(self.config.lease_renew_interval, self.renew_lease)

    def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()

    def _every(self, period: float, fn: Callable[[], None]) -> None:
        def tick() -> None:
            if self.alive():
                fn()
                self._timers.append(self.clock.call_later(period, tick, background=True))
        self._timers.append(self.clock.call_later(0, tick, background=True))

    # ------------------------------------------------------------------ the Node

    def initial_node(self) -> Object:
        m = copy.deepcopy(self.manifest)
        meta, spec, status = m.get("metadata") or {}, m.get("spec") or {}, m.get("status") or {}
        labels = {"kubernetes.io/hostname": self.node_name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", **(meta.get("labels") or {})}
        pods = str(self.config.max_pods)
        capacity = {"cpu": "4", "memory": "8Gi", "pods": pods, **(status.get("capacity") or {})}
        taints = list(spec.get("taints") or []) + [t for t in self.config.register_with_taints
                                                   if t not in (spec.get("taints") or [])]
        node_spec = {**spec, "podCIDR": spec.get("podCIDR") or self.pod_cidr,
                     "podCIDRs": spec.get("podCIDRs") or [spec.get("podCIDR") or self.pod_cidr]}
        if taints:
            node_spec["taints"] = taints
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.node_name, "labels": labels,
                             **({"annotations": meta["annotations"]} if meta.get("annotations") else {})},
                "spec": node_spec,
                "status": {"capacity": capacity,
                           "allocatable": {**capacity, **(status.get("allocatable") or {})},
                           "addresses": [{"type": "InternalIP", "address": self.node_ip},
                                         {"type": "Hostname", "address": self.node_name}],
                           "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                           "nodeInfo": self.node_info()}}

    def node_info(self) -> Object:
        """NodeSystemInfo. Its ids are required strings in the API (a client may insist on them):
        a machine's ids are stable, so they are derived from the node's name."""
        ids = uuid.uuid5(uuid.NAMESPACE_DNS, f"{self.node_name}.kubelab.dev")
        return {"machineID": ids.hex, "systemUUID": str(ids), "bootID": str(uuid.uuid5(ids, "boot")),
                "kernelVersion": "6.8.0-kubelab", "osImage": "kubelab node",
                "containerRuntimeVersion": "containerd://1.7.22", "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}

    def register(self) -> bool:
        """registerWithAPIServer: create the Node, or adopt the one that exists."""
        try:
            self.node = self.client.create(self.initial_node())
            return True
        except ApiError as err:
            if err.code != 409:
                self._trace("register-failed", code=err.code, reason=err.reason)
                return False
        try:
            self.node = self.client.get("nodes", self.node_name)
        except ApiError:
            return False
        return True

    def update_node_status(self) -> None:
        """tryUpdateNodeStatus: look at the Node as the API has it (someone else may have
        changed its conditions; upstream reads it from the API server's cache, we from the
        kubelet's node informer), post the conditions if one changed, or every
        nodeStatusReportFrequency anyway."""
        if self.node is None and not self.register():
            return
        current = self.get_node() or self.node or {}
        recent = self.clock.now - self.last_report < self.config.node_status_report_frequency
        if recent and current is self._healthy:
            return  # the very Node we found healthy 10 s ago: informer objects never change
        old = (current.get("status") or {}).get("conditions") or []
        before = {c.get("type"): c.get("status") for c in old}
        if all(before.get(kind) == status for kind, status, _r, _m in HEALTHY) and recent:
            self._healthy = current
            return  # nothing to say, and the last report is recent: the Lease says we live
        new = node_conditions(old, self.clock.now)
        changed = [c for c in new if before.get(c["type"]) != c["status"]]
        try:
            self.node = self.client.patch("nodes", self.node_name, {"status": {"conditions": new}},
                                          "", subresource="status")
        except ApiError as err:
            self._trace("status-failed", code=err.code, reason=err.reason)
            if err.code == 404:
                self.node = None  # deleted: register again next time
            return
        self.last_report = self.clock.now
        for c in changed:  # recordNodeStatusEvent, once per transition
            event = "NodeReady" if c["type"] == "Ready" else c["reason"].replace("Kubelet", "Node")
            self.record(self.ref, NORMAL, event, f"Node {self.node_name} status is now: {event}")

    # ------------------------------------------------------------------ the Lease

    def renew_lease(self) -> None:
        """The node lease controller: create the Lease once, then move renewTime forward."""
        if self.node is None and not self.register():
            return
        try:
            if self.lease is None:
                self.lease = self._get_or_create_lease()
            else:
                spec = {**self.lease["spec"], "renewTime": micro_time(self.clock.now)}
                self.lease = self.client.update({**self.lease, "spec": spec})
            self.renewals += 1
        except ApiError as err:
            self._trace("lease-failed", code=err.code, reason=err.reason)
            self.lease = None  # read it again next time (a conflict, or it was deleted)

    def _get_or_create_lease(self) -> Object:
        now = micro_time(self.clock.now)
        try:
            lease = self.client.get("leases", self.node_name, NODE_LEASE_NAMESPACE)
        except ApiError as err:
            if err.code != 404:
                raise
            owner = self.node or {}
            return self.client.create({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.node_name, "namespace": NODE_LEASE_NAMESPACE,
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                                                  "name": self.node_name,
                                                  "uid": (owner.get("metadata") or {}).get("uid", "")}]},
                "spec": {"holderIdentity": self.node_name,
                         "leaseDurationSeconds": self.config.node_lease_duration_seconds,
                         "renewTime": now}})
        lease["spec"]["renewTime"] = now
        lease["spec"]["holderIdentity"] = self.node_name
        return self.client.update(lease)

    def _trace(self, verb: str, **detail: Any) -> None:
        if self.trace is not None:
            self.trace.record(self.name, verb, f"nodes/{self.node_name}", **detail)

