# ruff: noqa: E501  (the table keeps upstream's one row per line)
"""cronjob_controllerv2_test.go's TestControllerV2SyncCronJob, transcribed as data: one
syncCronJob of a CronJob and its Jobs, against a fake client and event recorder (the test's
fakeJobControl, fakeCJControl and record.FakeRecorder), at a chosen time.

Each row: concurrencyPolicy, suspend, schedule, deadline, ranPreviously, stillActive, the Job's
scheduled time, now; then expectCreate, expectDelete, expectActive, expectedWarnings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.controllers.cronjob.cronjob_controllerv2 import ControllerV2
from kubelab.controllers.cronjob.utils import get_job_from_template2, to_seconds

Object = dict[str, Any]
A, F_, R = "Allow", "Forbid", "Replace"
T, F = True, False
ON_THE_HOUR, ERROR_SCHEDULE = "0 * * * ?", "obvious error schedule"
NO_DEAD, SHORT_DEAD, MEDIUM_DEAD, LONG_DEAD = None, 59, 2 * 60 * 60, 1000000


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


TOP = at("2016-05-19T10:00:00")
JUST_BEFORE_THE_HOUR, JUST_AFTER_THE_HOUR = at("2016-05-19T09:59:00"), at("2016-05-19T10:01:00")
JUST_BEFORE_THE_PRIOR_HOUR = at("2016-05-19T08:59:00")
JUST_AFTER_THE_PRIOR_HOUR = at("2016-05-19T09:01:00")
WEEK_AFTER_THE_HOUR = at("2016-05-26T10:00:00")
PAST_SHORT = JUST_AFTER_THE_HOUR + timedelta(minutes=SHORT_DEAD + 1)
P = JUST_AFTER_THE_PRIOR_HOUR

CASES = {
    "never ran, not valid schedule, A": (A, F, ERROR_SCHEDULE, NO_DEAD, F, F, P, JUST_BEFORE_THE_HOUR, F, F, 0, 1),
    "never ran, not valid schedule, F": (F_, F, ERROR_SCHEDULE, NO_DEAD, F, F, P, JUST_BEFORE_THE_HOUR, F, F, 0, 1),
    "never ran, not time, A": (A, F, ON_THE_HOUR, NO_DEAD, F, F, P, JUST_BEFORE_THE_HOUR, F, F, 0, 0),
    "never ran, not time, R": (R, F, ON_THE_HOUR, NO_DEAD, F, F, P, JUST_BEFORE_THE_HOUR, F, F, 0, 0),
    "never ran, is time, A": (A, F, ON_THE_HOUR, NO_DEAD, F, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "never ran, is time, F": (F_, F, ON_THE_HOUR, NO_DEAD, F, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "never ran, is time, R": (R, F, ON_THE_HOUR, NO_DEAD, F, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "never ran, is time, suspended": (A, T, ON_THE_HOUR, NO_DEAD, F, F, P, JUST_AFTER_THE_HOUR, F, F, 0, 0),
    "never ran, is time, past deadline": (A, F, ON_THE_HOUR, SHORT_DEAD, F, F, P, PAST_SHORT, F, F, 0, 0),
    "never ran, is time, not past deadline": (A, F, ON_THE_HOUR, LONG_DEAD, F, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "prev ran but done, not time, A": (A, F, ON_THE_HOUR, NO_DEAD, T, F, P, JUST_BEFORE_THE_HOUR, F, F, 0, 0),
    "prev ran but done, is time, A": (A, F, ON_THE_HOUR, NO_DEAD, T, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "prev ran but done, is time, F": (F_, F, ON_THE_HOUR, NO_DEAD, T, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "prev ran but done, is time, R": (R, F, ON_THE_HOUR, NO_DEAD, T, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "prev ran but done, is time, suspended": (A, T, ON_THE_HOUR, NO_DEAD, T, F, P, JUST_AFTER_THE_HOUR, F, F, 0, 0),
    "prev ran but done, is time, past deadline": (A, F, ON_THE_HOUR, SHORT_DEAD, T, F, P, JUST_AFTER_THE_HOUR, F, F, 0, 0),
    "prev ran but done, is time, not past deadline": (A, F, ON_THE_HOUR, LONG_DEAD, T, F, P, JUST_AFTER_THE_HOUR, T, F, 1, 0),
    "still active, not time, A": (A, F, ON_THE_HOUR, NO_DEAD, T, T, P, JUST_BEFORE_THE_HOUR, F, F, 1, 0),
    "still active, not time, F": (F_, F, ON_THE_HOUR, NO_DEAD, T, T, P, JUST_BEFORE_THE_HOUR, F, F, 1, 0),
    "still active, is time, A": (A, F, ON_THE_HOUR, NO_DEAD, T, T, P, JUST_AFTER_THE_HOUR, T, F, 2, 0),
    "still active, is time, F": (F_, F, ON_THE_HOUR, NO_DEAD, T, T, P, JUST_AFTER_THE_HOUR, F, F, 1, 0),
    "still active, is time, R": (R, F, ON_THE_HOUR, NO_DEAD, T, T, P, JUST_AFTER_THE_HOUR, T, T, 1, 0),
    "still active, is time, suspended": (A, T, ON_THE_HOUR, NO_DEAD, T, T, P, JUST_AFTER_THE_HOUR, F, F, 1, 0),
    "still active, is time, past deadline": (A, F, ON_THE_HOUR, SHORT_DEAD, T, T, P, JUST_AFTER_THE_HOUR, F, F, 1, 0),
    "still active, is time, not past deadline": (A, F, ON_THE_HOUR, LONG_DEAD, T, T, P, JUST_AFTER_THE_HOUR, T, F, 2, 0),
    # Too many missed starting times, and no deadline or a long one: a warning, then a Job.
    "prev ran but done, long overdue, not past deadline, A": (A, F, ON_THE_HOUR, LONG_DEAD, T, F, P, WEEK_AFTER_THE_HOUR, T, F, 1, 1),
    "prev ran but done, long overdue, not past deadline, F": (F_, F, ON_THE_HOUR, LONG_DEAD, T, F, P, WEEK_AFTER_THE_HOUR, T, F, 1, 1),
    "prev ran but done, long overdue, no deadline, R": (R, F, ON_THE_HOUR, NO_DEAD, T, F, P, WEEK_AFTER_THE_HOUR, T, F, 1, 1),
    "prev ran but done, long overdue, past medium deadline, A": (A, F, ON_THE_HOUR, MEDIUM_DEAD, T, F, P, WEEK_AFTER_THE_HOUR, T, F, 1, 0),
    "prev ran but done, long overdue, past short deadline, F": (F_, F, ON_THE_HOUR, SHORT_DEAD, T, F, P, WEEK_AFTER_THE_HOUR, T, F, 1, 0),
}


class FakeClient:
    """fakeJobControl and fakeCJControl: Jobs created and deleted are recorded."""

    def __init__(self, job: Object | None, real_cj: Object) -> None:
        self.job, self.real_cj = job, real_cj
        self.created: list[Object] = []
        self.deleted: list[str] = []

    def get(self, resource: str, name: str, namespace: str = "default") -> Object:
        if resource == "cronjobs":
            return self.real_cj
        if self.job is None:
            raise ApiError(404, "NotFound", f'jobs.batch "{name}" not found')
        return self.job

    def create(self, obj: Object, namespace: str = "") -> Object:
        self.created.append(obj)
        return {**obj, "metadata": {**obj["metadata"], "namespace": namespace, "uid": "5678",
                                    "resourceVersion": "1"}}

    def delete(self, resource: str, name: str, namespace: str = "default", **_: Any) -> Object:
        self.deleted.append(name)
        return {}


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Object, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self.now = to_seconds(now)


def cron_job() -> Object:
    """cronJob(): the test's CronJob."""
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {
        "name": "mycronjob", "namespace": "snazzycats", "uid": "1a2b3c",
        "creationTimestamp": rfc3339(to_seconds(JUST_BEFORE_THE_HOUR))},
        "spec": {"schedule": ON_THE_HOUR, "concurrencyPolicy": A, "jobTemplate": {
            "metadata": {"labels": {"a": "b"}, "annotations": {"x": "y"}},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}},
        "status": {}}


