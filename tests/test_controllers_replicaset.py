"""The ReplicaSet controller against upstream semantics (replica_set.go, controller_utils.go)."""

from __future__ import annotations

import re

import pytest

from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.cluster import Cluster
from kubelab.controllers.controller_utils import (
    EXPECTATIONS_TIMEOUT,
    UIDTrackingControllerExpectations,
    slow_start_batch,
)
from kubelab.controllers.pod_ranking import rank_pods_for_deletion, ranks_by_related_pods_on_same_node
from kubelab.sim import Clock
from kubelab.viz import mark_pods_ready
from tests.controllers_helpers import (
    active_pods,
    cluster,
    deployment,
    events,
    pod,
    ready,
    replica_set,
    settle,
)


def test_creates_pods_from_the_template_with_owner_reference_and_events() -> None:
    c = cluster()
    created = c.client.create(replica_set("web", 3))
    c.run(2)
    pods = active_pods(c, "app=web")
    assert len(pods) == 3
    for p in pods:
        assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", p["metadata"]["name"])
        assert p["metadata"]["generateName"] == "web-"
        (ref,) = p["metadata"]["ownerReferences"]
        assert ref == {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                       "uid": created["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    assert sorted(events(c, "replicaset-controller", "SuccessfulCreate")) == \
        sorted(f"Created pod: {p['metadata']['name']}" for p in pods)
    status = c.get("replicasets", "web")["status"]
    assert status == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 0,
                      "availableReplicas": 0, "observedGeneration": 1}
    mark_pods_ready(c)
    c.run(2)
    status = c.get("replicasets", "web")["status"]
    assert (status["readyReplicas"], status["availableReplicas"]) == (3, 3)


def test_a_deleted_pod_comes_back_as_a_new_pod() -> None:
    c = cluster()
    c.client.create(replica_set("web", 2))
    settle(c)
    victim = active_pods(c, "app=web")[0]["metadata"]["name"]
    c.kubectl(f"delete pod {victim}")
    c.run(2)
    names = {p["metadata"]["name"] for p in active_pods(c, "app=web")}
    assert len(names) == 2 and victim not in names


def test_terminating_pods_do_not_count_and_are_replaced_at_once() -> None:
    c = cluster()
    c.client.create(replica_set("web", 2))
    settle(c)  # bound and ready: a delete now waits for the (absent) kubelet's grace period
    victim = active_pods(c, "app=web")[0]["metadata"]["name"]
    c.client.delete("pods", victim)
    c.run(1)
    assert c.get("pods", victim)["metadata"]["deletionTimestamp"]
    assert len(active_pods(c, "app=web")) == 2  # the replacement did not wait for the grace period
    assert c.get("replicasets", "web")["status"]["replicas"] == 2


def test_scale_to_zero_deletes_every_pod_with_events() -> None:
    c = cluster()
    c.client.create(replica_set("web", 3))
    c.run(2)
    names = sorted(p["metadata"]["name"] for p in active_pods(c, "app=web"))
    assert c.kubectl("scale replicaset web --replicas=0") == "replicaset.apps/web scaled"
    c.run(2)
    assert active_pods(c, "app=web") == []
    assert sorted(events(c, "replicaset-controller", "SuccessfulDelete")) == \
        [f"Deleted pod: {n}" for n in names]


def test_adopts_a_matching_orphan_and_creates_only_the_difference() -> None:
    c = cluster()
    c.client.create(pod("stray", {"app": "web"}))
    rs = c.client.create(replica_set("web", 2))
    c.run(2)
    stray = c.get("pods", "stray")
    assert [r["uid"] for r in stray["metadata"]["ownerReferences"]] == [rs["metadata"]["uid"]]
    assert len(active_pods(c, "app=web")) == 2
    assert len(events(c, "replicaset-controller", "SuccessfulCreate")) == 1


def test_releases_an_owned_pod_whose_labels_stop_matching_and_replaces_it() -> None:
    c = cluster()
    c.client.create(replica_set("web", 2))
    c.run(2)
    name = active_pods(c, "app=web")[0]["metadata"]["name"]
    c.kubectl(f"label pod {name} app=debug --overwrite")
    c.run(2)
    assert not c.get("pods", name)["metadata"].get("ownerReferences")  # released, not deleted
    assert len(active_pods(c, "app=web")) == 2


def test_never_adopts_a_pod_another_controller_owns() -> None:
    c = cluster()
    other = c.client.create(replica_set("other", 1, labels={"app": "web", "team": "x"}))
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "other",
           "uid": other["metadata"]["uid"], "controller": True}
    c.client.create(pod("owned", {"app": "web", "team": "x"}, ownerReferences=[ref]))
    c.client.create(replica_set("web", 1))
    c.run(2)
    assert c.get("pods", "owned")["metadata"]["ownerReferences"][0]["name"] == "other"
    assert len([p for p in active_pods(c, "app=web")
                if p["metadata"]["ownerReferences"][0]["name"] == "web"]) == 1


