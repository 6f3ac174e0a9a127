"""Cluster(etcd_members=3): the API server over a simulated Raft etcd, with and without a quorum."""

from __future__ import annotations

import pytest

import kubelab
from kubelab.api.errors import ApiError

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": "v"}}
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}


def running_pods(c: kubelab.Cluster) -> int:
    return len([p for p in c.get("pods") if p.get("status", {}).get("phase") == "Running"])


def running_containers(c: kubelab.Cluster) -> int:
    """The default namespace's running containers (not kind's static pods and add-ons)."""
    return sum(1 for rt in c.runtimes.values() for cont in rt.running()
               if {s.pod_uid: s.namespace for s in rt.sandboxes.values()}[cont.pod_uid] == "default")


def test_the_api_server_writes_through_a_quorum_and_every_member_applies() -> None:
    c = kubelab.Cluster(etcd_members=3, components=[])
    assert c.etcd is not None and c.etcd.leader is not None
    c.client.create(CM)
    c.run(1)
    revisions = {s.revision for s in c.etcd.status()}
    assert revisions == {c.store.revision}
    assert c.apiserver.audit[-1].latency > 0   # the replication round trip


def test_one_member_of_three_down_writes_go_on() -> None:
    c = kubelab.Cluster(etcd_members=3, components=[])
    assert c.etcd is not None
    leader = c.faults.crash_etcd_leader()
    with pytest.raises(ApiError):
        c.client.create(CM)  # the followers still follow the dead leader: the proposal is lost
    c.run(3)                 # a new leader within the election timeout (1-2 s)
    assert c.etcd.leader not in (None, leader)
    c.client.create({**CM, "metadata": {"name": "y"}})
    newest = max(c.etcd.checker.leaders)
    assert newest >= 2 and f"{c.etcd.leader} became leader at term {newest}" in [
        text for _, text in c.etcd.timeline]


def test_without_a_quorum_writes_and_reads_fail_as_kube_apiserver_reports_it() -> None:
    c = kubelab.Cluster(etcd_members=3, components=[])
    assert c.etcd is not None
    crashed = c.faults.lose_etcd_quorum()
    assert len(crashed) == 2
    rev = c.store.revision
    with pytest.raises(ApiError) as err:
        c.client.create(CM)
    # responsewriters/status.go ErrorToAPIStatus: not a Status -> 500, reason Unknown, the text
    assert (err.value.code, err.value.reason, err.value.message) == (
        500, "", "etcdserver: request timed out")
    assert c.apiserver.audit[-1].code == 500 and c.apiserver.audit[-1].latency == 7.0
    out = c.kubectl("get configmaps")
    assert out == "Error from server: etcdserver: request timed out" and out.exit_code == 1
    assert c.store.revision == rev
    for name in crashed:
        c.faults.restart_etcd_member(name)
    c.run(5)
    c.client.create({**CM, "metadata": {"name": "after"}})
    assert c.exists("configmaps", "after")


def test_watches_stop_advancing_without_quorum_and_pods_keep_running() -> None:
    c = kubelab.Cluster(etcd_members=3, nodes=2)
    c.apply(DEPLOY)
    c.run(30)
    assert running_pods(c) == 2
    events: list[object] = []
    closed: list[bool] = []
    c.client.watch("configmaps", events.append, "default", on_close=lambda: closed.append(True))
    c.faults.partition_etcd("etcd-2", "etcd-3")  # the API server's side keeps one of three
    c.run(60)
    with pytest.raises(ApiError, match="request timed out"):
        c.client.create(CM)
    # the kubelets keep running what they run; the data plane does not need etcd
    # (the watch's first event is the ADDED of kind's kube-root-ca.crt, from before the partition)
    assert running_containers(c) == 2 and events[1:] == [] and closed == []
    c.faults.heal_etcd()
    c.run(30)
    c.client.patch("deployments", "web", {"spec": {"replicas": 3}}, namespace="default")
    c.run(30)
    assert running_pods(c) == 3
    assert c.etcd is not None and c.etcd.violations() == []


