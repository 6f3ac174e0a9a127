"""Faults are first-class: every way to break the cluster, by name, now or at a virtual time.

Each fault is recorded in the trace (component "faults") next to what it causes, and every
widget button calls one of these methods. Faults belong to the wiring layer: they reach into
the parts the way an operator's hands would (pulling a cable, filling a disk), not through the
API.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubelab.api.errors import ApiError, resource_expired
from kubelab.api.request import Request, WatchEvent, WatchHandle
from kubelab.apiserver.storage.watch_cache import WatchInfo
from kubelab.cluster.faults.ha import ReplicaFaults
from kubelab.cluster.faults.load import LoadFaults
from kubelab.cluster.faults.raft import EtcdFaults
from kubelab.cluster.faults.scale import ScaleFaults
from kubelab.cluster.faults.services import ServiceFaults
from kubelab.cluster.faults.webhooks import WebhookFaults
from kubelab.cluster.loadbalancer import Endpoint
from kubelab.sim.clock import Clock

if TYPE_CHECKING:
    from kubelab.cluster import Cluster
    from kubelab.cluster.faults.apf import Flood

__all__ = ["Faults", "NodeLink", "WatchFaults"]


class NodeLink:
    """The network between one node and the control plane; its kubelet's client talks through it.

    partition() cuts it: every request then fails the way a dead connection does (kubelab
    reports it as 503, having no "no response" to give), and open watches end, so the kubelet's
    informers retry with back-off. heal() restores it; the watches resume from the last version
    they saw, or relist. The node itself, its kubelet and its containers, carry on meanwhile.
    While the API server is down as well, the connect is refused first (kubelab's order, which
    the traces keep; a real partition would time out before it learnt that).
    """

    def __init__(self, api: Endpoint, node: str) -> None:
        self.api, self.node, self.up = api, node, True
        self._watches: list[_LinkWatch] = []

    def _refuse(self, request: Request) -> ApiError:
        return ApiError(503, "ServiceUnavailable", f'{request.verb} "https://kube-apiserver:6443'
                        f'{request.path}": dial tcp 172.18.0.1:6443: i/o timeout')

    def dial(self, request: Request) -> None:
        self.api.dial(request)
        if not self.up:
            raise self._refuse(request)

    def handle(self, request: Request) -> dict[str, Any]:
        self.dial(request)
        return self.api.handle(request)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        self.dial(request)
        link = _LinkWatch(on_event, on_close)
        link.inner = self.api.watch(request, link.deliver, link.closed)
        self._watches = [w for w in self._watches if w.active] + [link]
        return link

    def cut(self) -> None:
        self.up = False
        watches, self._watches = self._watches, []
        for w in watches:
            w.cut()


class _LinkWatch:
    def __init__(self, on_event: Callable[[WatchEvent], None], on_close: Callable[[], None] | None) -> None:
        self.on_event, self.on_close = on_event, on_close
        self.inner: WatchHandle | None = None
        self.active = True

    def deliver(self, event: WatchEvent) -> None:
        if self.active:
            self.on_event(event)

    def closed(self) -> None:
        if self.active:
            self.active = False
            if self.on_close is not None:
                self.on_close()

    def stop(self) -> None:
        self.active = False
        if self.inner is not None:
            self.inner.stop()

    def cut(self) -> None:
        self.stop()
        if self.on_close is not None:
            self.on_close()  # the client notices its connection is gone


class WatchFaults:
    """The API server's watch interceptor (WatchInterceptor) once a watch fault was set.

    For each event on its way to a watcher it returns the (delay, event) pairs to deliver:
    none (dropped), one (maybe late) or two (duplicated). Randomness comes from the cluster's
    seeded generator, so the same seed loses the same events.

    What a real watch allows, and so what each fault does:
    - Events on one watch arrive in resourceVersion order, always. A delay shifts the whole
      stream: an event is never delivered before the one sent ahead of it on the same watch,
      also when the delay shrinks or heals while events are still in flight.
    - Reordering happens between watches (a scheduler's pod watch lags its node watch), and
      reorder_watch_events does that, but it also reorders within a watch. A real stream
      cannot; a garbled one breaks. So when an event overtakes one sent before it, the watch
      ends with 410 Expired right after the overtaken (older) event arrives: the client has
      seen resourceVersion go backwards, its reflector relists, and its cache is right again.
    - A real watch never loses an event silently: a lost message breaks the connection, and a
      client that resumes from a version the server can no longer replay gets 410 Gone and
      relists. kubelab's lost events are silent while the fault lasts, so you can see a stale
      cache; once it heals, every client that lost something gets 410 Expired, on its open
      watch or on its next watch request, and relists.

    One watch fault is on at a time. A fault aimed at the same watches as the one on adds to
    it (duplicated and reordered, say); one aimed elsewhere replaces it, and heal() ends it:
    nothing a fault set comes back with a later one (a healed drop must not return with the
    next delay, which the soak found at seed 190: a delay that silently lost events).
    """

    def __init__(self, rand: random.Random, clock: Clock) -> None:
        self.rand, self.clock = rand, clock
        self.drop = self.duplicate = self.delay = self.reorder = 0.0
        self.user: str | None = None
        self.resource: str | None = None  # only this resource's watches (None: all)
        self.dropped = 0
        self.healing = False
        # Clients (user, resource, namespace, selectors) whose cache may now be stale.
        self.stale: set[tuple[str, ...]] = set()
        # Watch id -> when each of its events still in flight is due.
        self._in_flight: dict[int, list[float]] = {}
        self._break_at: dict[int, float] = {}  # watch id -> when it ends (an overtaken event)

    def set(self, *, user: str | None, resource: str | None = None, **settings: float) -> None:
        for name, value in settings.items():
            if name not in ("drop", "duplicate", "delay", "reorder"):
                raise ValueError(f"unknown watch fault {name!r}")
            if value < 0 or (name in ("drop", "duplicate") and value > 1):
                raise ValueError(f"{name} must be in [0, 1] for probabilities, >= 0 for seconds")
        if self.healing or (user, resource) != (self.user, self.resource):
            self.clear()  # a new fault: what was healed, or aimed elsewhere, does not come back
        for name, value in settings.items():
            setattr(self, name, float(value))
        self.user, self.resource = user, resource
        self.healing = False

    def heal(self) -> None:
        """Deliver everything from now on as it comes, behind what is still in flight."""
        self.clear()
        self.healing = True

    def clear(self) -> None:
        self.drop = self.duplicate = self.delay = self.reorder = 0.0

    @staticmethod
    def client_of(watch: WatchInfo) -> tuple[str, ...]:
        return (watch.user, watch.resource, watch.namespace, watch.label_selector,
                watch.field_selector)

    def __call__(self, watch: WatchInfo, event: WatchEvent) -> list[tuple[float, WatchEvent]]:
        if event.get("type") == "ERROR":
            return [(0.0, event)]  # the server's own errors end the watch and what is in flight
        now = self.clock.now
        flight = self._in_flight[watch.id] = [t for t in self._in_flight.get(watch.id, ()) if t > now]
        due = max(flight, default=now)
        targeted = not self.healing and (self.user is None or watch.user == self.user) and \
            (self.resource is None or watch.resource == self.resource)
        if not targeted:
            at = due
        elif self.drop and self.rand.random() < self.drop:
            self.dropped += 1
            self.stale.add(self.client_of(watch))
            return []
        elif self.reorder:
            at = now + self.delay + self.rand.random() * self.reorder
        else:
            at = max(now + self.delay, due)
        out = [(at - now, event)]
        overtaken = [t for t in flight if t > at]
        if overtaken and min(overtaken) < self._break_at.get(watch.id, math.inf):
            # The first older event to arrive after this one takes resourceVersion back:
            # the watch ends a nanosecond after it (float sums could tie the two otherwise).
            self._break_at[watch.id] = back = min(overtaken) + 1e-9
            # If the watch is cut before that (break_watches), the client has seen the newer
            # version and will never see the older event: it may be stale, as after a drop.
            self.stale.add(self.client_of(watch))
            status = resource_expired("too old resource version: the watch delivered events "
                                      "out of order")
            out.append((back - now, {"type": "ERROR", "object": status.status}))
        flight.append(at)
        if targeted and self.duplicate and self.rand.random() < self.duplicate:
            out.insert(1, (at - now, event))
        return out

    def on_open(self, watch: WatchInfo) -> bool:
        """Called by the API server when a watch opens: True means answer it with 410."""
        client = self.client_of(watch)
        if self.healing and client in self.stale:
            self.stale.discard(client)
            return True
        return False


class Faults(ReplicaFaults, EtcdFaults, ScaleFaults, ServiceFaults, WebhookFaults, LoadFaults):
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self.history: list[tuple[float, str, dict[str, Any]]] = []
        self._links: dict[str, NodeLink] = {}

    def _record(self, name: str, obj: str = "", **detail: Any) -> None:
        self.history.append((self._cluster.clock.now, name, detail))
        self._cluster.trace.record("faults", name, obj, **detail)

    def at(self, when: float, fault: str, *args: Any, **kwargs: Any) -> None:
        """Schedule a fault at virtual time `when`, e.g. faults.at(30, "crash", "scheduler")."""
        method: Callable[..., Any] | None = getattr(self, fault, None)
        if method is None or fault.startswith("_") or fault == "at":
            raise ValueError(f"unknown fault {fault!r}; known: {', '.join(self.names())}")
        self._cluster.clock.call_at(when, lambda: method(*args, **kwargs))

    @classmethod
    def names(cls) -> list[str]:
        return sorted({n for klass in cls.__mro__[:-1] for n in vars(klass)
                       if not n.startswith("_") and n not in ("at", "names", "node_link")})

    # ------------------------------------------------------------------ a noisy tenant

    def flood(self, user: str = "noisy-tenant", *, per_second: float = 500, seconds: float = 10,
              verb: str = "list", resource: str = "pods", namespace: str = "", name: str = ""
              ) -> Flood:
        """One client sends per_second list (or get) requests for `seconds` (apf.py)."""
        from kubelab.cluster.faults.apf import start_flood

        self._record("flood", resource, user=user, per_second=per_second, seconds=seconds)
        return start_flood(self._cluster, user, per_second=per_second, seconds=seconds, verb=verb,
                           resource=resource, namespace=namespace, name=name)

    # ------------------------------------------------------------------ the store

    def compact(self, revision: int | None = None) -> int:
        """Compact the store's history up to `revision` (default: the current revision).

        Watchers older than that get 410 Gone from the API server and must relist.
        """
        store = self._cluster.store
        target = store.revision if revision is None else revision
        if revision is None and target <= store.compact_revision:
            self._record("compact", "store", revision=target, note="already compacted")
            return target  # a second press of the button: etcd would refuse, nothing to do
        store.compact(target)
        self._record("compact", "store", revision=target)
        return target

    def slow_store(self, latency: float) -> None:
        """Make every store write wait `latency` virtual seconds for the disk (0 heals it)."""
        if latency < 0:
            raise ValueError(f"latency must be >= 0, got {latency}")
        self._cluster.store.latency = latency
        self._record("slow_store", "store", latency=latency)

    # ------------------------------------------------------------------ watch events

    def drop_watch_events(self, probability: float = 1.0, user: str | None = None) -> None:
        """Lose watch events on their way to clients (all, or only to `user`'s watches)."""
        self._watch_faults().set(drop=probability, user=user)
        self._record("drop_watch_events", "watch", probability=probability, user=user or "*")

    def delay_watch_events(self, seconds: float, user: str | None = None) -> None:
        """Deliver watch events `seconds` late, each watch still in order."""
        self._watch_faults().set(delay=seconds, user=user)
        self._record("delay_watch_events", "watch", seconds=seconds, user=user or "*")

    def duplicate_watch_events(self, probability: float = 1.0, user: str | None = None) -> None:
        """Deliver some watch events twice."""
        self._watch_faults().set(duplicate=probability, user=user)
        self._record("duplicate_watch_events", "watch", probability=probability, user=user or "*")

    def reorder_watch_events(self, spread: float = 1.0, user: str | None = None) -> None:
        """Deliver each event after a random delay in [0, spread): order is lost, between
        watches and within one. A watch that delivered an event out of order ends with 410
        right after it, and its client relists (see WatchFaults)."""
        self._watch_faults().set(reorder=spread, user=user)
        self._record("reorder_watch_events", "watch", spread=spread, user=user or "*")

    def heal_watch_events(self) -> None:
        """Stop dropping, delaying, duplicating and reordering watch events. Events still in
        flight arrive first; clients that lost events get 410 Expired and relist (see
        WatchFaults)."""
        current = self._cluster.apiserver.watch_interceptor
        expired = 0
        if isinstance(current, WatchFaults):
            # Pass everything through, after what is still in flight (the interceptor stays:
            # an event sent now must not overtake a late one), and answer stale clients with 410.
            current.heal()
            stale = set(current.stale)
            expired_clients: set[tuple[str, ...]] = set()

            def is_stale(info: WatchInfo) -> bool:
                client = WatchFaults.client_of(info)
                if client in stale:
                    expired_clients.add(client)
                    return True
                return False

            if stale:
                expired = self._cluster.apiserver.expire_watches(is_stale)
            current.stale -= expired_clients  # the rest get 410 on their next watch request
        self._record("heal_watch_events", "watch", expired=expired)

    def break_watches(self) -> None:
        """Cut every open watch connection; clients must watch again."""
        closed = self._cluster.apiserver.close_watches()
        self._record("break_watches", "watch", closed=closed)

    def _watch_faults(self) -> WatchFaults:
        current = self._cluster.apiserver.watch_interceptor
        if not isinstance(current, WatchFaults):
            current = WatchFaults(self._cluster.rand, self._cluster.clock)
            self._cluster.apiserver.watch_interceptor = current
        return current

    # ------------------------------------------------------------------ components

    def crash(self, component: str) -> None:
        """Kill a component: its memory, caches and queues are gone."""
        self._cluster.crash_component(component)
        self._record("crash", component)

    def restart(self, component: str) -> None:
        """Start a crashed component afresh: it relists everything it needs."""
        self._cluster.restart_component(component)
        self._record("restart", component)

    # ------------------------------------------------------------------ the outside world (notebook 08)

    def ledger_down(self) -> None:
        """Make the settlement ledger (kubelab/cluster/ledger.py) refuse every call."""
        self._cluster.ledger.available = False
        self._record("ledger_down")

    def ledger_up(self) -> None:
        self._cluster.ledger.available = True
        self._record("ledger_up")

    # ------------------------------------------------------------------ nodes and the registry

    def node_link(self, node: str) -> NodeLink:
        """The network link of a node's kubelet (the Cluster builds kubelet clients on it)."""
        if node not in self._links:
            self._links[node] = NodeLink(self._cluster.endpoint(f"kubelet/{node}"), node)
        return self._links[node]

    def _node(self, node: str) -> str:
        if node not in self._cluster.node_names:
            raise ValueError(f'nodes "{node}" not found; nodes: {", ".join(self._cluster.node_names)}')
        return node

    def kill_node(self, node: str) -> None:
        """The machine dies: its kubelet stops (no more heartbeats) and its containers are gone;
        on a control-plane node, the control plane it runs (its API server, scheduler and
        controller-manager replicas) dies with them."""
        self._node(node)
        for component in (f"kubelet/{node}", f"kube-proxy/{node}", *self._control_plane_on(node)):
            if component in self._cluster.components or self._is_running_apiserver(component):
                self._cluster.crash_component(component)
        self._cluster.runtimes[node].power_off()
        self._cluster.iptables[node].flush()  # the kernel's rules die with it
        self._record("kill_node", node)

    def revive_node(self, node: str) -> None:
        """The machine boots again: an empty runtime and a fresh kubelet, which reports in."""
        self._node(node)
        self._cluster.runtimes[node].power_on()
        for component in self._control_plane_on(node):
            if self._is_apiserver(component):
                if not self._is_running_apiserver(component):
                    self._cluster.restart_component(component)
            elif component not in self._cluster.components:
                self._cluster.restart_component(component)
        for component in (f"kubelet/{node}", f"kube-proxy/{node}"):
            if component not in self._cluster.components and \
                    component in self._cluster._factories:
                self._cluster.restart_component(component)
        self._record("revive_node", node)

    def _control_plane_on(self, node: str) -> list[str]:
        """The API servers and the scheduler and controller-manager replicas whose static pods
        run on `node` (the anatomy's placement; etcd stays: the store lives in kubelab)."""
        placed = getattr(self._cluster, "_processes", {})
        return [name for name, (where, image) in placed.items() if where == node and
                not name.startswith("kube-proxy/") and "etcd" not in image and
                (name in self._cluster._factories or self._is_apiserver(name))]

    def _is_apiserver(self, name: str) -> bool:
        return any(server.name == name for server in self._cluster.apiservers)

    def _is_running_apiserver(self, name: str) -> bool:
        return any(server.name == name and server.running for server in self._cluster.apiservers)

    def partition(self, node: str) -> None:
        """Cut node off the control plane: its kubelet and containers run on, unheard."""
        self.node_link(self._node(node)).cut()
        self._record("partition", node)

    def heal(self, node: str | None = None) -> None:
        """Reconnect a partitioned node (None: every node)."""
        for name in [self._node(node)] if node else list(self._links):
            self.node_link(name).up = True
        self._record("heal", node or "*")

    def break_registry(self, image: str | None = None, mode: str = "unauthorized") -> None:
        """Make pulls of image (a tag, a repository, or None for all) fail or crawl: mode is
        unauthorized, notfound, slow or flaky."""
        self._cluster.registry.set_mode(image, mode)
        self._record("break_registry", image or "*", mode=mode)

    def fix_registry(self, image: str | None = None) -> None:
        """The registry works again (for image, or for everything)."""
        self._cluster.registry.clear(image)
        self._record("fix_registry", image or "*")

    def delete_pod(self, pod: str, namespace: str = "default") -> None:
        """Delete a pod, as `kubectl delete pod` does: whatever controls it makes a new one."""
        self._cluster.client.delete("pods", pod, namespace)
        self._record("delete_pod", f"pods/{namespace}/{pod}")

    def crash_container(self, pod: str, container: str | None = None, namespace: str = "default",
                        exit_code: int = 1) -> None:
        """The process of a running container dies now; the kubelet restarts it (with back-off)."""
        obj = self._cluster.client.get("pods", pod, namespace)
        node = (obj.get("spec") or {}).get("nodeName")
        if not node:
            raise ValueError(f'pod "{pod}" is not running on any node yet')
        name = container or obj["spec"]["containers"][0]["name"]
        meta = obj["metadata"]  # a mirror pod stands for a static pod with another uid
        uid = (meta.get("annotations") or {}).get("kubernetes.io/config.mirror") or meta["uid"]
        self._cluster.runtimes[node].crash_container(uid, name, exit_code)
        self._record("crash_container", f"pods/{namespace}/{pod}", container=name, code=exit_code)