def test_expectations_stop_a_second_sync_from_creating_again_while_the_cache_lags() -> None:
    c = cluster()
    c.faults.delay_watch_events(10, user="system:kube-controller-manager")
    c.client.create(replica_set("web", 3))
    c.run(11)  # the ReplicaSet arrives late; its sync creates 3 pods whose events are late too
    rsc = c.components["controller-manager"]["replicaset-controller"]
    assert len(active_pods(c, "app=web")) == 3
    assert rsc.expectations.get_expectations("default/web") == (3, 0)
    rsc.sync_replica_set("default/web")  # the cache shows no pods yet: without expectations, +3
    assert len(active_pods(c, "app=web")) == 3
    c.run(11)
    assert rsc.expectations.satisfied_expectations("default/web")
    assert len(active_pods(c, "app=web")) == 3


def test_expectations_expire_so_a_lost_event_cannot_stall_a_controller_forever() -> None:
    clock = Clock()
    exp = UIDTrackingControllerExpectations(clock)
    exp.expect_creations("ns/rs", 2)
    exp.creation_observed("ns/rs")
    assert not exp.satisfied_expectations("ns/rs")
    clock.run(until=EXPECTATIONS_TIMEOUT + 0.5)
    assert exp.satisfied_expectations("ns/rs")
    exp.expect_deletions_of("ns/rs", ["ns/a", "ns/b"])
    exp.deletion_observed_of("ns/rs", "ns/a")
    exp.deletion_observed_of("ns/rs", "ns/a")  # graceful deletion: update, then DELETED: once
    assert exp.get_expectations("ns/rs") == (0, 1)
    exp.deletion_observed_of("ns/rs", "ns/b")
    assert exp.satisfied_expectations("ns/rs")


def test_slow_start_batches_double_and_stop_after_a_failing_batch() -> None:
    calls: list[int] = []

    def create() -> None:
        calls.append(len(calls) + 1)
        if len(calls) == 5:
            raise ApiError(403, "Forbidden", "exceeded quota")
    successes, err = slow_start_batch(20, 1, create)
    # Batches 1, 2, 4: the failure is in the third batch, which still runs to its end.
    assert len(calls) == 7 and successes == 6
    assert err is not None and err.message == "exceeded quota"
    calls.clear()
    assert slow_start_batch(5, 1, lambda: calls.append(0) or None) == (5, None)


def _pod(name: str, *, node: str = "", phase: str = "Pending", ready_at: float | None = None,
         created: float = 0.0, restarts: int = 0, cost: str | None = None) -> dict[str, object]:
    conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(ready_at)}] \
        if ready_at is not None else []
    meta: dict[str, object] = {"name": name, "uid": name, "creationTimestamp": rfc3339(created)}
    if cost is not None:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": cost}
    return {"metadata": meta, "spec": {"nodeName": node},
            "status": {"phase": phase, "conditions": conditions,
                       "containerStatuses": [{"restartCount": restarts}]}}


def test_deletion_rank_follows_upstream_order() -> None:
    now = 10_000.0
    pods = [
        _pod("running-ready-old", node="n1", phase="Running", ready_at=100, created=50),
        _pod("running-ready-new", node="n1", phase="Running", ready_at=9_000, created=8_990),
        _pod("running-not-ready", node="n1", phase="Running"),
        _pod("unknown", node="n1", phase="Unknown"),
        _pod("pending", node="n1", phase="Pending"),
        _pod("unscheduled", phase="Pending"),
        _pod("crashy", node="n1", phase="Running", ready_at=100, created=50, restarts=4),
        _pod("cheap", node="n1", phase="Running", ready_at=100, created=50, cost="-10"),
    ]
    order = [p["metadata"]["name"] for p in rank_pods_for_deletion(pods, [1] * len(pods), now)]  # type: ignore[index]
    assert order == ["unscheduled", "pending", "unknown", "running-not-ready", "cheap",
                     "running-ready-new", "crashy", "running-ready-old"]