@pytest.mark.parametrize("name", list(CASES))
def test_controller_v2_sync_cron_job(name: str) -> None:
    (policy, suspend, schedule, deadline, ran_previously, still_active, job_time, now,
     expect_create, expect_delete, expect_active, expected_warnings) = CASES[name]
    cj = cron_job()
    cj["spec"].update(concurrencyPolicy=policy, suspend=suspend, schedule=schedule)
    if deadline is not None:
        cj["spec"]["startingDeadlineSeconds"] = deadline
    jobs: list[Object] = []
    job = None
    real_cj = {**cj, "status": {}}
    if ran_previously:
        cj["metadata"]["creationTimestamp"] = rfc3339(to_seconds(JUST_BEFORE_THE_PRIOR_HOUR))
        cj["status"]["lastScheduleTime"] = rfc3339(to_seconds(JUST_AFTER_THE_PRIOR_HOUR))
        job = get_job_from_template2(cj, job_time)
        job["metadata"].update(uid="1234", namespace="snazzycats", resourceVersion="7",
                               creationTimestamp=rfc3339(to_seconds(job_time)))
        job["status"] = {}
        if still_active:
            ref = {"kind": "Job", "namespace": "snazzycats", "name": job["metadata"]["name"],
                   "uid": "1234", "apiVersion": "batch/v1", "resourceVersion": "7"}
            cj["status"]["active"] = [ref]
            real_cj["status"] = {"active": [ref]}
        else:
            job["status"] = {"completionTime": rfc3339(to_seconds(job_time) + 10),
                             "conditions": [{"type": "Complete", "status": "True"}]}
        jobs.append(job)
    jm = ControllerV2.__new__(ControllerV2)
    client, recorder = FakeClient(job, real_cj), FakeRecorder()
    jm.client, jm.recorder, jm.clock = client, recorder, FakeClock(now)  # type: ignore[assignment]
    requeue_after, _ = jm.sync_cron_job(cj, jobs)

    assert len(client.created) == (1 if expect_create else 0)
    for created in client.created:
        (owner,) = created["metadata"]["ownerReferences"]
        assert (owner["apiVersion"], owner["kind"], owner["name"], owner["uid"],
                owner["controller"]) == ("batch/v1", "CronJob", "mycronjob", "1a2b3c", True)
    assert len(client.deleted) == (1 if expect_delete else 0)
    assert len(cj["status"].get("active") or []) == expect_active
    if ran_previously and not still_active:
        assert cj["status"]["lastSuccessfulTime"] == rfc3339(to_seconds(job_time) + 10)
    expected_events = int(expect_create) + int(expect_delete) + expected_warnings + \
        (1 if name == "still active, is time, F" else 0)
    assert len(recorder.events) == expected_events, recorder.events
    assert sum(1 for e in recorder.events if e[0] == "Warning") == expected_warnings
    if schedule != ERROR_SCHEDULE and not suspend:
        assert requeue_after is not None and requeue_after > 0
