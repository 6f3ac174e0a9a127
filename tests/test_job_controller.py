"""The Job controller against upstream's rules (cases after job_controller_test.go's
TestControllerSyncJob, TestJobBackoff, TestPastDeadlineJobFinished, TestSyncJobWithJobPodFailurePolicy
and the TTL-after-finished controller's tests), on a full cluster whose kubelets run scripted pods."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.controllers.job.backoff_utils import BackoffRecord
from kubelab.controllers.job.indexed_job_utils import format_indexes, parse_indexes

Object = dict[str, Any]


def job(name: str = "pi", behavior: str = "exit=5,code=0", **spec: Any) -> Object:
    restart = spec.pop("restart_policy", "Never")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {**spec, "template": {
                "metadata": {"annotations": {"kubelab.dev/behavior": behavior}},
                "spec": {"restartPolicy": restart, "containers": [{"name": "main", "image": "busybox"}]}}}}


def run_until_finished(c: Cluster, name: str = "pi", timeout: float = 900) -> Object:
    c.run_until(lambda: any(x.get("type") in ("Complete", "Failed") and x.get("status") == "True"
                            for x in (c.get("jobs", name).get("status") or {}).get("conditions") or ()),
                timeout=timeout)
    return c.get("jobs", name)


def conditions(j: Object) -> list[tuple[str, str, str]]:
    return [(x["type"], x.get("reason", ""), x.get("message", "")) for x in j["status"].get("conditions", [])]


def test_completions_and_parallelism_run_to_complete() -> None:
    c = Cluster(nodes=2)
    c.apply(job(completions=3, parallelism=2))
    c.run(3)
    status = c.get("jobs", "pi")["status"]
    assert status["active"] == 2  # parallelism caps the first wave
    j = run_until_finished(c)
    assert j["status"]["succeeded"] == 3 and "failed" not in j["status"]
    assert conditions(j) == [
        ("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")]
    assert j["status"]["completionTime"] and j["status"]["uncountedTerminatedPods"] == {}
    pods = c.get("pods", label_selector="batch.kubernetes.io/job-name=pi")
    assert len(pods) == 3
    assert all(not p["metadata"].get("finalizers") for p in pods)  # every pod was counted
    assert all(p["metadata"]["generateName"] == "pi-" for p in pods)
    out = str(c.kubectl("get jobs"))
    assert out.splitlines()[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert out.splitlines()[1].split()[:3] == ["pi", "Complete", "3/3"]


def test_pods_carry_the_tracking_finalizer_while_running() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=60"))
    c.run(5)
    (pod,) = c.get("pods")
    assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    ref = pod["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["controller"], ref["blockOwnerDeletion"]) == ("Job", True, True)
    uid = c.get("jobs", "pi")["metadata"]["uid"]
    assert pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == uid
    assert pod["metadata"]["labels"]["job-name"] == "pi"


def test_backoff_limit_exceeded_with_exponential_pod_backoff() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=1,code=3", backoffLimit=2))
    creations: list[float] = []
    seen: set[str] = set()
    for _ in range(400):
        c.run(0.5)
        for p in c.get("pods"):
            if p["metadata"]["name"] not in seen:
                seen.add(p["metadata"]["name"])
                creations.append(c.clock.now)
    j = c.get("jobs", "pi")
    assert j["status"]["failed"] == 3
    assert conditions(j)[-1] == ("Failed", "BackoffLimitExceeded",
                                 "Job has reached the specified backoff limit")
    assert [t for t, _, _ in conditions(j)] == ["FailureTarget", "Failed"]
    gaps = [b - a for a, b in itertools.pairwise(creations)]
    # Each pod runs ~1-2 s; then the next waits 10 s, then 20 s (the back-off doubles).
    assert len(gaps) == 2 and 10 <= gaps[0] < 14 and 20 <= gaps[1] < 24
    assert "Job has reached the specified backoff limit" in [e["message"] for e in c.events()]


def test_backoff_record_doubles_and_caps_at_ten_minutes() -> None:
    record = BackoffRecord("ns/job", failures_after_last_success=1, last_failure_time=100.0)
    assert record.get_remaining_time(105.0) == 5.0
    record.failures_after_last_success = 3
    assert record.get_remaining_time(100.0) == 40.0
    record.failures_after_last_success = 12
    assert record.get_remaining_time(100.0) == 600.0
    assert BackoffRecord("k").get_remaining_time(0.0) == 0.0


def test_active_deadline_exceeded_deletes_running_pods() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=600", activeDeadlineSeconds=20))
    j = run_until_finished(c, timeout=120)
    assert conditions(j)[-1] == ("Failed", "DeadlineExceeded",
                                 "Job was active longer than specified deadline")
    c.run(40)  # the pod's grace period
    assert [p for p in c.get("pods") if (p.get("status") or {}).get("phase") == "Running"] == []
    assert c.get("jobs", "pi")["status"]["failed"] == 1  # the deleted pod counted as failed


def test_pod_failure_policy_fail_job_on_exit_code() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=2,code=42", backoffLimit=6, podFailurePolicy={"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}]}))
    j = run_until_finished(c, timeout=60)
    (pod,) = c.get("pods")
    ns_name = f"default/{pod['metadata']['name']}"
    assert conditions(j)[-1] == ("Failed", "PodFailurePolicy", f"Container main for pod {ns_name} failed "
                                 "with exit code 42 matching FailJob rule at index 0")
    assert j["spec"]["podReplacementPolicy"] == "Failed"  # the default with a podFailurePolicy


def test_pod_failure_policy_ignore_does_not_count() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=1,code=7", backoffLimit=0, podFailurePolicy={"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [7]}}]}))
    c.run(30)
    j = c.get("jobs", "pi")
    assert "failed" not in j["status"] and conditions(j) == []  # backoffLimit 0, yet not failed
    assert len(c.get("pods")) >= 2  # the ignored failure was replaced


def test_pod_failure_policy_on_disruption_target_condition() -> None:
    from kubelab.controllers.job.pod_failure_policy import match_pod_failure_policy
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                        {"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [0, 1]}}]}
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "status": {
        "phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True"}],
        "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 137}}}]}}
    assert match_pod_failure_policy(policy, pod) == (None, False, "Ignore")
    pod["status"]["conditions"] = []
    message, counts, action = match_pod_failure_policy(policy, pod)
    assert action == "FailJob" and counts and message == \
        "Container c for pod ns/p failed with exit code 137 matching FailJob rule at index 1"
    pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] = 1
    assert match_pod_failure_policy(policy, pod) == (None, True, None)


def test_indexed_job_gives_each_index_one_success() -> None:
    c = Cluster(nodes=2)
    c.apply(job(completions=3, parallelism=3, completionMode="Indexed"))
    c.run(3)
    pods = c.get("pods")
    indexes = sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods)
    assert indexes == ["0", "1", "2"]
    for p in pods:
        ix = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        assert p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == ix
        assert p["spec"]["hostname"] == f"pi-{ix}" and p["metadata"]["generateName"] == f"pi-{ix}-"
        assert {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {"fieldPath":
                "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}} in \
            p["spec"]["containers"][0]["env"]
    j = run_until_finished(c)
    assert j["status"]["completedIndexes"] == "0-2" and j["status"]["succeeded"] == 3


def test_indexes_format_as_intervals() -> None:
    assert format_indexes({0, 2, 3, 4, 7}) == "0,2-4,7"
    assert parse_indexes("0,2-4,7", 5) == {0, 2, 3, 4}


def test_deleted_pod_is_replaced_and_counted_failed() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=120"))
    c.run(5)
    (pod,) = c.get("pods")
    c.client.delete("pods", pod["metadata"]["name"])
    c.run(40)
    j = c.get("jobs", "pi")
    assert j["status"]["failed"] == 1  # TerminatingOrFailed: a deleted pod is a failure
    assert not c.exists("pods", pod["metadata"]["name"])  # its finalizer was removed
    assert j["status"]["active"] == 1


def _crash_mid_tracking(*, finalizer_removed: bool) -> Cluster:
    """Two of three pods succeed while the controller-manager is down; then the state a crash in
    the middle of the count leaves: the first pod's uid in status.uncountedTerminatedPods
    (step 1 done), its finalizer removed or not (step 2), the counters not updated (step 3)."""
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=3", completions=3, parallelism=2))
    c.run(2)
    c.faults.crash("controller-manager")
    c.run(10)  # both pods succeed while nobody counts
    first, second = sorted(c.get("pods"), key=lambda p: p["metadata"]["name"])
    assert [p["status"]["phase"] for p in (first, second)] == ["Succeeded", "Succeeded"]
    uid = first["metadata"]["uid"]
    j = c.get("jobs", "pi")
    j["status"]["uncountedTerminatedPods"] = {"succeeded": [uid]}
    c.client.update_status(j)
    if finalizer_removed:
        first["metadata"]["finalizers"] = [f for f in first["metadata"]["finalizers"]
                                           if f != "batch.kubernetes.io/job-tracking"]
        c.client.update(first)
    j = c.get("jobs", "pi")
    assert j["status"]["uncountedTerminatedPods"] == {"succeeded": [uid]}
    assert not j["status"].get("succeeded")
    c.faults.restart("controller-manager")
    return c


def test_crash_between_uncounted_and_counted_counts_once() -> None:
    """The finalizer is gone and the uid is uncounted: the restarted controller moves it to
    succeeded once, counts the second pod once, and runs only the one pod still missing."""
    c = _crash_mid_tracking(finalizer_removed=True)
    j = run_until_finished(c)
    assert j["status"]["succeeded"] == 3 and not j["status"].get("failed")
    assert len(c.get("pods")) == 3
    assert conditions(j)[-1][0] == "Complete"


def test_crash_between_uncounted_and_finalizer_removal_counts_once() -> None:
    """The uid is uncounted but the pod still has its finalizer: it is neither a new success
    (getNewFinishedPods skips uncounted uids) nor written to uncountedTerminatedPods twice."""
    c = _crash_mid_tracking(finalizer_removed=False)
    j = run_until_finished(c)
    assert j["status"]["succeeded"] == 3 and not j["status"].get("failed")
    assert len(c.get("pods")) == 3


def test_ttl_after_finished_deletes_the_job_and_its_pods() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=2", ttlSecondsAfterFinished=30))
    j = run_until_finished(c, timeout=60)
    finished = j["status"]["completionTime"]
    c.run(20)
    assert c.exists("jobs", "pi")
    c.run(30)
    assert not c.exists("jobs", "pi") and c.get("pods") == []
    assert finished


def test_deleting_a_job_removes_the_finalizers_of_its_pods() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=600", parallelism=2, completions=2))
    c.run(5)
    c.client.delete("jobs", "pi")
    c.run(60)
    assert c.get("pods") == []


@pytest.mark.parametrize(("spec", "message"), [
    ({"parallelism": -1}, "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
    ({"backoffLimit": -2}, "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0"),
    ({"completionMode": "Indexed", "parallelism": 2},
     "spec.completions: Required value: when completion mode is Indexed"),
    ({"completionMode": "Random"}, 'spec.completionMode: Unsupported value: "Random": supported values: '
                                   '"NonIndexed", "Indexed"'),
    ({"restart_policy": "Always"}, 'spec.template.spec.restartPolicy: Required value: valid values: '
                                   '"OnFailure", "Never"'),
    ({"restart_policy": "OnFailure", "podFailurePolicy": {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}},
     'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
     'podFailurePolicy is specified'),
    ({"podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In",
                                                                          "values": [0, 3, 2]}}]}},
     "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In "
     "operator"),
    ({"podFailurePolicy": {"rules": [{"action": "Retry", "onPodConditions": [{"type": "X"}]}]}},
     'spec.podFailurePolicy.rules[0].action: Unsupported value: "Retry": supported values: "Count", '
     '"FailIndex", "FailJob", "Ignore"'),
])
def test_validation_in_upstream_words(spec: Object, message: str) -> None:
    c = Cluster(nodes=1, components=[])
    with pytest.raises(ApiError) as err:
        c.client.create(job(**spec))
    assert err.value.code == 422 and message in err.value.message
    assert c.get("jobs") == []


def test_defaults_and_immutable_template() -> None:
    c = Cluster(nodes=1, components=[])
    created = c.client.create(job())
    spec = created["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"], spec["completionMode"],
            spec["suspend"], spec["podReplacementPolicy"]) == (1, 1, 6, "NonIndexed", False,
                                                             "TerminatingOrFailed")
    uid = created["metadata"]["uid"]
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    changed = dict(created, spec=dict(spec, completions=5))
    with pytest.raises(ApiError) as err:
        c.client.update(changed)
    assert "spec.completions: Invalid value: 5: field is immutable" in err.value.message
    wrong = job("other")
    wrong["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": "nope"}}
    with pytest.raises(ApiError) as err:
        c.client.create(wrong)
    assert "`selector` not auto-generated" in err.value.message


def test_the_served_table_has_print_jobs_columns() -> None:
    c = Cluster(nodes=1)
    c.apply(job(parallelism=2, completions=None))
    c.run(3)
    table = c.client.list("jobs", as_table=True)
    assert [col["name"] for col in table["columnDefinitions"]] == \
        ["Name", "Status", "Completions", "Duration", "Age"]
    assert table["rows"][0]["cells"][:3] == ["pi", "Running", "0/1 of 2"]


def test_kubectl_describe_job() -> None:
    c = Cluster(nodes=1)
    c.apply(job(completions=2, ttlSecondsAfterFinished=600))
    run_until_finished(c)
    out = str(c.kubectl("describe job pi"))
    for line in ("Parallelism:      1", "Completions:      2", "Completion Mode:  NonIndexed",
                 "Suspend:          false", "Backoff Limit:    6", "TTL Seconds After Finished:  600",
                 "Pods Statuses:    0 Active (0 Ready) / 2 Succeeded / 0 Failed"):
        assert any(row.split() == line.split() for row in out.splitlines()), (line, out)
    assert "Normal  Completed" in out and "Job completed" in out


def test_lower_parallelism_deletes_pods_without_counting_failures() -> None:
    """deleteJobPods: pods removed for a smaller parallelism lose the finalizer first."""
    c = Cluster(nodes=2)
    c.apply(job(behavior="exit=300", parallelism=3, completions=6))
    c.run(5)
    assert c.get("jobs", "pi")["status"]["active"] == 3
    c.client.patch("jobs", "pi", {"spec": {"parallelism": 1}})
    c.run(40)
    status = c.get("jobs", "pi")["status"]
    assert status["active"] == 1 and "failed" not in status
    assert len([p for p in c.get("pods") if not p["metadata"].get("deletionTimestamp")]) == 1


def test_suspend_deletes_active_pods_and_resume_makes_them_again() -> None:
    c = Cluster(nodes=1)
    c.apply(job(behavior="exit=300", parallelism=2, completions=2))
    c.run(5)
    c.client.patch("jobs", "pi", {"spec": {"suspend": True}})
    c.run(40)
    assert c.get("pods") == [] and "active" not in c.get("jobs", "pi")["status"]
    c.client.patch("jobs", "pi", {"spec": {"suspend": False}})
    c.run(5)
    assert c.get("jobs", "pi")["status"]["active"] == 2


def test_a_huge_parallelism_creates_500_pods_per_batched_sync() -> None:
    """manageJob creates at most MaxPodCreateDeletePerSync (500) pods per sync, in slow-start
    batches, and updateJob batches a status-only update (same generation) by syncJobBatchPeriod:
    the controller's own status write does not resync the Job at once, so a parallelism of 10^6
    costs 500 creates per virtual second instead of never letting the clock move. The controller
    manager's client runs unthrottled here: at its 20 QPS the creates, not the cap, would pace it."""
    c = Cluster(nodes=1, client_connection={"controller-manager": {"qps": -1, "burst": 0}})
    c.apply(job(behavior="exit=300", parallelism=10**6, completions=10**6))
    counts = []
    for _ in range(3):
        c.run(1)
        counts.append(len(c.get("pods", label_selector="batch.kubernetes.io/job-name=pi")))
    assert counts == [500, 1000, 1500]
    assert c.get("jobs", "pi")["status"]["active"] == 1500