def test_deletion_rank_prefers_pods_doubled_up_on_a_node() -> None:
    a = _pod("alone", node="n1", phase="Running", ready_at=100)
    b = _pod("crowded", node="n2", phase="Running", ready_at=100)
    related = [a, b, _pod("sibling", node="n2", phase="Running", ready_at=100)]
    ranks = ranks_by_related_pods_on_same_node([a, b], related)
    assert ranks == [1, 2]
    assert [p["metadata"]["name"] for p in rank_pods_for_deletion([a, b], ranks, 1000.0)] == \
        ["crowded", "alone"]  # type: ignore[index]


def test_scale_down_deletes_unscheduled_and_unready_pods_first() -> None:
    c = cluster()
    c.client.create(replica_set("web", 3))
    c.run(2)
    mark_pods_ready(c)  # binds and readies all three
    c.run(1)
    c.client.patch("replicasets", "web", {"spec": {"replicas": 5}})
    c.run(2)  # two new pods: unscheduled, not ready
    fresh = {p["metadata"]["name"] for p in active_pods(c, "app=web") if not ready(p)}
    assert len(fresh) == 2
    c.client.patch("replicasets", "web", {"spec": {"replicas": 3}})
    c.run(2)
    left = active_pods(c, "app=web")
    assert len(left) == 3 and all(ready(p) for p in left)
    assert not fresh & {p["metadata"]["name"] for p in left}


def test_available_waits_for_min_ready_seconds() -> None:
    c = cluster()
    c.client.create(replica_set("web", 2, minReadySeconds=10))
    c.run(2)
    mark_pods_ready(c)
    c.run(3)
    status = c.get("replicasets", "web")["status"]
    assert (status["readyReplicas"], status["availableReplicas"]) == (2, 0)
    c.run(10)  # requeued by itself after minReadySeconds (+1 s): no event needed
    assert c.get("replicasets", "web")["status"]["availableReplicas"] == 2


@pytest.mark.parametrize("crash_at", [0.0, 0.5])
def test_a_restarted_controller_manager_does_not_double_create(crash_at: float) -> None:
    c = cluster()
    c.client.create(replica_set("web", 4))
    c.run(crash_at)
    c.faults.crash("controller-manager")
    c.faults.restart("controller-manager")
    c.run(3)
    assert len(active_pods(c, "app=web")) == 4


def test_a_status_written_by_someone_else_is_corrected() -> None:
    c = cluster()
    c.apply(replica_set("rs", replicas=3))
    settle(c)
    assert c.get("replicasets", "rs")["status"]["readyReplicas"] == 3
    rs = c.get("replicasets", "rs")
    rs["status"]["readyReplicas"] = rs["status"]["availableReplicas"] = 0
    c.client.update_status(rs)
    c.run(2)
    assert c.get("replicasets", "rs")["status"]["readyReplicas"] == 3


def test_fully_labeled_replicas_follow_a_template_label_change() -> None:
    c = cluster()
    c.apply(replica_set("rs", replicas=2))
    settle(c)
    assert c.get("replicasets", "rs")["status"]["fullyLabeledReplicas"] == 2
    c.client.patch("replicasets", "rs", {"spec": {"template": {"metadata": {"labels": {"tier": "x"}}}}})
    c.run(2)
    status = c.get("replicasets", "rs")["status"]
    assert (status["replicas"], status["fullyLabeledReplicas"]) == (2, 0)


def test_a_stale_echo_of_its_own_status_write_is_corrected() -> None:
    # Issue 15: with the controller manager's watch late, the echo of a status write arrives
    # after a newer sync; the sync it queues (upstream syncs on every update) sets it right.
    c = Cluster(nodes=3, seed=0)
    c.apply(deployment(replicas=3))
    c.run(30)
    c.faults.delay_watch_events(1.0, user="system:kube-controller-manager")
    c.faults.crash_container(sorted(p["metadata"]["name"] for p in active_pods(c))[0])
    c.run(60)
    c.faults.heal_watch_events()
    c.run(600)
    assert all(ready(p) for p in active_pods(c))
    assert c.kubectl("get deploy").splitlines()[1].split()[:2] == ["web", "3/3"]
