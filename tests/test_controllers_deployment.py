"""The Deployment controller against upstream semantics (pkg/controller/deployment/)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.cluster import Cluster
from kubelab.controllers.deployment.replicas import (
    get_scaled_value_from_int_or_percent,
    max_surge,
    max_unavailable,
    resolve_fenceposts,
)
from kubelab.controllers.deployment.util import compute_hash
from kubelab.viz import mark_pods_ready
from tests.controllers_helpers import active_pods, cluster, deployment, events, replica_sets, settle

DC = "deployment-controller"


def set_image(c: Cluster, image: str, name: str = "web") -> None:
    c.client.patch("deployments", name, {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": image}]}}}}, patch_type="strategic")


def roll(c: Cluster, replicas: int, surge: int, unavailable: int, steps: int = 40) -> list[str]:
    """Run the rollout one step at a time: let the controllers act, check the bounds, then let
    every pod report Ready. Returns the deployment controller's scaling events."""
    for _ in range(steps):
        c.run(1)
        pods = active_pods(c, "app=web")
        available = [p for p in pods if any(x["type"] == "Ready" and x["status"] == "True"
                                            for x in p["status"].get("conditions") or ())]
        total_spec = sum(rs["spec"]["replicas"] for rs in replica_sets(c))
        assert total_spec <= replicas + surge, total_spec
        assert len(pods) <= replicas + surge, len(pods)
        assert len(available) >= replicas - unavailable, len(available)
        mark_pods_ready(c)
    return events(c, DC, "ScalingReplicaSet")


def test_int_or_percent_resolves_as_upstream() -> None:
    assert get_scaled_value_from_int_or_percent("25%", 10, True) == 3     # 2.5 rounds up
    assert get_scaled_value_from_int_or_percent("25%", 10, False) == 2    # 2.5 rounds down
    assert get_scaled_value_from_int_or_percent(4, 10, False) == 4
    with pytest.raises(ValueError, match="invalid value for IntOrString"):
        get_scaled_value_from_int_or_percent("x%", 10, True)
    # Both fenceposts zero would stall a rollout: maxUnavailable becomes 1.
    assert resolve_fenceposts("1%", "1%", 2) == (1, 0)
    assert resolve_fenceposts(0, "1%", 2) == (0, 1)
    d = deployment(replicas=10)
    d["spec"]["strategy"]["rollingUpdate"] = {"maxSurge": "25%", "maxUnavailable": "25%"}
    assert (max_surge(d), max_unavailable(d)) == (3, 2)


def test_new_replica_set_is_named_after_the_pod_template_hash() -> None:
    c = cluster()
    c.apply(deployment(replicas=2))
    c.run(2)
    (rs,) = replica_sets(c)
    template = c.get("deployments", "web")["spec"]["template"]
    pod_hash = compute_hash(template)
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    for labels in (rs["metadata"]["labels"], rs["spec"]["selector"]["matchLabels"],
                   rs["spec"]["template"]["metadata"]["labels"]):
        assert labels == {"app": "web", "pod-template-hash": pod_hash}
    assert all(p["metadata"]["labels"]["pod-template-hash"] == pod_hash for p in active_pods(c))
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert events(c, DC, "ScalingReplicaSet") == [f"Scaled up replica set web-{pod_hash} from 0 to 2"]
    # The hash: FNV-1a over the template, digits mapped onto utilrand's alphabet.
    assert set(pod_hash) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert compute_hash(template) == pod_hash and compute_hash(template, 1) != pod_hash


def test_rolling_update_10_replicas_25_percent() -> None:
    c = cluster()
    c.apply(deployment(replicas=10, surge="25%", unavailable="25%"))
    settle(c)
    old = replica_sets(c)[0]["metadata"]["name"]
    set_image(c, "nginx:1.26")
    scaled = roll(c, 10, 3, 2)
    new = next(rs for rs in replica_sets(c) if rs["metadata"]["name"] != old)["metadata"]["name"]
    # maxSurge 25% of 10 rounds up to 3, maxUnavailable rounds down to 2: at most 13 pods, at
    # least 8 available. New pods become available only between steps, all at once:
    assert scaled[1:] == [
        f"Scaled up replica set {new} from 0 to 3",    # 10 + 3 = 13 pods
        f"Scaled down replica set {old} from 10 to 8",  # 13 - 8 - 3 unavailable new = 2
        f"Scaled up replica set {new} from 3 to 5",    # 3 new available: 8 + 5 = 13
        f"Scaled down replica set {old} from 8 to 3",   # available 8 + 5 = 13, keep 8
        f"Scaled up replica set {new} from 5 to 10",
        f"Scaled down replica set {old} from 3 to 0",
    ]
    status = c.get("deployments", "web")["status"]
    assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"]) == (10, 10, 10)


