"""kubelab's API server on a real etcd: the same cluster, the objects in etcd, and etcd's
failures reaching clients as a real API server's errors (kubelab/etcd/, notebook 07b).

One single-member etcd serves the module's Cluster; the quorum test starts its own three.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from etcd_helpers import require_etcd

import kubelab
from kubelab.api.errors import ApiError
from kubelab.etcd import EtcdUnavailableError
from kubelab.sim import RealTimeClock

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
"""


def running(c: kubelab.Cluster, app: str = "web") -> int:
    return sum(1 for p in c.get("pods", label_selector=f"app={app}")
               if p.get("status", {}).get("phase") == "Running")


@pytest.fixture(scope="module")
def cluster() -> Iterator[kubelab.Cluster]:
    require_etcd()
    c = kubelab.Cluster(store="etcd", nodes=2)
    try:
        yield c
    finally:
        c.close()


def test_a_deployment_runs_and_its_objects_live_in_etcd_under_registry(
        cluster: kubelab.Cluster) -> None:
    c = cluster
    assert c.store_is_real and isinstance(c.clock, RealTimeClock)
    assert c.apply(DEPLOYMENT) == ["deployment.apps/web created"]
    c.run_until(lambda: running(c) == 2, timeout=30)
    assert c.etcd is not None
    keys = c.etcd.etcdctl("get /registry/ --prefix --keys-only", show=False).split()
    assert "/registry/deployments/default/web" in keys
    assert sum(k.startswith("/registry/pods/default/web-") for k in keys) == 2
    # The resourceVersion kubectl shows is the key's mod_revision in etcd.
    rv = str(c.kubectl("get deployment web -o jsonpath={.metadata.resourceVersion}"))
    raw = json.loads(c.etcd.etcdctl("get /registry/deployments/default/web -w json", show=False))
    assert rv == str(raw["kvs"][0]["mod_revision"])
    assert json.loads(c.etcd.etcdctl("get /registry/deployments/default/web --print-value-only",
                                     show=False))["spec"]["replicas"] == 2


def test_a_compacted_resource_version_is_410_gone_and_watches_relist(
        cluster: kubelab.Cluster) -> None:
    c = cluster
    page = c.client.list("pods", "default", limit=1)  # a paged list reads at one revision
    c.kubectl("scale deployment web --replicas=3")
    c.run_until(lambda: running(c) == 3, timeout=30)
    c.faults.compact()
    with pytest.raises(ApiError) as err:
        c.client.list("pods", "default", limit=1, continue_token=page["metadata"]["continue"])
    assert (err.value.code, err.value.reason) == (410, "Expired")
    assert "too old" in err.value.message
    c.kubectl("scale deployment web --replicas=2")  # informers keep working after compaction
    c.run_until(lambda: len(c.get("pods", label_selector="app=web")) == 2, timeout=30)


def test_when_etcd_dies_writes_fail_naming_it_and_the_cluster_recovers_when_it_returns(
        cluster: kubelab.Cluster) -> None:
    c = cluster
    assert c.etcd is not None
    (member,) = c.etcd.members
    c.etcd.kill(member.name)
    out = c.kubectl("scale deployment web --replicas=3")
    assert out.exit_code == 1
    # scale reads the Deployment first, as the real kubectl does, and names what it could not read
    assert out.startswith("error: no objects passed to scale rpc error: code = Unavailable")
    assert member.endpoint.removeprefix("http://") in out and "connection refused" in out
    assert c.kubectl("get deployment web").startswith("Error from server: rpc error")
    c.etcd.restart(member.name)
    c.etcd.wait_healthy()
    assert c.kubectl("scale deployment web --replicas=3") == "deployment.apps/web scaled"
    # The watch caches' streams reconnect and resume, so the controllers see the change.
    c.run_until(lambda: running(c) == 3, timeout=30)


