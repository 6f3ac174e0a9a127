"""kubernetes/kubernetes pkg/controller/job's own test tables, as data, run against kubelab:
backoff_utils_test.go (TestNewBackoffRecord, TestGetFinishedTime, TestGetRemainingBackoffTime)
and pod_failure_policy_test.go (TestMatchPodFailurePolicy)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.meta import micro_time, rfc3339
from kubelab.controllers.job.backoff_utils import BackoffRecord, BackoffStore, get_finished_time
from kubelab.controllers.job.pod_failure_policy import match_pod_failure_policy

T = 1000.0  # upstream's defaultTestTime, in virtual seconds


def at(offset: float = 0.0) -> str:
    return micro_time(T + offset)


def finished_pod(phase: str, finished_at: str) -> dict[str, Any]:
    return {"metadata": {}, "status": {"phase": phase, "containerStatuses": [
        {"state": {"terminated": {"finishedAt": finished_at}}}]}}


MS = 0.001

# TestNewBackoffRecord: (stored record's (failures, last failure), succeeded pods' finish offsets,
# failed pods' finish offsets) -> the new record's (failures, last failure offset)
@pytest.mark.parametrize(("stored", "succeeded", "failed", "want"), [
    (None, [], [0], (1, 0)),                                   # one new failure
    (None, [], [0, -1 * MS], (2, 0)),                          # two new failures
    (None, [0], [-2 * MS, -1 * MS], (0, None)),                # two failures, then a success
    (None, [-2 * MS], [0, -4 * MS, -3 * MS, -1 * MS], (2, 0)),  # two failures, a success, two more
    ((2, None), [], [0], (3, 0)),                              # count 2 stored, one new failure
    (None, [0], [0], (0, None)),                               # success and failure at once
    (None, [], [], (0, None)),                                 # nothing new
    (None, [0], [], (0, None)),                                # one success
])
def test_new_backoff_record(stored: tuple[int, float | None] | None, succeeded: list[float],
                            failed: list[float], want: tuple[int, float | None]) -> None:
    store = BackoffStore()
    if stored is not None:
        store.update_backoff_record(BackoffRecord("key", *stored))
    record = store.new_backoff_record("key", [finished_pod("Succeeded", at(t)) for t in succeeded],
                                      [finished_pod("Failed", at(t)) for t in failed])
    failures, last = want
    assert record == BackoffRecord("key", failures, None if last is None else T + last)


def terminated(offset: float | None = None, name: str | None = None) -> dict[str, Any]:
    cs: dict[str, Any] = {"state": {"terminated": {} if offset is None else {"finishedAt": at(offset)}}}
    if name:
        cs["name"] = name
    return cs


RUNNING = {"state": {"running": {}}}

# TestGetFinishedTime: pod -> its finish time (offset from T)
@pytest.mark.parametrize(("pod", "want"), [
    pytest.param({"metadata": {}, "status": {"containerStatuses": [
        terminated(-1), terminated(0), terminated(-2)]}}, 0, id="all containers terminated"),
    pytest.param({"metadata": {"deletionTimestamp": rfc3339(T)}, "status": {"containerStatuses": [
        terminated(-1), RUNNING, terminated(-2)]}}, 0, id="one running: the deletionTimestamp"),
    pytest.param({"metadata": {"deletionTimestamp": rfc3339(T)}, "status": {"containerStatuses": [
        RUNNING]}}, 0, id="fallback to deletionTimestamp"),
    pytest.param({"metadata": {"deletionTimestamp": rfc3339(T), "deletionGracePeriodSeconds": 30},
                  "status": {"containerStatuses": [RUNNING]}}, -30,
                 id="deletionTimestamp less the grace period"),
    pytest.param({"metadata": {}, "status": {"containerStatuses": [terminated()], "conditions": [
        {"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": rfc3339(T)}]}},
        0, id="Ready=False: its lastTransitionTime"),
    pytest.param({"metadata": {"deletionTimestamp": rfc3339(T)}, "status": {
        "containerStatuses": [terminated()], "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(T - 30)}]}},
        0, id="Ready=True is skipped"),
    pytest.param({"metadata": {"creationTimestamp": rfc3339(T)}, "status": {
        "containerStatuses": [terminated()]}}, 0, id="fallback to creationTimestamp"),
    pytest.param({"metadata": {},
                  "spec": {"initContainers": [{"name": "sidecar", "restartPolicy": "Always"}]},
                  "status": {"containerStatuses": [terminated(-1)],
                             "initContainerStatuses": [terminated(0, "sidecar")]}},
                 0, id="a sidecar finishes last"),
])
def test_get_finished_time(pod: dict[str, Any], want: float) -> None:
    assert get_finished_time(pod) == T + want


# TestGetRemainingBackoffTime, with default backoff 5 s and max 700 s:
# (failures, last failure offset, now offset) -> remaining seconds
@pytest.mark.parametrize(("failures", "last", "now", "want"), [
    (0, None, 0, 0),
    (1, 0, 0, 5),
    (1, 0, 1, 4),
    (1, 0, 5, 0),
    (1, 0, 6, 0),
    (3, 0, 0, 20),
    (8, 0, 0, 640),          # not above maxBackoff
    (9, 0, 0, 700),          # capped at maxBackoff
])
def test_get_remaining_backoff_time(failures: int, last: float | None, now: float, want: float) -> None:
    record = BackoffRecord("key", failures, None if last is None else T + last)
    assert record.get_remaining_time(T + now, 5.0, 700.0) == want


META = {"namespace": "default", "name": "mypod"}


def exit_codes(action: str, operator: str, *values: int) -> dict[str, Any]:
    return {"action": action, "onExitCodes": {"operator": operator, "values": list(values)}}


def on_condition(action: str, ctype: str = "DisruptionTarget", status: str = "True") -> dict[str, Any]:
    return {"action": action, "onPodConditions": [{"type": ctype, "status": status}]}


def exited(*codes: tuple[str | None, int]) -> dict[str, Any]:
    return {"containerStatuses": [{**({"name": n} if n else {}),
                                   "state": {"terminated": {"exitCode": c}}} for n, c in codes]}


def with_condition(status: str = "True") -> dict[str, Any]:
    return {"conditions": [{"type": "DisruptionTarget", "status": status}]}


def fail_job_exit(code: int, index: int) -> str:
    return (f"Container main-container for pod default/mypod failed with exit code {code} "
            f"matching FailJob rule at index {index}")


# TestMatchPodFailurePolicy: (rules or None, pod status) -> (FailJob message, counts, action)
@pytest.mark.parametrize(("rules", "status", "want"), [
    pytest.param([exit_codes("UnknownAction", "In", 1, 2), exit_codes("FailJob", "In", 2, 3)],
                 exited(("main-container", 2)), (fail_job_exit(2, 1), True, "FailJob"),
                 id="unknown action on exit codes: skipped"),
    pytest.param([on_condition("UnkonwnAction"), on_condition("Ignore")], with_condition(),
                 (None, False, "Ignore"), id="unknown action on pod conditions: skipped"),
    pytest.param([exit_codes("Ignore", "UnknownOperator", 1, 2), exit_codes("FailJob", "In", 2, 3)],
                 exited(("main-container", 2)), (fail_job_exit(2, 1), True, "FailJob"),
                 id="unknown operator: no match"),
    pytest.param(None, exited((None, 2)), (None, True, None), id="no policy"),
    pytest.param([exit_codes("Ignore", "In", 1, 2, 3)], exited((None, 2)), (None, False, "Ignore"),
                 id="ignore on exit codes"),
    pytest.param([exit_codes("Ignore", "In", -1073741676, -1073741510)], exited((None, -1073741510)),
                 (None, False, "Ignore"), id="negative exit codes (Windows)"),
    pytest.param([exit_codes("FailJob", "In", 1, 2, 3)], exited(("main-container", 2)),
                 (fail_job_exit(2, 0), True, "FailJob"), id="FailJob on exit codes"),
    pytest.param([exit_codes("FailJob", "NotIn", 111)],
                 {"initContainerStatuses": [{"name": "init-container",
                                             "state": {"terminated": {"exitCode": 0}}}],
                  **exited(("main-container", 111), ("suppport-container", 0))},
                 (None, True, None), id="successful containers are skipped"),
    pytest.param([exit_codes("FailIndex", "In", 1, 2, 3)], exited((None, 2)), (None, True, "FailIndex"),
                 id="FailIndex on exit codes"),
    pytest.param([exit_codes("FailJob", "NotIn", 0)],
                 exited(("main-container", 1), ("suppport-container", 0)),
                 (fail_job_exit(1, 0), True, "FailJob"), id="NotIn 0"),
    pytest.param([exit_codes("Count", "In", 1, 2, 3), exit_codes("FailJob", "In", 4, 5, 6)],
                 exited(("main-container", 6)), (fail_job_exit(6, 1), True, "FailJob"),
                 id="the second rule, FailJob, matches"),
    pytest.param([exit_codes("Count", "In", 1, 2, 3)],
                 {"containerStatuses": [{"name": "foo"},
                                        {"name": "bar", "state": {"terminated": {"exitCode": 2}}}]},
                 (None, True, "Count"), id="count on exit codes"),
    pytest.param([on_condition("FailIndex")], with_condition(), (None, True, "FailIndex"),
                 id="FailIndex on pod conditions"),
    pytest.param([on_condition("Ignore")], with_condition(), (None, False, "Ignore"),
                 id="ignore on pod conditions"),
    pytest.param([on_condition("Ignore", status="False")], with_condition("False"),
                 (None, False, "Ignore"), id="ignore matches status=False"),
    pytest.param([on_condition("Ignore", status="Unknown")], with_condition("Unknown"),
                 (None, False, "Ignore"), id="ignore matches status=Unknown"),
    pytest.param([on_condition("Ignore", status="False")], with_condition("True"),
                 (None, True, None), id="pattern False, actual True: no match"),
    pytest.param([on_condition("Ignore", status="True")], with_condition("False"),
                 (None, True, None), id="pattern True, actual False: no match"),
    pytest.param([on_condition("Ignore")], with_condition("False"),
                 (None, True, None), id="default: status False does not match"),
    pytest.param([on_condition("FailJob")], with_condition(),
                 ("Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0",
                  True, "FailJob"), id="FailJob on pod conditions"),
    pytest.param([on_condition("Count")], with_condition(), (None, True, "Count"),
                 id="count on pod conditions"),
    pytest.param([exit_codes("Count", "NotIn", 8), exit_codes("Ignore", "In", 1, 2, 3),
                  exit_codes("FailJob", "NotIn", 5, 6, 7), on_condition("Count", "ResourceLimitExceeded"),
                  on_condition("Ignore")], exited((None, 32)), (None, True, "Count"),
                 id="the first matching rule wins"),
    pytest.param([{"name": "0", **on_condition("FailJob", "MaxFailedIndexesExceeded")},
                  {"name": "HostMaintenanceRule", **on_condition("Ignore")}], with_condition(),
                 (None, False, "Ignore"), id="the matching rule's action"),
])
def test_match_pod_failure_policy(rules: list[dict[str, Any]] | None, status: dict[str, Any],
                                  want: tuple[str | None, bool, str | None]) -> None:
    pod = {"metadata": dict(META), "status": {"phase": "Failed", **status}}
    policy = None if rules is None else {"rules": rules}
    assert match_pod_failure_policy(policy, pod) == want
