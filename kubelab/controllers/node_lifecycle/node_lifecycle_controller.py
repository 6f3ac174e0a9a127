"""The node lifecycle controller: notice nodes that stopped reporting, and taint them.

Follows pkg/controller/nodelifecycle/node_lifecycle_controller.go. Every node-monitor-period
(5 s) monitorNodeHealth looks at each node's two heartbeats, its Ready condition's
lastHeartbeatTime and its Lease's renewTime (tryUpdateNodeHealth):
- a heartbeat moved: the node is alive, its probe timestamp is now;
- none for node-monitor-grace-period (50 s since 1.32; 40 s before, PR #126287), or
  node-startup-grace-period (60 s) for a node that never reported: its conditions become
  Unknown, reason NodeStatusUnknown, `Kubelet stopped posting node status.`; event
  NodeNotReady `Node node-1 status is now: NodeNotReady`; its pods' Ready condition becomes
  False (MarkPodsNotReady, event `Node is not ready`);
- on the next pass the node is queued for the taint node.kubernetes.io/unreachable:NoExecute
  (not-ready:NoExecute if Ready is False). Tainting goes through a rate-limited queue per zone
  (0.1 node per second) and stops when every node of every zone is down ("full disruption":
  then the problem is more likely the control plane's own network than all the nodes);
- a node that is Ready again loses both taints.
Separately, on every node change, the NoSchedule taints follow the conditions (Ready False ->
not-ready:NoSchedule, Unknown -> unreachable:NoSchedule, spec.unschedulable ->
unschedulable:NoSchedule), so the scheduler stops choosing the node.
The taint eviction controller (taint_eviction.py) then evicts the pods.

kubelab rule, not upstream's: a "hollow node" (annotation kubelab.dev/hollow-node, created by
the Cluster when no kubelet runs) has nobody to heartbeat for it, so it is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy, parse_time, rfc3339
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.events import NORMAL, WARNING
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.node_lifecycle.taints import (
    NOT_READY,
    UNREACHABLE,
    has_taint,
    no_schedule_taints,
    swap_taints,
)
from kubelab.controllers.node_lifecycle.zones import Zones, zone_key
from kubelab.sim.clock import Timer

__all__ = ["HOLLOW_NODE_ANNOTATION", "NOT_READY", "UNREACHABLE", "NodeLifecycleController"]

HOLLOW_NODE_ANNOTATION = "kubelab.dev/hollow-node"
NODE_NAME_INDEX = "spec.nodeName"
NODE_UPDATE_WORKER_SIZE = 8  # nodeUpdateWorkerSize: the no-schedule tainting pass's workers


@dataclass
class NodeHealth:
    probe_timestamp: float
    ready_transition_timestamp: float
    status: Object
    lease: Object | None = None


def _condition(status: Object | None, kind: str) -> Object | None:
    return next((c for c in (status or {}).get("conditions") or [] if c.get("type") == kind), None)


class NodeLifecycleController:
    NAME = "node-lifecycle-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 node_monitor_period: float = 5.0, node_monitor_grace_period: float = 50.0,
                 node_startup_grace_period: float = 60.0, eviction_limiter_qps: float = 0.1,
                 secondary_eviction_limiter_qps: float = 0.01, large_cluster_threshold: int = 50,
                 unhealthy_zone_threshold: float = 0.55) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.monitor_period, self.grace_period = node_monitor_period, node_monitor_grace_period
        self.startup_grace_period = node_startup_grace_period
        self.zones = Zones(eviction_limiter_qps, secondary_eviction_limiter_qps, large_cluster_threshold,
                           unhealthy_zone_threshold)
        self.recorder = ctx.recorder("node-controller")
        self.node_informer = informers.informer_for("nodes")
        self.lease_informer = informers.informer_for("leases")
        self.pod_informer = informers.informer_for("pods")
        if NODE_NAME_INDEX not in self.pod_informer.indexer.get_indexers():
            self.pod_informer.indexer.add_indexers({NODE_NAME_INDEX: _node_name_index})
        self.health: dict[str, NodeHealth] = {}
        self.known_nodes: dict[str, Object] = {}
        self.no_schedule = Controller(f"{self.NAME}/noschedule", self.do_no_schedule_tainting_pass,
                                      ctx.clock, trace=ctx.trace,
                                      workers=NODE_UPDATE_WORKER_SIZE, client=ctx.client,
                                      cost=ctx.sync_cost)
        self.node_informer.add_event_handler(ResourceEventHandler(
            lambda n: self.no_schedule.queue.add(n["metadata"]["name"]),
            lambda _o, n: self.no_schedule.queue.add(n["metadata"]["name"])))
        self.running = False
        self._timers: list[Timer] = []
        self._next_pass: Timer | None = None  # the one pending extra tainting pass

    def run(self) -> None:
        self.running = True
        self.no_schedule.run()
        self._monitor()

    def stop(self) -> None:
        self.running = False
        self.no_schedule.stop()
        for timer in self._timers:
            timer.cancel()
        if self._next_pass is not None:
            self._next_pass.cancel()

    def _monitor(self) -> None:
        if not self.running:
            return
        self.monitor_node_health()
        self._timers = [t for t in self._timers if not t.cancelled and t.when > self.clock.now]
        self._timers.append(self.clock.call_later(self.monitor_period, self._monitor, background=True))

    # ------------------------------------------------------------------ monitorNodeHealth

    def monitor_node_health(self) -> None:
        nodes = sorted((n for n in self.node_informer.indexer.list()
                        if HOLLOW_NODE_ANNOTATION not in (n["metadata"].get("annotations") or {})),
                       key=lambda n: n["metadata"]["name"])
        names = {n["metadata"]["name"] for n in nodes}
        for node in nodes:
            name = node["metadata"]["name"]
            if name not in self.known_nodes:
                self._node_event(node, "RegisteredNode",
                                 f"Node {name} event: Registered Node {name} in Controller")
                self.known_nodes[name] = node
                self.zones.tainter(zone_key(node))
                self.mark_node_as_reachable(node)
        for name in sorted(set(self.known_nodes) - names):
            self._node_event(self.known_nodes.pop(name), "RemovingNode",
                             f"Node {name} event: Removing Node {name} from Controller")
            self.health.pop(name, None)
        zone_conditions: dict[str, list[Object | None]] = {}
        for cached in nodes:
            node = deep_copy(cached)  # upstream: nodes[i].DeepCopy()
            try:
                observed, current = self.try_update_node_health(node)
            except ApiError:
                continue  # the API is away: no decision without fresh information
            zone_conditions.setdefault(zone_key(node), []).append(current)
            if current is None:
                continue
            self.process_taint_based_eviction(node, observed)
            if current.get("status") != "True" and observed.get("status") == "True":
                name = node["metadata"]["name"]
                self._node_event(node, "NodeNotReady", f"Node {name} status is now: NodeNotReady")
                self.mark_pods_not_ready(name)
        change = self.zones.handle_disruption(zone_conditions, self.clock.now)
        if change == "enter":  # every node is down: stop evicting, take the taints off
            for node in nodes:
                self.mark_node_as_reachable(node)
        elif change == "exit":  # back from full disruption: every node's clock starts afresh
            for health in self.health.values():
                health.probe_timestamp = health.ready_transition_timestamp = self.clock.now
        self._tainting_pass()

    def try_update_node_health(self, node: Object) -> tuple[Object, Object | None]:
        """Returns (the Ready condition as observed, the Ready condition after this pass)."""
        name, now = node["metadata"]["name"], self.clock.now
        created = parse_time(node["metadata"].get("creationTimestamp") or rfc3339(0))
        health = self.health.get(name)
        status = node.setdefault("status", {})
        current = _condition(status, "Ready")
        if current is None:  # the kubelet never posted node status
            stamp = node["metadata"].get("creationTimestamp")
            observed: Object = {"type": "Ready", "status": "Unknown", "lastHeartbeatTime": stamp,
                                "lastTransitionTime": stamp}
            grace = self.startup_grace_period
            if health is None:
                health = NodeHealth(created, created, status)
        else:
            observed, grace = dict(current), self.grace_period
        saved = _condition(health.status, "Ready") if health else None
        saved_lease = health.lease if health else None
        if health is None or (saved is None) != (current is None):
            health = NodeHealth(now, now, status)
        elif saved is not None and current is not None and \
                saved.get("lastHeartbeatTime") != current.get("lastHeartbeatTime"):
            moved = saved.get("lastTransitionTime") != current.get("lastTransitionTime")
            health = NodeHealth(now, now if moved else health.ready_transition_timestamp, status,
                                health.lease)
        lease, exists = self.lease_informer.indexer.get_by_key(f"kube-node-lease/{name}")
        if exists and (saved_lease is None or _renew_time(saved_lease) < _renew_time(lease)):
            health.lease, health.probe_timestamp = lease, now
        self.health[name] = health
        if now > health.probe_timestamp + grace:
            for kind in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
                cond = _condition(status, kind)
                if cond is None:
                    status.setdefault("conditions", []).append({
                        "type": kind, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                        "message": "Kubelet never posted node status.",
                        "lastHeartbeatTime": node["metadata"].get("creationTimestamp"),
                        "lastTransitionTime": rfc3339(now)})
                elif cond.get("status") != "Unknown":
                    cond.update(status="Unknown", reason="NodeStatusUnknown",
                                message="Kubelet stopped posting node status.",
                                lastTransitionTime=rfc3339(now))
            current = _condition(status, "Ready")
            if current != observed:
                self.client.update_status(node)
                self.health[name] = NodeHealth(health.probe_timestamp, now, status, lease if exists else None)
        return observed, current

    # ------------------------------------------------------------------ taints

    def process_taint_based_eviction(self, node: Object, observed: Object) -> None:
        status = observed.get("status")
        if status == "False":
            if has_taint(node, UNREACHABLE, "NoExecute"):
                self.swap_taints(node, add=[NOT_READY], remove=[UNREACHABLE])
            else:
                self.mark_node_for_tainting(node, "False")
        elif status == "Unknown":
            if has_taint(node, NOT_READY, "NoExecute"):
                self.swap_taints(node, add=[UNREACHABLE], remove=[NOT_READY])
            else:
                self.mark_node_for_tainting(node, "Unknown")
        elif status == "True":
            self.mark_node_as_reachable(node)

    def mark_node_for_tainting(self, node: Object, status: str) -> bool:
        queue = self.zones.tainter(zone_key(node))
        name = node["metadata"]["name"]
        taint = NOT_READY if status == "False" else UNREACHABLE
        if not has_taint(node, taint, "NoExecute"):
            queue.remove(name)
        return queue.add(name, node["metadata"].get("uid", ""), self.clock.now)

    def mark_node_as_reachable(self, node: Object) -> bool:
        if has_taint(node, UNREACHABLE, "NoExecute") or has_taint(node, NOT_READY, "NoExecute"):
            self.swap_taints(node, add=[], remove=[UNREACHABLE, NOT_READY])
        return self.zones.tainter(zone_key(node)).remove(node["metadata"]["name"])

    def _tainting_pass(self) -> None:
        """doNoExecuteTaintingPass: take nodes off each zone's queue as its limiter allows.

        Upstream runs it every NodeEvictionPeriod (100 ms); kubelab runs it on each monitor
        pass and once more when the first zone's next token is due (one pending pass at most).
        """
        waits = [wait for zone in sorted(self.zones.tainters)
                 if (wait := self.zones.tainters[zone].try_process(self.clock.now, self._taint_node))
                 is not None]
        if self._next_pass is not None:
            self._next_pass.cancel()
            self._next_pass = None
        if waits and self.running:
            self._next_pass = self.clock.call_later(min(waits), self._tainting_pass, background=True)

    def _taint_node(self, name: str) -> bool:
        node, exists = self.node_informer.indexer.get_by_key(name)
        if not exists:
            return True
        ready = _condition(node.get("status"), "Ready")
        if ready is None:
            return False
        if ready.get("status") == "False":
            return self.swap_taints(node, add=[NOT_READY], remove=[UNREACHABLE])
        if ready.get("status") == "Unknown":
            return self.swap_taints(node, add=[UNREACHABLE], remove=[NOT_READY])
        return True  # Ready again meanwhile: nothing to do

    def do_no_schedule_tainting_pass(self, name: str) -> None:
        """The NoSchedule taints follow the node's conditions and spec.unschedulable."""
        node, exists = self.node_informer.indexer.get_by_key(name)
        if not exists or HOLLOW_NODE_ANNOTATION in (node["metadata"].get("annotations") or {}):
            return
        wanted, have = no_schedule_taints(node)
        if wanted != have:
            self.swap_taints(node, add=sorted(wanted - have), remove=sorted(have - wanted),
                             effect="NoSchedule")

    def swap_taints(self, node: Object, add: list[str], remove: list[str], effect: str = "NoExecute") -> bool:
        name = node["metadata"]["name"]
        try:
            swap_taints(self.client, self.clock.now, name, add, remove, effect)
        except ApiError as err:
            self.ctx.trace.record(self.NAME, "taint-failed", f"nodes/{name}", reason=err.reason)
            return False
        return True

    # ------------------------------------------------------------------ zones and pods

    def mark_pods_not_ready(self, node_name: str) -> None:
        """MarkPodsNotReady: the pods of a silent node are no longer Ready."""
        for pod in sorted(self.pod_informer.indexer.by_index(NODE_NAME_INDEX, node_name),
                          key=lambda p: p["metadata"]["name"]):
            ready = _condition(pod.get("status"), "Ready")
            if ready is None or ready.get("status") == "False":
                continue
            fresh = deep_copy(pod)
            cond = _condition(fresh["status"], "Ready")
            assert cond is not None
            cond.update(status="False", lastTransitionTime=rfc3339(self.clock.now))
            try:
                self.client.update_status(fresh)
            except ApiError:
                continue
            self.recorder.event(pod, WARNING, "NodeNotReady", "Node is not ready")

    def _node_event(self, node: Object, reason: str, message: str) -> None:
        ref = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node["metadata"]["name"],
                                                                 "uid": node["metadata"].get("uid", "")}}
        self.recorder.event(ref, NORMAL, reason, message)


def _renew_time(lease: Object) -> float:
    text = (lease.get("spec") or {}).get("renewTime")
    return parse_time(text) if text else -1.0


def _node_name_index(pod: Any) -> list[str]:
    node = ((pod.get("spec") or {}) if isinstance(pod, dict) else {}).get("nodeName")
    return [str(node)] if node else []
