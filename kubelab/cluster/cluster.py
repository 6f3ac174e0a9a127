"""Wiring only, like a main.go: build every part on one clock and hand each its client.

A Cluster owns the clock, the seeded random generator, the trace, the store and the API server,
then starts whichever components it is asked for. Components never see each other: each gets a
Client with its own identity and talks to the API server like any other caller.
"""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import new_uid
from kubelab.api.request import API
from kubelab.api.yamlio import load_objects
from kubelab.apiserver.flowcontrol.maxinflight import MaxInFlightFilter
from kubelab.client.apply import apply_objects
from kubelab.client.client import Client
from kubelab.client.component import Component, ComponentContext
from kubelab.client.flowcontrol import ClientConnection
from kubelab.client.leaderelection.config import LeaderElectionConfiguration
from kubelab.cluster.arguments import (
    check_arguments,
    check_client_connections,
    check_component,
    check_nodes,
)
from kubelab.cluster.components import (
    CLIENT_CONNECTIONS,
    COMPONENTS,
    HOLLOW_KUBELET,
    ComponentDescriptor,
    Constructor,
    NodeDependencies,
    build,
)
from kubelab.cluster.control_plane import KUBE_PROXY_USER, AnatomyWiring
from kubelab.cluster.custom_metrics import CustomMetricsAdapter, MetricsAdapterOff
from kubelab.cluster.custom_metrics import install as install_custom_metrics
from kubelab.cluster.dns import Answer, resolve
from kubelab.cluster.faults import Faults
from kubelab.cluster.ledger import Ledger
from kubelab.cluster.loadbalancer import DirectConnection
from kubelab.cluster.metrics_server import MetricsServer
from kubelab.cluster.metrics_server import install as install_metrics_server
from kubelab.cluster.network import NetworkPolicies, NodeView, PodNetwork, Route, route
from kubelab.cluster.prometheus import metrics_of
from kubelab.cluster.replicas import LEASES, ReplicaWiring, check_leader_elect, check_replicas, replica_names
from kubelab.cluster.traffic import Traffic
from kubelab.cluster.webhooks import WebhookServers
from kubelab.kubectl import Output, kubectl
from kubelab.kubelet.hollow import HollowRuntime
from kubelab.kubelet.registry import ImageRegistry
from kubelab.kubelet.runtime import ContainerRuntime
from kubelab.kubelet.stats import LoadGenerator
from kubelab.proxy.iptables import IPTables
from kubelab.sim import Clock, LivelockError, RealTimeClock, Trace, new_rand
from kubelab.store import Store
from kubelab.store.raft import EtcdClient, EtcdCluster

if TYPE_CHECKING:
    from kubelab.etcd import EtcdBackend
    from kubelab.etcd import EtcdCluster as RealEtcd

__all__ = ["Cluster"]

ADMIN_TOKEN = "admin-token"
RESYNC_AFTER = 0.5  # real seconds behind the wall clock after which a run on real etcd resyncs

class Edge(Protocol):
    """What the wiring needs of the HTTPS edge (kubelab.serve.Server), which it never imports."""

    def start(self) -> str: ...
    def write_kubeconfig(self, path: str) -> Path: ...


def _edge(name: str) -> Callable[..., Edge]:
    """An edge that registered itself (the entry point group "kubelab.edges" in pyproject.toml)."""
    from importlib.metadata import entry_points

    found = entry_points(group="kubelab.edges", name=name)
    if not found:
        raise RuntimeError(f"kubelab's {name} edge is not installed: run `make` (pip install -e .)")
    edge: Callable[..., Edge] = next(iter(found)).load()
    return edge


def _node_manifest(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110") -> Object:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "kubernetes.io/os": "linux"}},
        "spec": {},
        "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                   "allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }


