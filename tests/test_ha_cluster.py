"""Cluster(replicas=...): API servers behind a load balancer, scheduler and controller-manager
replicas behind leader election, and the faults that address one replica."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError, ConnectionFailed
from kubelab.client.leaderelection import JITTER_FACTOR
from kubelab.cluster.loadbalancer import Connection, LoadBalancer

HA = {"apiserver": 3, "scheduler": 2, "controller-manager": 2}
LATEST = 15 + 2 * 2 * (1 + JITTER_FACTOR)  # LeaseDuration + 2 x RetryPeriod x (1 + JitterFactor)


def deployment(name: str, replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


def running(c: Cluster, app: str) -> int:
    pods = c.get("pods", label_selector=f"app={app}")
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


def audit(c: Cluster) -> list[Any]:
    return sorted((r for s in c.apiservers for r in s.audit), key=lambda r: r.time)


def test_replicas_are_named_and_hold_their_leases() -> None:
    c = Cluster(replicas=HA, seed=4)
    c.run(3)
    assert [s.name for s in c.apiservers] == ["apiserver-1", "apiserver-2", "apiserver-3"]
    assert c.apiserver is c.apiservers[0] and isinstance(c.api, LoadBalancer)
    assert sorted(n for n in c.components if not n.startswith(("kubelet/", "kube-proxy/"))) == [
        "controller-manager-1", "controller-manager-2", "scheduler-1", "scheduler-2"]
    out = c.kubectl("get leases -n kube-system").splitlines()
    assert out[0].split() == ["NAME", "HOLDER", "AGE"]
    holders = {line.split()[0]: line.split()[1] for line in out[1:]}
    # beside the elections, each API server's identity Lease (apiserver-<hash>), as on kind
    assert {n for n in holders if not n.startswith("apiserver-")} == {
        "kube-controller-manager", "kube-scheduler"}
    assert sum(n.startswith("apiserver-") for n in holders) == 3
    holders = {n: h for n, h in holders.items() if not n.startswith("apiserver-")}
    for component, lease in (("scheduler", "kube-scheduler"),
                             ("controller-manager", "kube-controller-manager")):
        leader = c.leader(component)
        assert leader is not None and holders[lease] == c.identities[leader]
        # hostname_uuid: the control-plane node the replica runs on (replica i on node i)
        node = "control-plane" + leader.rsplit("-", 1)[1].replace("1", "")
        assert holders[lease].startswith(f"{node}_") and len(holders[lease]) == len(node) + 37
    table = c.client.list("leases", "kube-system", as_table=True)
    assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Holder", "Age"]
    assert {row["cells"][1] for row in table["rows"]
            if not row["cells"][0].startswith("apiserver-")} == set(holders.values())
    events = c.kubectl("get events -n kube-system")
    assert f"{c.identities[c.leader('scheduler') or '']} became leader" in events


def test_one_replica_keeps_todays_cluster_and_trace() -> None:
    traces = []
    for replicas in (None, {"apiserver": 1, "scheduler": 1, "controller-manager": 1}):
        # the bare cluster: with the anatomy a single replica elects too (upstream always does)
        c = Cluster(seed=7, replicas=replicas, anatomy=False)
        c.apply(deployment("web", 3))
        c.run(30)
        assert running(c, "web") == 3 and c.loadbalancer is None and c.api is c.apiserver
        assert "scheduler" in c.components and "controller-manager" in c.components
        assert c.get("leases", namespace="kube-system") == []
        assert c.leader("scheduler") is None
        traces.append(c.trace.text())
    assert traces[0] == traces[1]
    assert "started-leading" not in traces[0]


def test_leader_elect_with_one_replica_takes_the_lease_under_todays_name() -> None:
    c = Cluster(seed=2, leader_elect=True, anatomy=False)
    c.apply(deployment("web", 2))
    c.run(20)
    assert running(c, "web") == 2
    assert c.leader("scheduler") == "scheduler" and c.leader("controller-manager") == "controller-manager"
    assert c.get("leases", "kube-scheduler", namespace="kube-system")["spec"]["holderIdentity"] \
        .startswith("scheduler_")


def test_with_the_anatomy_one_replica_elects_as_the_control_plane_node() -> None:
    """Upstream's --leader-elect is on by default: kind's single scheduler holds its Lease under
    the control-plane node's hostname, as makeLeaderElectionConfig names it."""
    c = Cluster(seed=2)
    c.apply(deployment("web", 2))
    c.run(20)
    assert running(c, "web") == 2
    assert c.leader("scheduler") == "scheduler" and c.leader("controller-manager") == "controller-manager"
    for lease in ("kube-scheduler", "kube-controller-manager"):
        holder = c.get("leases", lease, namespace="kube-system")["spec"]["holderIdentity"]
        assert holder.startswith("control-plane_") and len(holder) == len("control-plane_") + 36