def test_rolling_update_3_replicas_surge_1_unavailable_0() -> None:
    c = cluster()
    c.apply(deployment(replicas=3, surge=1, unavailable=0))
    settle(c)
    old = replica_sets(c)[0]["metadata"]["name"]
    set_image(c, "nginx:1.26")
    scaled = roll(c, 3, 1, 0)
    new = next(rs for rs in replica_sets(c) if rs["metadata"]["name"] != old)["metadata"]["name"]
    # One extra pod at a time; never fewer than 3 available: +1 new, -1 old, three times.
    assert scaled[1:] == [
        f"Scaled up replica set {new} from 0 to 1", f"Scaled down replica set {old} from 3 to 2",
        f"Scaled up replica set {new} from 1 to 2", f"Scaled down replica set {old} from 2 to 1",
        f"Scaled up replica set {new} from 2 to 3", f"Scaled down replica set {old} from 1 to 0"]


def test_recreate_removes_every_old_pod_before_creating_the_new_replica_set() -> None:
    c = cluster()
    c.apply(deployment(replicas=3, strategy="Recreate"))
    settle(c)
    set_image(c, "nginx:1.26")
    c.run(3)
    (old,) = replica_sets(c)  # scaled to 0, its pods still terminating: no new ReplicaSet yet
    assert old["spec"]["replicas"] == 0
    assert len(c.get("pods")) == 3 and not active_pods(c)
    mark_pods_ready(c)  # the kubelets finish the deletions
    c.run(3)
    rss = replica_sets(c)
    assert [rs["spec"]["replicas"] for rs in rss] == [0, 3]
    assert events(c, DC, "ScalingReplicaSet")[-2:] == [
        f"Scaled down replica set {old['metadata']['name']} from 3 to 0",
        f"Scaled up replica set {rss[1]['metadata']['name']} from 0 to 3"]


def test_conditions_and_rollout_status_when_complete() -> None:
    c = cluster()
    c.apply(deployment(replicas=2))
    c.run(2)
    assert c.kubectl("rollout status deployment/web") == \
        'Waiting for deployment "web" rollout to finish: 0 of 2 updated replicas are available...'
    settle(c)
    d = c.get("deployments", "web")
    conditions = {x["type"]: x for x in d["status"]["conditions"]}
    rs_name = replica_sets(c)[0]["metadata"]["name"]
    assert (conditions["Available"]["status"], conditions["Available"]["reason"],
            conditions["Available"]["message"]) == \
        ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    assert (conditions["Progressing"]["reason"], conditions["Progressing"]["message"]) == \
        ("NewReplicaSetAvailable", f'ReplicaSet "{rs_name}" has successfully progressed.')
    assert c.kubectl("rollout status deployment/web") == 'deployment "web" successfully rolled out'


def test_progress_deadline_exceeded_when_pods_never_become_ready() -> None:
    c = cluster()
    c.apply(deployment(replicas=2, progressDeadlineSeconds=30))
    c.run(45)  # nobody makes the pods ready; the controller requeued itself for the deadline
    cond = {x["type"]: x for x in c.get("deployments", "web")["status"]["conditions"]}["Progressing"]
    rs_name = replica_sets(c)[0]["metadata"]["name"]
    assert (cond["status"], cond["reason"], cond["message"]) == \
        ("False", "ProgressDeadlineExceeded", f'ReplicaSet "{rs_name}" has timed out progressing.')
    out = c.kubectl("rollout status deployment/web")
    assert (out, out.exit_code) == ('error: deployment "web" exceeded its progress deadline', 1)


def test_revision_history_limit_deletes_the_oldest_empty_replica_sets() -> None:
    c = cluster()
    c.apply(deployment(replicas=1, revisionHistoryLimit=1))
    settle(c)
    for version in ("1.26", "1.27", "1.28"):
        set_image(c, f"nginx:{version}")
        settle(c, rounds=4)
    rss = replica_sets(c)
    revisions = [rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for rs in rss]
    assert sorted(revisions) == ["3", "4"]  # the newest and one old one
    assert [rs["spec"]["template"]["spec"]["containers"][0]["image"] for rs in rss
            if rs["spec"]["replicas"]] == ["nginx:1.28"]


def test_pause_stops_rollouts_but_not_scaling_and_resume_continues() -> None:
    c = cluster()
    c.apply(deployment(replicas=2))
    settle(c)
    assert c.kubectl("rollout pause deployment/web") == "deployment.apps/web paused"
    set_image(c, "nginx:1.26")
    c.kubectl("scale deployment web --replicas=4")
    settle(c)
    rss = replica_sets(c)
    assert len(rss) == 1 and rss[0]["spec"]["replicas"] == 4  # scaled, not rolled out
    cond = {x["type"]: x for x in c.get("deployments", "web")["status"]["conditions"]}["Progressing"]
    assert (cond["status"], cond["reason"], cond["message"]) == ("Unknown", "DeploymentPaused",
                                                                 "Deployment is paused")
    assert c.kubectl("rollout resume deployment/web") == "deployment.apps/web resumed"
    settle(c, rounds=6)
    rss = replica_sets(c)
    assert [rs["spec"]["replicas"] for rs in rss] == [0, 4]
    assert rss[1]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"