class Cluster(ReplicaWiring, AnatomyWiring):
    """A simulated Kubernetes control plane. See README.md for the tour.

    nodes: how many nodes (named node-1, node-2, ...) or a list of Node manifests.
    components: which control-plane components to run; None means all that exist.
    replace: your own implementation of a component, e.g. {"scheduler": MyScheduler}: a class
        (or function) taking a ComponentContext, with start() and stop(); a kubelet's also
        takes its node's ContainerRuntime, kube-proxy's its node's IPTables
        (kubelab/cluster/components.py).
    replicas: how many of the apiserver, scheduler and controller-manager to run (default 1
        each), e.g. {"apiserver": 3, "scheduler": 2}; see kubelab/cluster/replicas.py.
    leader_elect: whether the scheduler and the controller manager elect a leader (their
        --leader-elect); None: always with the anatomy (as upstream), otherwise when they have
        more than one replica. A dict turns it on with
        other durations in seconds, e.g. {"renew_deadline": 4, "retry_period": 1} (defaults:
        lease_duration 15, renew_deadline 10, retry_period 2).
    store: "embedded" (kubelab's etcd stand-in), "etcd" (kubelab starts `etcd_members` real
        etcd processes, default 1, stopped by c.close()) or "etcd://host:port[,host:port]" (a
        running etcd). A real etcd forces the real-time clock at speed 1: virtual time follows
        the wall clock, runs are not reproducible, and run_until waits its timeout in real
        seconds (kubelab/etcd/, notebook 07b).
    etcd_members: with the embedded store, run etcd as a simulated Raft cluster of that many
        members (c.etcd; kubelab/store/raft/, notebook 07); None keeps the single store.
    hollow: kubemark's hollow nodes: every node runs the real kubelet on a runtime that does
        nothing (kubelab/kubelet/hollow.py), so thousands of nodes fit in one process.
    apf: True turns on API Priority and Fairness (c.apiserver.flowcontrol); "max-inflight" the
        filter kube-apiserver runs without it (400 read-only, 200 mutating requests at once);
        False (the default) neither, and every trace stays as it was.
    anatomy: the cluster as kind builds it (kubelab/cluster/anatomy.py, control_plane.py): a
        control-plane node per API server beside the `nodes` workers, the control plane as
        static pods on it, the kube-proxy and kindnet DaemonSets, coredns behind kube-dns, the
        ServiceAccounts, the `kubernetes` Service and its endpoints, the leader-election Leases
        of single replicas too. None (the default): on, unless the cluster is one of upstream's
        test harnesses, where it is off: `components` names only some (an integration test's
        API server and the components under test, test/integration/framework) or `hollow`
        (kubemark: the control plane runs outside the hollow nodes). False turns it off.
    client_connection: a component's client-side rate limit (its component config's qps and
        burst), e.g. {"controller-manager": {"qps": 100, "burst": 100}}; the others keep
        upstream's defaults (kubelab/cluster/components.py CLIENT_CONNECTIONS); a qps below 0
        turns the limiter off (kubelab/client/flowcontrol.py).
    sync_cost: virtual seconds one controller sync takes (kubelab/client/controller_loop.py,
        5 ms by default); 0 makes syncs free, as before.
    """

    def __init__(
        self,
        nodes: int | Iterable[Object] = 3,
        seed: int = 0,
        components: Iterable[str] | None = None,
        *,
        realtime: bool = False,
        speed: float = 1.0,
        max_request_bytes: int = 1572864,
        replace: dict[str, Constructor] | None = None,
        replicas: dict[str, int] | None = None,
        leader_elect: bool | dict[str, float] | None = None,
        store: str = "embedded",
        etcd_members: int | None = None,
        hollow: bool = False,
        apf: bool | str = False,
        anatomy: bool | None = None,
        client_connection: dict[str, ClientConnection | dict[str, float]] | None = None,
        sync_cost: float | None = None,
        metrics_server: bool = False,
        custom_metrics: bool = False,
    ) -> None:
        check_arguments(nodes=nodes, seed=seed, components=components, realtime=realtime,
                        speed=speed, max_request_bytes=max_request_bytes, replace=replace,
                        replicas=replicas, store=store, etcd_members=etcd_members, hollow=hollow)
        if anatomy is not None and not isinstance(anatomy, bool):
            raise TypeError(f"anatomy must be True, False or None, got {type(anatomy).__name__} "
                            f"{anatomy!r}")
        if anatomy is None:
            anatomy = components is None and not hollow
        self.client_connections = {**CLIENT_CONNECTIONS, **check_client_connections(
            client_connection, CLIENT_CONNECTIONS, sync_cost)}
        self.sync_cost = sync_cost
        self.seed = seed
        self.hollow = hollow
        self.anatomy = anatomy
        # The etcd cluster: simulated Raft members (etcd_members), or the real etcd processes
        # kubelab started (store="etcd"); None for the single embedded store or an etcd:// URL.
        self.etcd: EtcdCluster | RealEtcd | None = None
        if store != "embedded" and speed != 1.0:
            raise ValueError("a real etcd runs at the wall clock's pace: speed must be 1.0")
        self.clock: Clock = RealTimeClock(speed=speed) if realtime or store != "embedded" \
            else Clock()
        self.rand = new_rand(seed)
        self.trace = Trace(lambda: self.clock.now)
        self.store: Store | EtcdClient | EtcdBackend
        self._real_store = store != "embedded"
        if self._real_store:
            from kubelab.etcd import open_store  # the edge: sockets, threads, processes

            self.store, self.etcd = open_store(store, self.clock, members=etcd_members or 1)
        elif etcd_members is None:
            self.store = Store(self.clock, max_request_bytes=max_request_bytes, trace=self.trace)
        else:
            raft = EtcdCluster(self.clock, self.rand, self.trace, etcd_members,
                               max_request_bytes=max_request_bytes)
            self.store, self.etcd = raft.client, raft
        self.replicas = check_replicas(replicas)
        self._leader_elect, self._election = check_leader_elect(leader_elect)
        self._build_apiservers()
        self.apiserver.add_token(ADMIN_TOKEN, "kubernetes-admin", ["system:masters"])
        for server in self.apiservers:
            if apf == "max-inflight":  # what kube-apiserver does with priority and fairness off
                server.flowcontrol = MaxInFlightFilter(server)
            elif apf is True:  # API Priority and Fairness (kubelab/apiserver/flowcontrol/); upstream: on
                server.enable_priority_and_fairness()
            elif apf is not False:
                raise ValueError(f'apf must be True, False or "max-inflight", got {apf!r}')
        self.client = Client(self.endpoint("kubectl"), ADMIN_TOKEN, user_agent="kubectl")
        self.components: dict[str, Any] = {}
        self.server: Edge | None = None  # the HTTPS front end, once c.serve() started it
        self._replace = dict(replace or {})
        unknown = set(self._replace) - set(COMPONENTS)
        if unknown:
            raise ValueError(f"cannot replace unknown component(s) {sorted(unknown)}; "
                             f"replaceable: {', '.join(sorted(COMPONENTS)) or 'none yet'}")
        self.faults = Faults(self)
        components = None if components is None else list(components)
        self._register_nodes(nodes, components)
        # The world outside the API (docs/ARCHITECTURE.md section 6): the image registry every node pulls
        # from, and each node's container runtime, which outlives a kubelet crash as containerd
        # does. The faults break_registry, kill_node and crash_container reach them here.
        self.registry = ImageRegistry()
        self.ledger = Ledger(self.clock, self.trace)  # notebook 08's bank (kubelab/cluster/ledger.py)
        runtime = HollowRuntime if hollow else ContainerRuntime
        self.runtimes = {name: runtime.for_node(name, i, self.registry, self.clock, self.rand,
                                                self.trace)
                         for i, name in enumerate(self.node_names)}
        for server in self.apiservers:
            server.kubelet_connection = self._kubelet_connection
            server.component_probe = functools.partial(self._component_probe, server.name)
        # The loads a learner puts on workloads (c.faults.load; kubelab/kubelet/stats.py), shared
        # by every node's runtime; metrics-server, an add-on kind does not install.
        self.load = LoadGenerator(runtimes=list(self.runtimes.values()))
        for node_runtime in self.runtimes.values():
            node_runtime.load = self.load
        if not isinstance(metrics_server, bool):
            raise TypeError(f"metrics_server must be True or False, got {metrics_server!r}")
        self.metrics_server: MetricsServer | None = install_metrics_server(self) \
            if metrics_server else None
        # --- hpacsi --- a custom and external metrics adapter (kubelab/cluster/custom_metrics.py),
        # off as on kind: c.metrics.set_pod_metric(...) feeds an HPA's Pods, Object, External metrics.
        if not isinstance(custom_metrics, bool):
            raise TypeError(f"custom_metrics must be True or False, got {custom_metrics!r}")
        self.metrics: CustomMetricsAdapter | MetricsAdapterOff = install_custom_metrics(self) \
            if custom_metrics else MetricsAdapterOff()
        # Admission webhooks served by pods (kubelab/cluster/webhooks.py): image -> handler.
        self.webhook_servers = WebhookServers(self)
        # Each node's iptables, which kube-proxy writes and packets follow (kubelab.cluster.network).
        self.apiserver.add_token("token-system:kube-proxy", "system:kube-proxy")
        self.iptables = {name: IPTables(name, runtime.node_ip) for name, runtime in self.runtimes.items()}
        # What containers' wget, curl and nslookup reach: DNS, these rules, the pods' servers.
        self.pod_network = PodNetwork(self)
        # kindnet's NetworkPolicy enforcement on every node's packet path (network.py)
        self.network_policies = NetworkPolicies(self)
        for node_runtime in self.runtimes.values():
            node_runtime.network = self.pod_network
        self.route_rand = random.Random(f"{seed}/route")  # c.route's -m statistic draws
        self._wire_anatomy()
        self._start_components(components)

    # ------------------------------------------------------------------ wiring

    @property
    def api(self) -> API:
        """What a client connects to: the API server, or the load balancer before several."""
        return self.loadbalancer if self.loadbalancer is not None else self.apiserver

    def _kubelet_connection(self, node: str) -> ContainerRuntime | None:
        """What the API server reaches at <node>:10250 for pods/log: the node's kubelet, which
        serves the logs its runtime kept; nothing while that kubelet is down or the node is off."""
        runtime = self.runtimes.get(node)
        if runtime is None or not runtime.powered or f"kubelet/{node}" not in self.components:
            return None
        return runtime

    def _component_probe(self, apiserver: str, component: str) -> str:
        """What <apiserver>'s node answers at 127.0.0.1's scheduler or controller-manager port
        (ComponentStatus): "" while the replica on that control-plane node runs, "connection
        refused" while it is down or there is none. One replica sits beside the first server."""
        suffix = apiserver.removeprefix("apiserver")
        name = component + suffix
        if name not in self.components and suffix in ("", "-1"):
            name = component
        return "" if name in self.components else "connection refused"

    def client_for(self, user: str, groups: Iterable[str] = ()) -> Client:
        """A client acting as `user` (the token is made up here, as a kubeconfig would carry it)."""
        token = f"token-{user}"
        self.apiserver.add_token(token, user, list(groups))
        return Client(self.endpoint(user), token, user_agent=user)

    def _register_nodes(self, nodes: int | Iterable[Object], components: Iterable[str] | None
                        ) -> None:
        manifests = ([_node_manifest(f"node-{i + 1}") for i in range(nodes)]
                     if isinstance(nodes, int) else list(nodes))
        check_nodes(manifests)
        if self.anatomy:
            manifests = self._anatomy_nodes(manifests)
        self._node_manifests = manifests
        self.node_names = [str(m["metadata"]["name"]) for m in manifests]
        if "kubelet" in COMPONENTS and (components is None or "kubelet" in components):
            return  # each kubelet registers its own Node
        # Without kubelets, nodes are created as "hollow nodes" by the administrator, as
        # kubemark does: Ready, and nothing ever runs on them. Nobody heartbeats for them, so
        # they are marked for the node lifecycle controller to leave alone.
        for manifest in manifests:
            meta = manifest.get("metadata") or {}
            created = self.client.create({**manifest, "metadata": {**meta, "annotations": {
                **(meta.get("annotations") or {}), "kubelab.dev/hollow-node": "true"}}})
            created["status"] = manifest.get("status", {})
            created["status"].setdefault("conditions", [
                {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "message": "kubelet is posting ready status"}])
            self.client.update_status(created)

    def _component_factories(self) -> dict[str, Callable[[], Component]]:
        """How to start each component: name -> a function that builds and starts it.

        The kubelet and kube-proxy are one component per node: kubelet/node-1, kube-proxy/node-1, ...
        """
        factories: dict[str, Callable[[], Component]] = {}
        for name, descriptor in COMPONENTS.items():
            if name == "kubelet" and self.hollow:
                descriptor = HOLLOW_KUBELET
            constructor = self._replace.get(name) or descriptor.constructor
            constructor = self._anatomy_constructor(name, constructor, descriptor.constructor)  # --- sa ---
            if descriptor.per_node:
                for manifest in self._node_manifests:
                    node = str(manifest["metadata"]["name"])
                    factories[f"{name}/{node}"] = self._factory(
                        f"{name}/{node}", descriptor, constructor, manifest)
            else:
                count = self.replicas.get(name, 1)
                # Upstream elects always (--leader-elect defaults to true); kubelab's harnesses
                # without the anatomy elect only when there is more than one replica.
                elect = (count > 1 or self.anatomy) if self._leader_elect is None \
                    else self._leader_elect
                for replica in replica_names(name, count):
                    self._replica_of[replica] = name
                    factories[replica] = self._factory(replica, descriptor, constructor,
                                                       elect=elect and name in LEASES)
        return factories

    def _factory(self, name: str, descriptor: ComponentDescriptor, constructor: Constructor,
                 node: Object | None = None, *, elect: bool = False) -> Callable[[], Component]:
        user = descriptor.user
        if node is not None:
            node_name = str(node["metadata"]["name"])
            user = user.format(node=node_name)
            if self.anatomy and descriptor.name == "kube-proxy":
                user = KUBE_PROXY_USER  # kubeadm's DaemonSet runs as its ServiceAccount
            # What belongs to the node: a kubelet gets its container runtime, kube-proxy its
            # iptables (kubelab/cluster/components.py build).
            deps = NodeDependencies(self.runtimes[node_name], self.iptables[node_name],
                                    [] if self.hollow else self._static_pods.get(node_name, []))

        def start() -> Component:
            # A kubelet reaches the API server over its node's network link (faults.partition).
            api = self.faults.node_link(node_name) if node is not None else self.endpoint(name)
            connection = self.client_connections.get(descriptor.name)
            client = Client(api, self.apiserver.token_for(user), user_agent=name, trace=self.trace,
                            rate_limiter=connection.rate_limiter(self.clock) if connection else None)
            election = None
            if elect:  # makeLeaderElectionConfig: hostname + "_" + a new uuid per process
                # (the hostname: the control-plane node it runs on, with the anatomy)
                host = self._processes.get(name, (name, ""))[0]
                election = LeaderElectionConfiguration(f"{host}_{new_uid(self.rand)}",
                                                       **self._election)
                self.identities[name] = election.identity
                self._owners[election.identity] = name
            context = ComponentContext(name, client, self.clock, self.rand, self.trace,
                                       copy.deepcopy(node) if node is not None else None,
                                       leader_election=election, sync_cost=self.sync_cost,
                                       on_exit=functools.partial(self._process_died, name))
            component = build(descriptor, constructor, context,
                              deps if node is not None else None)
            kind = self._replica_of.get(name, name.split("/")[0])
            check_component(kind if kind in self._replace else name, component, kind in self._replace)
            component.start()
            return component
        return start

    def _start_components(self, components: Iterable[str] | None) -> None:
        self._factories = self._component_factories()
        wanted = None if components is None else list(components)
        for name in wanted or []:
            if name not in self._factories and name not in COMPONENTS:
                raise ValueError(f"unknown component {name!r}; known: "
                                 f"{', '.join(sorted(COMPONENTS)) or 'none yet'}")
        for name, start in self._factories.items():
            if wanted is None or name in wanted or name.split("/")[0] in wanted or \
                    self._replica_of.get(name) in wanted:
                self.components[name] = start()

    def add_component(self, name: str, cls: Callable[[ComponentContext], Component],
                      user: str = "kubernetes-admin", groups: Iterable[str] = ("system:masters",)
                      ) -> Any:
        """Start a component of your own (a notebook's toy controller, an exercise) beside the
        built-in ones; c.faults.crash(name) and restart(name) then work on it too."""
        if name in self.components or name in self._factories:
            raise ValueError(f"component {name!r} already exists")
        token = f"token-{name}"
        self.apiserver.add_token(token, user, list(groups))

        def start() -> Component:
            client = Client(self.endpoint(name), token, user_agent=name)
            component = cls(ComponentContext(name, client, self.clock, self.rand, self.trace))
            component.start()
            return component

        self._factories[name] = start
        self.components[name] = start()
        return self.components[name]

    def crash_component(self, name: str) -> None:
        server = self._apiserver_named(name)
        if server is not None:
            server.stop()
            self._process_died(name)
            return
        component = self.components.pop(name, None)
        if component is None:
            raise ValueError(f"component {name!r} is not running; running: "
                             f"{', '.join([*(s.name for s in self.apiservers), *sorted(self.components)])}")
        component.stop()
        self._process_died(name)

    def restart_component(self, name: str) -> None:
        server = self._apiserver_named(name)
        if server is not None:
            server.start()
            return
        # `exited` only on a component that elects a leader (the scheduler, the controller
        # manager), and maybe not on one of the learner's: optional, hence getattr.
        if getattr(self.components.get(name), "exited", False):
            del self.components[name]  # it stopped itself (lost its Lease): start it again
        if name in self.components:
            raise ValueError(f"component {name!r} is already running")
        if name not in self._factories:
            raise ValueError(f"unknown component {name!r}")
        self.components[name] = self._factories[name]()

    # ------------------------------------------------------------------ the public surface

    def apply(self, source: str | Path | Object | Iterable[Object]) -> list[str]:
        """`kubectl apply -f`: a path, YAML text, a dict or a list. Returns kubectl's lines."""
        return apply_objects(self.client, load_objects(source))

    def get(self, resource: str, name: str | None = None, *, namespace: str | None = "default",
            label_selector: str = "", field_selector: str = "") -> Any:
        """One object by name, or a list of objects (namespace=None: all namespaces)."""
        if name is not None:
            return self.client.get(resource, name, namespace or "default")
        listing = self.client.list(resource, namespace or "", label_selector=label_selector,
                                   field_selector=field_selector)
        return listing["items"]

    def kubectl(self, command: str, stdin: str = "") -> Output:
        """kubectl's output for a command line, e.g. c.kubectl("get pods -o wide")."""
        return kubectl(self.client, command, now=self.clock.now, stdin=stdin, wait=self.run)

    def scrape(self, component: str = "apiserver") -> str:
        """What a scrape of a component's /metrics gets, in Prometheus' text format:
        "apiserver", "controller-manager" or "scheduler" (kubelab/cluster/prometheus.py).
        (c.metrics is the custom metrics adapter.)"""
        return metrics_of(self.apiservers, self.components, component)

    def events(self, namespace: str | None = None) -> list[Object]:
        """core/v1 Events in the order they happened."""
        items = self.client.list("events", namespace or "")["items"]
        return sorted(items, key=lambda e: (e.get("lastTimestamp") or e.get("eventTime") or "",
                                            int(e["metadata"]["resourceVersion"])))

    def run(self, seconds: float) -> None:
        """Advance virtual time by `seconds`, running everything that falls due."""
        self._resync()
        self.clock.run(until=self.clock.now + seconds)

    def _resync(self) -> None:
        """On a real etcd, time spent between cells is not caught up in a burst: a run after a
        pause starts from the wall clock's now (RealTimeClock.resync), so c.run(5) waits five
        real seconds for etcd's answers. A caller that runs the cluster continuously (the
        pacer of c.serve()) is never that far behind, and keeps its pace."""
        if self.store_is_real and isinstance(self.clock, RealTimeClock) and \
                self.clock.behind() > RESYNC_AFTER:
            self.clock.resync()

    @property
    def store_is_real(self) -> bool:
        """Is a real etcd behind this cluster's API server (store="etcd" or an etcd:// URL)?"""
        return self._real_store

    def close(self) -> None:
        """Release what lives outside the process: close the etcd connection and its watches,
        and stop the etcd processes kubelab started (by their PIDs), removing their data.
        Nothing to do for a simulated store."""
        if not self._real_store:
            return
        self.store.close()  # type: ignore[union-attr]
        if self.etcd is not None:
            self.etcd.close()  # type: ignore[union-attr]
            self.etcd = None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_until(self, predicate: Callable[[], bool], timeout: float = 300.0,
                  max_steps: int = 1_000_000) -> float:
        """Step the clock until predicate() holds; returns the virtual time it took."""
        self._resync()
        start, deadline = self.clock.now, self.clock.now + timeout
        for _ in range(max_steps):
            if predicate():
                return self.clock.now - start
            nxt = self.clock.peek()
            if nxt is None or nxt > deadline:
                self.clock.run(until=deadline)
                if predicate():
                    return self.clock.now - start
                unit = "seconds (a real etcd: wall time)" if self.store_is_real else \
                    "virtual seconds"
                raise TimeoutError(f"condition not met within {timeout} {unit}")
            self.clock.step()
        raise LivelockError(f"run_until: condition not met after {max_steps} steps")

    def exists(self, resource: str, name: str, namespace: str = "default") -> bool:
        try:
            self.client.get(resource, name, namespace)
        except ApiError as err:
            if err.code == 404:
                return False
            raise
        return True

    # ------------------------------------------------------------------ the network (notebook 09)

    def node(self, name: str) -> NodeView:
        """A node as you would see it logged in: c.node("node-1").iptables_save()."""
        if name not in self.iptables:
            raise ValueError(f"no node {name!r}; nodes: {', '.join(self.node_names)}")
        return NodeView(name, self.iptables[name], self)

    def route(self, target: str, *, from_pod: str | None = None, from_node: str | None = None,
              port: int | None = None, namespace: str = "default") -> Route:
        """Walk one request, e.g. c.route("web.default.svc", from_pod="client"): the DNS answer,
        each iptables rule it matched on the client's node, and the pod that answered."""
        return route(self, target, from_pod=from_pod, from_node=from_node, port=port,
                     namespace=namespace)

    def resolve(self, name: str, namespace: str = "default") -> Answer:
        """Cluster DNS from a pod of `namespace`: c.resolve("web") -> web.default.svc.cluster.local."""
        return resolve(self.client, name, namespace, coredns=self.anatomy)

    def traffic(self, target: str, *, rate: float = 10.0, port: int | None = None,
                namespace: str = "default", start: bool = True) -> Traffic:
        """A seeded load generator sending `rate` requests per virtual second to target from
        every node in turn; its results say what users felt (c.traffic("web").summary())."""
        traffic = Traffic(self, target, rate=rate, port=port, namespace=namespace)
        if start:
            traffic.start()
        return traffic

    def add_cloud_controller_manager(self, pool: str = "203.0.113.0/24") -> Any:
        """Run a simulated cloud-controller-manager (system:cloud-controller-manager) whose
        service controller gives LoadBalancer Services an address from `pool`. Its RBAC comes
        with it, as a CCM's manifest brings its own ClusterRole and binding."""
        from kubelab.controllers.cloud import CloudControllerManager, FakeCloud

        name, user = "cloud-controller-manager", "system:cloud-controller-manager"
        if name in self._factories:
            raise ValueError(f"component {name!r} already exists")
        self.apply([{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": user}, "rules": [
                         {"apiGroups": [""], "resources": ["services"],
                          "verbs": ["get", "list", "watch", "update", "patch"]},
                         {"apiGroups": [""], "resources": ["services/status"], "verbs": ["update", "patch"]},
                         {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
                         {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
                          "verbs": ["create", "patch", "update"]}]},
                    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                     "metadata": {"name": user},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                 "name": user},
                     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}])
        self.apiserver.add_token(f"token-{user}", user)
        self.cloud = FakeCloud(random.Random(f"{self.seed}/cloud"), pool)

        def start() -> Component:
            client = Client(DirectConnection(self.apiserver), f"token-{user}", user_agent=name)
            component = CloudControllerManager(ComponentContext(name, client, self.clock, self.rand,
                                                                self.trace), self.cloud)
            component.start()
            return component

        self._factories[name] = start
        self.components[name] = start()
        return self.components[name]

    # ------------------------------------------------------------------ real clients

    def serve(self, port: int = 0, *, speed: float = 1.0) -> str:
        """Serve this cluster's API over HTTPS on 127.0.0.1 (port 0: a free one) and return the
        URL. Needs a running asyncio loop, as a Jupyter kernel has; the clock then follows the
        wall clock while the kernel is idle. From a shell, use `kubelab serve`.

        The HTTPS edge (kubelab.serve) imports the wiring, not the other way round: it registers
        itself as the "kubelab.edges" entry point `https` (pyproject.toml), found here."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("c.serve() needs a running asyncio loop (a Jupyter kernel has one); "
                               "from a shell, run `kubelab serve`") from None
        if self.server is None:
            self.server = _edge("https")(self, port=port, speed=speed)
        return self.server.start()

    def kubeconfig(self, path: str = "~/.kube/kubelab.yaml") -> str:
        """Write the kubeconfig of the served cluster (c.serve() first); returns its path."""
        if self.server is None:
            raise RuntimeError("the cluster is not served yet: call c.serve() first")
        return str(self.server.write_kubeconfig(path))

    def __repr__(self) -> str:
        return (f"<Cluster seed={self.seed} t={self.clock.now:.1f}s nodes={len(self.node_names)} "
                f"components={sorted(self.components)}>")
