"""The seams say what they carry: a client learns only what its round trip tells, each component
gets its own typed dependency, registries hold descriptors, the ledger belongs to its cluster."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

import pytest

import kubelab.cluster.ledger as ledger_module
from kubelab.api.errors import ConnectionFailed
from kubelab.api.request import ConnectionRefused, Request, Response, WatchEvent
from kubelab.client.client import Client
from kubelab.client.component import ComponentContext
from kubelab.client.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock
from kubelab.cluster import COMPONENTS, Cluster
from kubelab.cluster.ledger import ledger_for
from kubelab.cluster.loadbalancer import DirectConnection
from kubelab.controllers import CONTROLLERS, ControllerManager
from kubelab.controllers.cloud import CloudControllerManager, FakeCloud
from kubelab.kubelet import ContainerRuntime, Kubelet
from kubelab.proxy import KubeProxy
from kubelab.proxy.iptables import IPTables

LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "kube-scheduler", "namespace": "kube-system", "resourceVersion": "7"},
         "spec": {"holderIdentity": "a"}}


class OnlyTheProtocol:
    """An API with the protocol's two methods and nothing else; it notes every other attribute
    anyone asks it for (the old client asked for `running` and `api`, and a default hid it)."""

    def __init__(self, answer: Callable[[Request], dict[str, Any]]) -> None:
        object.__setattr__(self, "asked", [])
        object.__setattr__(self, "answer", answer)

    def __getattribute__(self, name: str) -> Any:
        if name not in ("handle", "watch", "asked", "answer", "__class__"):
            object.__getattribute__(self, "asked").append(name)
        return object.__getattribute__(self, name)

    def handle(self, request: Request) -> dict[str, Any]:
        return self.answer(request)

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> Any:
        return self.answer(request)


def test_a_request_touches_nothing_but_the_api_protocol() -> None:
    api = OnlyTheProtocol(lambda r: Response(dict(LEASE), latency=0.25))
    client = Client(api, "t")
    got = client.get("leases", "kube-scheduler", "kube-system")
    assert got == LEASE and type(got) is dict  # the body, as a plain object
    assert client.last_latency == 0.25
    client.watch("leases", lambda e: None, "kube-system")
    assert api.asked == []


def test_a_refused_connection_is_the_connections_error_and_the_client_passes_it_on() -> None:
    def refuse(request: Request) -> dict[str, Any]:
        raise ConnectionRefused(request)

    api = OnlyTheProtocol(refuse)
    client = Client(api, "t")
    with pytest.raises(ConnectionRefused) as err:
        client.get("pods", "web")
    assert str(err.value) == ('Get "https://kube-apiserver:6443/api/v1/namespaces/default/pods/web": '
                              "dial tcp 172.18.0.1:6443: connect: connection refused")
    assert client.requests == 1 and api.asked == []


@pytest.mark.parametrize(("latency", "times_out"), [(6.0, True), (4.0, False)])
def test_the_lease_lock_gives_up_on_the_latency_its_answer_tells(latency: float, times_out: bool) -> None:
    api = OnlyTheProtocol(lambda r: Response(dict(LEASE), latency=latency))
    lock = LeaseLock(Client(api, "t"), "kube-system", "kube-scheduler", "a", timeout=5.0)
    if times_out:
        with pytest.raises(ConnectionFailed, match="context deadline exceeded"):
            lock.get()
        assert lock.elapsed == 5.0
    else:
        record, _ = lock.get()
        assert record.holder_identity == "a" and lock.elapsed == latency
        lock.update(LeaderElectionRecord("a"))
        assert lock.elapsed == 2 * latency
    assert api.asked == []


def test_the_api_servers_answer_says_how_long_it_took_and_a_direct_connection_refuses() -> None:
    c = Cluster(nodes=0, components=[])
    c.apiserver.response_delay = 1.5
    answer = c.apiserver.handle(Request("list", "pods", token="admin-token"))
    assert isinstance(answer, Response) and answer.latency == 1.5
    conn = DirectConnection(c.apiserver)
    c.apiserver.stop()
    before = len(c.apiserver.audit)
    with pytest.raises(ConnectionRefused):
        conn.handle(Request("list", "pods", token="admin-token"))
    with pytest.raises(ConnectionRefused):
        conn.watch(Request("watch", "pods", token="admin-token"), lambda e: None)
    assert len(c.apiserver.audit) == before  # nothing reached the server


def test_the_component_context_holds_only_what_every_component_has() -> None:
    fields = [f.name for f in dataclasses.fields(ComponentContext)]
    # sync_cost (issue 29): the virtual seconds a controller sync takes, read by every
    # component's workqueue loop (kubelab/client/controller_loop.py). on_exit (issue 30): what
    # a component's exit (a lost Lease, upstream's os.Exit) does; with the anatomy its static
    # pod's container dies and the kubelet's restart runs it again.
    assert fields == ["name", "client", "clock", "rand", "trace", "node", "leader_election",
                      "sync_cost", "on_exit"]
    hints = {cls: typing.get_type_hints(cls.__init__) for cls in (Kubelet, KubeProxy, CloudControllerManager)}
    assert hints[Kubelet]["runtime"] == ContainerRuntime | None
    assert hints[KubeProxy]["iptables"] is IPTables
    assert hints[CloudControllerManager]["cloud"] is FakeCloud


def test_each_node_component_gets_its_nodes_own_dependency_and_replace_keeps_working() -> None:
    built: list[str] = []

    class MyKubelet(Kubelet):
        # (the control-plane node's kubelet is also given kubeadm's static pod manifests)
        def __init__(self, ctx: ComponentContext, runtime: ContainerRuntime, **kw: Any) -> None:
            built.append(ctx.name)
            super().__init__(ctx, runtime, **kw)

    c = Cluster(nodes=2, replace={"kubelet": MyKubelet})
    c.run(5)
    assert built == ["kubelet/control-plane", "kubelet/node-1", "kubelet/node-2"]
    for node in c.node_names:
        assert c.components[f"kubelet/{node}"].runtime is c.runtimes[node]
        assert c.components[f"kube-proxy/{node}"].iptables is c.iptables[node]
    c.faults.crash("kubelet/node-1")
    c.faults.restart("kubelet/node-1")
    assert c.components["kubelet/node-1"].runtime is c.runtimes["node-1"]  # the node's, again
    ccm = c.add_cloud_controller_manager()
    assert ccm.cloud is c.cloud


def test_the_registries_hold_descriptors_not_strings() -> None:
    assert {d.name for d in COMPONENTS.values()} == set(COMPONENTS)
    assert all(callable(d.constructor) and not isinstance(d.constructor, str) for d in COMPONENTS.values())
    assert [n for n, d in COMPONENTS.items() if d.per_node] == ["kubelet", "kube-proxy"]
    assert all(callable(d.init_func) and d.name == n for n, d in CONTROLLERS.items())
    c = Cluster(nodes=0, components=[])
    ctx = ComponentContext("controller-manager", c.client, c.clock, c.rand, c.trace)
    manager = ControllerManager(ctx, ["replicaset", "endpointslice-controller"])  # an alias, a name
    assert list(manager.controllers) == ["replicaset-controller", "endpointslice-controller"]
    with pytest.raises(ValueError, match="unknown controller"):
        ControllerManager(ctx, ["replicasets"])


def test_the_ledger_belongs_to_its_cluster() -> None:
    first, second = Cluster(nodes=0, components=[]), Cluster(nodes=0, components=[])
    assert ledger_for(first) is first.ledger and ledger_for(second) is second.ledger
    assert first.ledger is not second.ledger
    first.faults.ledger_down()
    assert not first.ledger.available and second.ledger.available
    assert not hasattr(ledger_module, "_LEDGERS")
