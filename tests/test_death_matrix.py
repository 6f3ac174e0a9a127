"""The death matrix is measured: each cell comes from what the cluster did after one fault."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kubelab.viz.death_matrix import (
    BASELINE,
    HA_ROWS,
    SINGLE_ROWS,
    DeathMatrix,
    experiment,
    single_cluster,
)


@pytest.fixture(scope="module")
def single() -> DeathMatrix:
    """Every part a single point of failure (fast: no replicas, one store)."""
    return DeathMatrix.run(SINGLE_ROWS, single_cluster, seed=0)


@pytest.fixture(scope="module")
def ha() -> DeathMatrix:
    """The rows where high availability changes the answer."""
    parts = ("etcd member (the leader)", "etcd quorum", "one API server", "scheduler leader")
    return DeathMatrix.run([r for r in HA_ROWS if r.part in parts], seed=0)


def cells(matrix: DeathMatrix, part: str) -> dict[str, str]:
    row = next(r for r in matrix.rows() if r[0] == part)
    return dict(zip(matrix.headings(), row, strict=True))


def outcome(matrix: DeathMatrix, part: str):  # type: ignore[no-untyped-def]
    return next(o for o in matrix.outcomes if o.part == part)


def test_the_baseline_does_everything_at_once(single: DeathMatrix) -> None:
    assert single.baseline is not None
    assert all(at is not None and at <= 5 for at in single.baseline.worked_at.values())


def test_without_the_api_server_nothing_changes_but_pods_keep_running(single: DeathMatrix) -> None:
    row = cells(single, "apiserver")
    assert row["running pods keep running"] == "yes"
    assert row["new pods start"] == row["scaling and self-healing"] == row["kubectl works"] == "no"
    assert "was refused" in outcome(single, "apiserver").errors["kubectl"]
    assert outcome(single, "apiserver").recovery is not None


def test_each_control_plane_part_stops_only_its_own_work(single: DeathMatrix) -> None:
    scheduler = cells(single, "scheduler")
    assert scheduler["new pods start"] == "no" and scheduler["kubectl works"] == "yes"
    manager = cells(single, "controller-manager")
    assert manager["new pods start"] == "yes" and manager["scaling and self-healing"] == "no"


def test_a_dead_node_takes_its_pods_and_they_come_back_after_eviction(single: DeathMatrix) -> None:
    # the web pods on that node die with it (seed 0 puts two of the three there)
    assert cells(single, "a whole node")["running pods keep running"] == "no (2 of 3 died)"
    healed = outcome(single, "a whole node").worked_at["scaling"]
    # 50 s to NotReady, 300 s of tolerated NoExecute taint, then a replacement starts
    assert healed is not None and 350 <= healed <= 400
    assert cells(single, "a kubelet")["running pods keep running"] == "yes"  # nobody stops them


def test_high_availability_turns_a_no_into_a_wait(ha: DeathMatrix) -> None:
    assert cells(ha, "one API server")["kubectl works"] == "yes"
    takeover = outcome(ha, "scheduler leader").worked_at["new_pods"]
    # the follower takes the Lease once it expires: LeaseDuration 15 s plus up to RetryPeriod 2 s
    assert takeover is not None and 15 <= takeover <= 25
    assert cells(ha, "etcd member (the leader)")["kubectl works"].startswith("after")
    quorum = outcome(ha, "etcd quorum")
    assert quorum.worked_at["kubectl"] is None and quorum.still_running == quorum.before
    assert "etcdserver: request timed out" in quorum.errors["kubectl"]
    assert quorum.recovery is not None  # the members come back, catch up, and writes go on


def test_same_seed_same_outcome(single: DeathMatrix) -> None:
    assert experiment(SINGLE_ROWS[0], single_cluster, seed=0) == single.outcomes[0]
    assert experiment(BASELINE, single_cluster, seed=0) == single.baseline


def test_the_timeline_is_an_svg_with_one_lane_per_row(single: DeathMatrix) -> None:
    root = ET.fromstring(single.timeline())
    labels = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for o in single.outcomes:
        assert o.part in labels
    assert "<table>" in single._repr_html_()


def test_new_pods_start_past_a_dead_kubelet_or_node_on_either_cluster(single: DeathMatrix) -> None:
    """The new-pods probe asks whether the cluster starts new pods: a pod bound to the broken
    node before it is NotReady never starts, so another is made after PATIENCE seconds. Whether
    the first landed there depends on the layout; the answer (yes, at once or one retry later)
    does not, on a single-replica cluster as on the high-availability one."""
    from kubelab.viz.death_matrix import PATIENCE, ha_cluster

    for part in ("a kubelet", "a whole node"):
        assert outcome(single, part).worked_at["new_pods"] is not None, part
    row = next(r for r in HA_ROWS if r.part == "a kubelet")
    ha = experiment(row, ha_cluster, seed=0)
    at = ha.worked_at["new_pods"]
    # at once, or (the first probe on the dead kubelet's node) when the second one starts; with
    # the anatomy's pods beside them seed 0 puts it on a live node
    assert at is not None and (at <= 5 or PATIENCE <= at <= PATIENCE + 5)


def test_each_row_shows_the_killed_parts_pods_in_kube_system(single: DeathMatrix) -> None:
    """The kube-system view beside the measured columns: a crashed component's static pod is
    not ready and restarting while it is down, Running with one more restart once it is back."""
    scheduler = outcome(single, "scheduler")
    name, ready, status, restarts = scheduler.kube_system.split()
    assert (name, ready, status) == ("kube-scheduler-control-plane", "0/1", "CrashLoopBackOff")
    after = scheduler.kube_system_after.split()
    assert after[:3] == ["kube-scheduler-control-plane", "1/1", "Running"]
    assert int(after[3]) > int(restarts)
    # no API server: nothing can be listed, but the node's runtime still runs the rest
    apiserver = outcome(single, "apiserver").kube_system
    assert apiserver.startswith("nothing can be listed (The connection to the server")
    crictl = apiserver.split("crictl ps on control-plane: ")[1].split(", ")
    assert "kube-scheduler" in crictl and "etcd" in crictl and "kube-apiserver" not in crictl
    # a dead node's DaemonSet pods: the API keeps their last status; after the revival they
    # restarted once
    node = outcome(single, "a whole node")
    assert all(pod.split()[1:] == ["1/1", "Running", "0"] for pod in node.kube_system.split("; "))
    assert sorted(pod.split()[0].rsplit("-", 1)[0] for pod in node.kube_system.split("; ")) \
        == ["kindnet", "kube-proxy"]
    assert all(pod.endswith("1/1 Running 1") for pod in node.kube_system_after.split("; "))
    assert single.baseline is not None and single.baseline.kube_system == "-"
    assert "kube-system, broken" in single.headings()
    assert "CrashLoopBackOff" in single._repr_html_()


def test_a_crashed_etcd_member_s_static_pod_crashes_too(ha: DeathMatrix) -> None:
    etcd = outcome(ha, "etcd member (the leader)")
    assert etcd.kube_system.split()[1:3] == ["0/1", "CrashLoopBackOff"]
    assert etcd.kube_system_after.split()[1:3] == ["1/1", "Running"]
    quorum = outcome(ha, "etcd quorum").kube_system
    assert quorum.startswith("nothing can be listed (Error from server: etcdserver: request timed out)")


def test_the_kube_system_view_reads_kubectl_s_columns() -> None:
    from kubelab.viz.death_matrix import _all_ready

    assert _all_ready("kube-scheduler-control-plane 1/1 Running 4; kube-proxy-x 1/1 Running 0")
    assert not _all_ready("kube-scheduler-control-plane 0/1 CrashLoopBackOff 3")
    assert not _all_ready("kube-scheduler-control-plane (gone)")
    assert not _all_ready("nothing can be listed (etcdserver: request timed out); crictl ps ...")
    assert _all_ready("-")