def test_an_etcd_that_cannot_be_reached_fails_at_once_naming_the_endpoint() -> None:
    from kubelab.etcd.process import _free_ports

    (port,) = _free_ports(1)
    started = time.monotonic()
    with pytest.raises(EtcdUnavailableError) as err:
        kubelab.Cluster(store=f"etcd://127.0.0.1:{port}")
    assert time.monotonic() - started < 5
    assert f"127.0.0.1:{port}" in str(err.value) and "connection refused" in str(err.value)
    assert 'Cluster(store="etcd")' in str(err.value) and "etcd --data-dir" in str(err.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"store": "mysql"}, 'store must be "embedded", "etcd" or "etcd://host:port"'),
    ({"store": "etcd://localhost"}, "must be host:port"),
    ({"store": "etcd", "speed": 10.0}, "speed must be 1.0"),
    ({"store": "etcd://127.0.0.1:1", "etcd_members": 3}, "an etcd:// URL names running ones"),
])
def test_bad_store_arguments_are_refused_before_anything_starts(
        kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kubelab.Cluster(**kwargs)  # type: ignore[arg-type]


def test_three_members_survive_one_loss_refuse_writes_without_quorum_and_catch_up() -> None:
    require_etcd()
    c = kubelab.Cluster(store="etcd", etcd_members=3, nodes=1)
    try:
        etcd = c.etcd
        assert etcd is not None and len(etcd.members) == 3
        c.apply(DEPLOYMENT)
        c.run_until(lambda: running(c) == 2, timeout=30)
        first = etcd.leader()
        assert first is not None
        etcd.kill(first)
        deadline = time.monotonic() + 10
        while etcd.leader() in (None, first) and time.monotonic() < deadline:
            time.sleep(0.05)
        second = etcd.leader()
        assert second not in (None, first)
        assert c.kubectl("scale deployment web --replicas=3") == "deployment.apps/web scaled"
        c.run_until(lambda: running(c) == 3, timeout=30)
        etcd.kill(second)  # one member of three left: no quorum
        out = c.kubectl("scale deployment web --replicas=4")
        assert (out, out.exit_code) == (
            "error: no objects passed to scale etcdserver: request timed out", 1)
        runtime = c.runtimes["node-1"]
        web = {s.pod_uid for s in runtime.sandboxes.values() if s.labels.get("app") == "web"}
        # the pods' containers keep running on the node (beside kind's kindnet, kube-proxy, coredns)
        assert len([x for x in runtime.running() if x.pod_uid in web]) == 3
        etcd.restart(first)
        etcd.wait_healthy(names=[first])
        assert c.kubectl("scale deployment web --replicas=4") == "deployment.apps/web scaled"
        c.run_until(lambda: running(c) == 4, timeout=30)
        etcd.restart(second)
        etcd.wait_healthy(names=[second])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            indexes = {s["raft_index"] for s in etcd.status()}
            if len(etcd.status()) == 3 and len(indexes) == 1:
                break
            time.sleep(0.1)
        assert len(etcd.status()) == 3 and len({s["raft_index"] for s in etcd.status()}) == 1
    finally:
        c.close()
    assert all(not m.running for m in etcd.members)


def test_a_slow_disk_cannot_be_faked_on_a_real_etcd_and_says_so(cluster: kubelab.Cluster) -> None:
    with pytest.raises(ValueError, match="a real etcd's disk cannot be slowed from kubelab"):
        cluster.faults.slow_store(0.5)
    assert cluster.store.latency == 0.0


def test_a_stalled_etcd_times_out_as_504_and_the_next_request_works_once_it_resumes() -> None:
    """A member that takes requests and answers nothing (SIGSTOP: a disk that stopped). The
    client's deadline ends the request with kube-apiserver's 504 Timeout, nothing is re-sent."""
    require_etcd()
    from kubelab.etcd import EtcdBackend, EtcdCluster, EtcdTimeoutError
    from kubelab.store import StoreError

    with EtcdCluster(1) as etcd:
        clock = RealTimeClock()
        store = EtcdBackend(etcd.endpoints, clock, timeout=1.0)
        try:
            before = store.put("/stall/a", b"1").revision
            etcd.pause("etcd-1")
            with pytest.raises(EtcdTimeoutError) as err:
                store.put("/stall/a", b"2")
            assert isinstance(err.value, StoreError)
            assert (err.value.code, err.value.reason) == (504, "Timeout")
            assert err.value.kubectl_message() == (
                "Error from server (Timeout): Timeout: request did not complete within requested "
                "timeout - context deadline exceeded")
            etcd.resume("etcd-1")
            after = store.put("/stall/a", b"3")
            # The stalled put was not re-sent by the client (etcd may still apply it on resume).
            assert after.revision in (before + 1, before + 2)
            assert store.range("/stall/a").kvs[0].value == b"3"
        finally:
            store.close()


def test_run_until_on_a_real_etcd_gives_up_after_its_timeout_in_wall_time(
        cluster: kubelab.Cluster) -> None:
    with pytest.raises(TimeoutError, match=r"within 0.3 seconds \(a real etcd: wall time\)"):
        cluster.run_until(lambda: False, timeout=0.3)