def test_scaling_during_a_rollout_is_proportional() -> None:
    c = cluster()
    c.apply(deployment(replicas=10, surge="25%", unavailable="25%"))
    settle(c)
    set_image(c, "nginx:broken")
    c.run(5)
    # New pods never become ready. New 3 (13 = 10 + maxSurge), old 10 -> 8 (maxUnavailable 2),
    # new 3 -> 5 (13 again); then 13 - 8 available - 5 unavailable = 0: stuck.
    assert [rs["spec"]["replicas"] for rs in replica_sets(c)] == [8, 5]
    c.kubectl("scale deployment web --replicas=20")
    c.run(3)
    # 20 + maxSurge 5 = 25 allowed, 13 there: 12 to add, shared by the max-replicas annotation
    # (13), largest first: old 8*25/13 = 15.4 -> 15 (+7), new 5*25/13 = 9.6 -> 10 (+5).
    assert [rs["spec"]["replicas"] for rs in replica_sets(c)] == [15, 10]


def test_rollback_by_annotation_and_by_kubectl() -> None:
    c = cluster()
    c.apply(deployment(replicas=1))
    settle(c)
    set_image(c, "nginx:1.26")
    settle(c, rounds=3)
    c.client.patch("deployments", "web", {"metadata": {"annotations": {
        "deprecated.deployment.rollback.to": "1"}}})
    settle(c, rounds=3)
    d = c.get("deployments", "web")
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert "deprecated.deployment.rollback.to" not in d["metadata"]["annotations"]
    assert events(c, DC, "DeploymentRollback") == ['Rolled back deployment "web" to revision 1']
    rss = replica_sets(c)
    back = next(rs for rs in rss if rs["spec"]["replicas"] == 1)["metadata"]["annotations"]
    assert (back["deployment.kubernetes.io/revision"], back["deployment.kubernetes.io/revision-history"]) \
        == ("3", "1")
    assert c.kubectl("rollout undo deployment/web") == "deployment.apps/web rolled back"
    assert c.get("deployments", "web")["spec"]["template"]["spec"]["containers"][0]["image"] \
        == "nginx:1.26"


def test_deployment_adopts_a_matching_orphan_replica_set() -> None:
    c = cluster()
    d = deployment(replicas=2)
    orphan: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                              "metadata": {"name": "web-orphan", "namespace": "default",
                                           "labels": {"app": "web"}},
                              "spec": {"replicas": 2, "selector": d["spec"]["selector"],
                                       "template": d["spec"]["template"]}}
    c.client.create(orphan)
    c.run(1)
    created = c.apply(d)
    assert created == ["deployment.apps/web created"]
    settle(c)
    uid = c.get("deployments", "web")["metadata"]["uid"]
    adopted = c.get("replicasets", "web-orphan")
    assert adopted["metadata"]["ownerReferences"][0]["uid"] == uid
    assert len(replica_sets(c)) == 1  # its template is the Deployment's: it is the new one
    assert len(active_pods(c)) == 2


def _progressing_reasons(c: Cluster) -> list[str]:
    reasons: list[str] = []

    def on_event(event: dict[str, Any]) -> None:
        for cond in (event["object"].get("status") or {}).get("conditions") or ():
            if cond["type"] == "Progressing" and (not reasons or reasons[-1] != cond["reason"]):
                reasons.append(cond["reason"])
    c.client.watch("deployments", on_event)
    return reasons


def test_progressing_reasons_through_a_rollout() -> None:
    c = cluster()
    reasons = _progressing_reasons(c)
    c.apply(deployment(replicas=2))
    settle(c, rounds=2)
    assert reasons == ["NewReplicaSetCreated", "ReplicaSetUpdated", "NewReplicaSetAvailable"]


def test_found_new_replica_set_when_the_deployment_adopts_its_template() -> None:
    c = cluster()
    d = deployment(replicas=1)
    c.client.create({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "metadata": {"name": "web-old", "namespace": "default", "labels": {"app": "web"}},
                     "spec": {"replicas": 1, "selector": d["spec"]["selector"],
                              "template": d["spec"]["template"]}})
    c.run(1)
    reasons = _progressing_reasons(c)
    c.apply(d)
    settle(c)
    assert reasons[0] == "FoundNewReplicaSet" and reasons[-1] == "NewReplicaSetAvailable"