def test_a_single_store_cluster_has_no_etcd_and_etcd_faults_say_so() -> None:
    c = kubelab.Cluster(components=[])
    assert c.etcd is None
    with pytest.raises(ValueError, match="etcd_members=3"):
        c.faults.crash_etcd_member("etcd-1")
    assert "crash_etcd_member" in c.faults.names()


def test_unknown_member_and_double_crash_are_refused() -> None:
    c = kubelab.Cluster(etcd_members=3, components=[])
    with pytest.raises(ValueError, match="no etcd member 'etcd-9'"):
        c.faults.crash_etcd_member("etcd-9")
    c.faults.crash_etcd_member("etcd-3")
    with pytest.raises(ValueError, match="already down"):
        c.faults.crash_etcd_member("etcd-3")


def story(seed: int) -> str:
    c = kubelab.Cluster(etcd_members=5, nodes=1, seed=seed)
    c.apply(DEPLOY)
    c.faults.at(5, "crash_etcd_leader")
    c.faults.at(12, "partition_etcd", "etcd-4", "etcd-5")
    c.faults.at(20, "heal_etcd")
    c.run(40)
    return c.trace.text()


def test_the_same_seed_gives_the_same_trace_with_elections_in_it() -> None:
    first = story(3)
    assert first == story(3)
    lines = first.splitlines()
    assert sum(line.split()[1:3] == ["etcd", "became-leader"] for line in lines) >= 2
    assert any(line.split()[1:3] == ["faults", "crash_etcd_member"] for line in lines)


def test_a_deployment_converges_and_no_acknowledged_write_is_lost_after_seeded_etcd_faults() -> None:
    import random

    for seed in range(10):
        rng = random.Random(seed)
        c = kubelab.Cluster(etcd_members=5 if seed % 2 else 3, nodes=2, seed=seed)
        assert c.etcd is not None
        names = list(c.etcd.members)
        c.apply(DEPLOY)
        acked = []
        for step in range(8):
            roll = rng.random()
            up = [n for n in names if c.etcd.members[n].up]
            if roll < 0.3 and up:
                c.faults.crash_etcd_member(rng.choice(up))
            elif roll < 0.5 and len(up) < len(names):
                c.faults.restart_etcd_member(rng.choice([n for n in names if n not in up]))
            elif roll < 0.7:
                c.faults.partition_etcd(*rng.sample(names, rng.randint(1, len(names) - 1)))
            else:
                c.faults.heal_etcd()
            try:
                c.client.create({**CM, "metadata": {"name": f"cm-{step}"}})
                acked.append(f"cm-{step}")
                c.client.patch("deployments", "web", {"spec": {"replicas": rng.randint(1, 4)}})
            except ApiError as err:
                assert err.code == 500 and err.message == "etcdserver: request timed out"
            c.run(rng.choice([1.0, 5.0, 20.0]))
        c.faults.heal_etcd()
        for n in names:
            if not c.etcd.members[n].up:
                c.faults.restart_etcd_member(n)
        c.run(90)
        assert c.etcd.violations() == [], seed
        assert [n for n in acked if not c.exists("configmaps", n)] == [], seed
        want = c.get("deployments", "web")["spec"]["replicas"]
        assert running_pods(c) == want, seed
        assert running_containers(c) == want, seed


def test_a_watch_cache_restarted_without_a_quorum_lists_again_once_it_is_back() -> None:
    # The soak found it: the store cancelled a watch cache's watch (compacted past it) while
    # etcd had no quorum, and the new cache's first list raised "request timed out" out of c.run.
    c = kubelab.Cluster(nodes=1, etcd_members=3)
    c.apply(DEPLOY)
    c.run(20)
    crashed = c.faults.lose_etcd_quorum()
    c.apiserver.restart_cacher("pods")  # what a cancelled store watch makes the cache do
    c.run(5)                            # its retries find no quorum either: nothing escapes
    for member in crashed:
        c.faults.restart_etcd_member(member)
    c.run(5)
    c.client.scale("deployments", "web", 3)
    c.run(20)
    assert running_pods(c) == 3         # the kubelet's pod watch is served by the new cache