@pytest.mark.parametrize(("replicas", "message"), [
    ({"kubelet": 2}, "cannot run replicas of 'kubelet'; replicable: apiserver, scheduler, "
                     "controller-manager"),
    ({"scheduler": 0}, "replicas of 'scheduler' must be an integer >= 1, got 0"),
    ({"apiserver": "3"}, "replicas of 'apiserver' must be an integer >= 1, got '3'"),
    ({"apiserver": True}, "replicas of 'apiserver' must be an integer >= 1, got True"),
])
def test_replicas_that_cannot_run_are_refused(replicas: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        Cluster(nodes=0, replicas=replicas)
    assert str(err.value) == message


def test_clients_move_to_a_live_api_server_and_watches_resume_without_a_relist() -> None:
    c = Cluster(replicas={"apiserver": 3, "scheduler": 2}, seed=5)
    c.apply(deployment("web", 2))
    c.run(20)
    leader = c.leader("scheduler")
    assert leader is not None
    connection = c.components[leader].ctx.client.api
    assert isinstance(connection, Connection) and connection.backend is not None
    lists = sum(1 for r in audit(c) if r.user_agent == leader and r.verb == "list")
    watches = sum(1 for r in audit(c) if r.user_agent == leader and r.verb == "watch")
    dead = connection.backend.name
    assert c.loadbalancer is not None and leader in c.loadbalancer.clients_of(dead)
    # kubectl, two schedulers, the controller manager and six kubelets (three control-plane
    # nodes, three workers), round-robin
    assert sorted(len(c.loadbalancer.clients_of(s.name)) for s in c.apiservers) == [3, 3, 4]
    c.faults.crash(dead)
    c.client.scale("deployments", "web", 5)
    c.run(20)
    assert running(c, "web") == 5
    assert connection.backend.name != dead and connection.reconnects == 1
    assert c.loadbalancer.clients_of(dead) == []
    after = [r for r in audit(c) if r.user_agent == leader and r.time > 20]
    assert not [r for r in after if r.verb == "list"], "the reflectors relisted"
    assert sum(1 for r in after if r.verb == "watch") == watches  # every watch resumed once
    assert sum(1 for r in audit(c) if r.user_agent == leader and r.verb == "list") == lists
    assert f"loadbalancer           reconnect      {leader}" in c.trace.text()


def test_with_every_api_server_down_connections_are_refused_until_one_returns() -> None:
    c = Cluster(nodes=1, replicas={"apiserver": 2}, seed=1)
    c.run(2)
    with pytest.raises(ValueError, match="the apiserver runs 2 replicas: apiserver-1, apiserver-2; name one"):
        c.faults.crash("apiserver")
    c.faults.crash("apiserver-1")
    assert c.get("nodes") and c.apiservers[0].running is False
    c.faults.crash("apiserver-2")
    with pytest.raises(ConnectionFailed) as err:
        c.get("nodes")
    assert "connection refused" in str(err.value)
    c.faults.restart("apiserver-1")
    assert [n["metadata"]["name"] for n in c.get("nodes")] == ["control-plane", "control-plane2",
                                                               "node-1"]


def test_crash_leader_hands_over_within_the_lease_and_the_cluster_keeps_working() -> None:
    c = Cluster(replicas=HA, seed=3)
    c.apply(deployment("web", 2))
    c.run(20)
    old = {comp: c.leader(comp) for comp in ("scheduler", "controller-manager")}
    assert c.faults.crash_leader("scheduler") == old["scheduler"]
    assert c.faults.crash_leader("controller-manager") == old["controller-manager"]
    with pytest.raises(ValueError, match=r"names scheduler-[12], which is not running"):
        c.faults.crash_leader("scheduler")  # its lease has not expired yet
    took = c.run_until(lambda: c.leader("scheduler") in c.components
                       and c.leader("controller-manager") in c.components, timeout=60)
    assert 15 - 2 <= took <= LATEST
    c.client.scale("deployments", "web", 4)
    c.run(20)
    assert running(c, "web") == 4
    assert c.get("leases", "kube-scheduler", namespace="kube-system")["spec"]["leaseTransitions"] == 1
    for comp in ("scheduler", "controller-manager"):  # the old leader returns as a follower
        replica = old[comp] or ""
        identity = c.identities[replica]
        c.faults.restart(replica)
        assert c.identities[replica] != identity and c.leader(comp) != replica
    assert "crash_leader" in c.trace.text()


def test_followers_wait_as_upstreams_do() -> None:
    """kube-scheduler followers keep their informers synced (server.go starts them before
    electing); kube-controller-manager followers start nothing until they lead."""
    c = Cluster(replicas={"scheduler": 2, "controller-manager": 2}, seed=8)
    c.apply(deployment("web", 2))
    c.run(20)
    followers = {comp: next(r for r in (f"{comp}-1", f"{comp}-2") if r != c.leader(comp))
                 for comp in ("scheduler", "controller-manager")}
    verbs = {comp: {r.verb for r in audit(c) if r.user_agent == f} for comp, f in followers.items()}
    assert {"list", "watch"} <= verbs["scheduler"] and "create" not in verbs["scheduler"]
    assert "list" not in verbs["controller-manager"]
    bindings = [r for r in audit(c) if r.subresource == "binding"]
    assert bindings and {r.user_agent for r in bindings} == {c.leader("scheduler")}


def test_a_replica_that_lost_its_lease_stops_and_can_be_restarted() -> None:
    c = Cluster(replicas={"scheduler": 2}, seed=6)
    c.run(5)
    leader = c.leader("scheduler") or ""
    c.faults.slow_apiserver(6.0)  # answers later than the lock's 5 s timeout
    c.run(15)
    assert c.components[leader].exited and not c.components[leader].running
    assert "leaderelection-lost" in c.trace.text()
    c.faults.slow_apiserver(0)
    c.run(LATEST)
    assert c.leader("scheduler") not in ("", None, leader)
    c.faults.restart(leader)
    assert not c.components[leader].exited
    with pytest.raises(ValueError, match="no API server \"apiserver-9\""):
        c.faults.slow_apiserver(1, "apiserver-9")


def test_rbac_lets_each_component_update_only_its_own_lease() -> None:
    c = Cluster(replicas={"scheduler": 2, "controller-manager": 2}, seed=1)
    c.run(3)
    scheduler = c.components["scheduler-1"].ctx.client
    lease = scheduler.get("leases", "kube-scheduler", "kube-system")
    scheduler.update(lease)
    other = c.client.get("leases", "kube-controller-manager", "kube-system")
    with pytest.raises(ApiError) as err:
        scheduler.update(other)
    assert err.value.code == 403
    assert err.value.message == ('leases.coordination.k8s.io "kube-controller-manager" is '
                                 'forbidden: User "system:kube-scheduler" cannot update resource '
                                 '"leases" in API group "coordination.k8s.io" in the namespace '
                                 '"kube-system"')


def test_the_failure_panel_toggles_one_replica_at_a_time() -> None:
    from kubelab.widgets.failure_panel import FailurePanel

    c = Cluster(nodes=1, replicas={"apiserver": 2, "scheduler": 2}, seed=1)
    panel = FailurePanel(c)
    names = panel.component_names()
    assert names[:2] == ["apiserver-1", "apiserver-2"]
    assert names[2:5] == ["controller-manager", "scheduler-1", "scheduler-2"]
    assert panel.toggle("apiserver-2") == "crashed apiserver-2" and not panel.running("apiserver-2")
    assert panel.running("apiserver-1") and panel.toggle("scheduler-1") == "crashed scheduler-1"
    assert panel.toggle("apiserver-2").startswith("restarted apiserver-2")


def test_the_same_seed_gives_the_same_trace_with_replicas() -> None:
    traces = []
    for _ in range(2):
        c = Cluster(replicas=HA, seed=11)
        c.apply(deployment("web", 2))
        c.faults.at(12, "crash_leader", "scheduler")
        c.faults.at(14, "crash", "apiserver-2")
        c.faults.at(20, "slow_apiserver", 6, "apiserver-1")
        c.run(60)
        traces.append(c.trace.text())
    assert traces[0] == traces[1] and "crash_leader" in traces[0]


def test_without_leader_election_two_schedulers_race_for_every_pod() -> None:
    c = Cluster(replicas={"scheduler": 2}, leader_elect=False, seed=1)
    c.apply(deployment("web", 6))
    c.run(20)
    assert running(c, "web") == 6 and [  # no election Lease; the API server's identity Lease
        lease for lease in c.get("leases", namespace="kube-system")
        if not lease["metadata"]["name"].startswith("apiserver-")] == []
    # (the web pods': the schedulers bind the anatomy's kube-system pods too)
    bindings = [r for r in audit(c) if r.subresource == "binding" and r.namespace == "default"]
    won = sorted(r.user_agent for r in bindings if r.code == 201)
    lost = [r for r in bindings if r.code == 409]
    assert len(won) == 6 and len(lost) == 6  # each pod bound once; the other scheduler's 409
    assert all("is already assigned to node" in r.message for r in lost)


def test_a_too_short_renew_deadline_under_a_slow_api_server_costs_the_leader_its_lease() -> None:
    lost = {}
    for setting in (True, {"renew_deadline": 4, "retry_period": 1}):
        c = Cluster(replicas={"scheduler": 2}, leader_elect=setting, seed=2)
        c.run(5)
        leader = c.leader("scheduler") or ""
        c.faults.slow_apiserver(3.0)  # within the default 5 s timeout, past a 2 s one
        c.run(20)
        lost[str(setting)] = c.components[leader].exited
    assert lost == {"True": False, "{'renew_deadline': 4, 'retry_period': 1}": True}
    with pytest.raises(ValueError, match=r"^renewDeadline must be greater than retryPeriod"):
        Cluster(nodes=0, replicas={"scheduler": 2}, leader_elect={"retry_period": 9})
    with pytest.raises(ValueError, match=r"^unknown leader election setting 'lease'; known: "):
        Cluster(nodes=0, leader_elect={"lease": 9})


WEBSITES = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: websites.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: websites, singular: website, kind: Website}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 0}
"""


def test_a_crd_created_through_one_api_server_is_served_by_all() -> None:
    from kubelab.client.client import Client
    from kubelab.cluster import ADMIN_TOKEN

    c = Cluster(nodes=1, seed=0, replicas={"apiserver": 3})
    c.apply(WEBSITES)  # through kubectl's connection, to one of them
    c.run(1)
    site = {"apiVersion": "example.com/v1", "kind": "Website", "metadata": {"name": "blog"},
            "spec": {"replicas": 1}}
    for server in c.apiservers:  # each one validates with the CRD's schema, and serves it
        client = Client(server, ADMIN_TOKEN)
        with pytest.raises(ApiError) as err:
            client.create({**site, "spec": {"replicas": -1}})
        assert err.value.code == 422, server.name
    Client(c.apiservers[2], ADMIN_TOKEN).create(site)
    assert Client(c.apiservers[1], ADMIN_TOKEN).get("websites", "blog")["spec"] == {"replicas": 1}
    c.kubectl("delete crd websites.example.com")
    c.run(5)
    for server in c.apiservers:
        with pytest.raises(ApiError) as err:
            Client(server, ADMIN_TOKEN).list("websites")
        assert err.value.code == 404, server.name


def test_api_server_replicas_share_the_service_ip_allocations() -> None:
    from kubelab.client.client import Client
    from kubelab.cluster import ADMIN_TOKEN

    c = Cluster(nodes=1, seed=0, replicas={"apiserver": 2})
    first, second = (Client(server, ADMIN_TOKEN) for server in c.apiservers)

    def service(name: str, ip: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                "spec": {"clusterIP": ip, "ports": [{"port": 80}], "selector": {"app": name}}}

    first.create(service("a", "10.96.0.50"))
    with pytest.raises(ApiError) as err:
        second.create(service("b", "10.96.0.50"))
    assert err.value.code == 422 and "provided IP is already allocated" in err.value.message
