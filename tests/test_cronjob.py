"""CronJobs: robfig/cron's standard parser (kubelab/api/cron.py), the API's validation and the
v2 controller. The time tables are utils_test.go's TestMostRecentScheduleTime and
TestNextScheduleTimeDuration (pkg/controller/cronjob), transcribed as data; the controller runs
on a cluster's virtual clock."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kubelab.api.cron import CronError, parse_standard
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.cluster import Cluster
from kubelab.controllers.cronjob.utils import (
    MissedSchedules,
    most_recent_schedule_time,
    next_schedule_time_duration,
    to_seconds,
)

Object = dict[str, Any]
TOP = datetime(2016, 5, 19, 10, tzinfo=UTC)  # topOfTheHour()


def at(**delta: float) -> datetime:
    return TOP + timedelta(**delta)


def stamp(t: datetime) -> str:
    return rfc3339(to_seconds(t))


def cron_job(schedule: str, created: datetime = TOP, last: datetime | None = None,
             deadline: int | None = None) -> Object:
    cj: Object = {"metadata": {"name": "mycronjob", "creationTimestamp": stamp(created)},
                  "spec": {"schedule": schedule}, "status": {}}
    if last is not None:
        cj["status"]["lastScheduleTime"] = stamp(last)
    if deadline is not None:
        cj["spec"]["startingDeadlineSeconds"] = deadline
    return cj


NONE, FEW, MANY = MissedSchedules.NONE, MissedSchedules.FEW, MissedSchedules.MANY
# name, cron job, includeSDS, now, expected earliest, expected most recent, missed
MOST_RECENT = [
    ("now before next schedule", cron_job("0 * * * *"), False, at(seconds=30), TOP, None, NONE),
    ("now just after next schedule", cron_job("0 * * * *"), False, at(minutes=61), TOP,
     at(minutes=60), NONE),
    ("missed 5 schedules", cron_job("0 * * * *", created=at(seconds=10)), False, at(minutes=301),
     at(seconds=10), at(minutes=300), FEW),
    ("complex schedule", cron_job("30 6-16/4 * * 1-5", last=at(minutes=30)), False,
     at(hours=24, minutes=31), at(minutes=30), at(hours=24, minutes=30), FEW),
    ("another complex schedule", cron_job("30 10,11,12 * * 1-5", last=at(minutes=30)), False,
     at(hours=30, minutes=30), at(minutes=30), None, FEW),
    ("complex schedule with longer diff between executions",
     cron_job("30 6-16/4 * * 1-5", last=at(minutes=30)), False, at(hours=96, minutes=31),
     at(minutes=30), at(hours=96, minutes=30), FEW),
    ("complex schedule with shorter diff between executions", cron_job("30 6-16/4 * * 1-5"),
     False, at(hours=24, minutes=31), TOP, at(hours=24, minutes=30), FEW),
    ("@every schedule", cron_job("@every 1h", created=at(minutes=-59), last=at(minutes=1),
                                 deadline=10), False, at(days=7), at(minutes=1),
     at(days=6, hours=23, minutes=1), MANY),
    ("earliestTime being CreationTimestamp and LastScheduleTime",
     cron_job("0 * * * *", last=TOP), False, at(seconds=30), TOP, None, NONE),
    ("earliestTime being LastScheduleTime", cron_job("*/5 * * * *", last=at(minutes=30)), False,
     at(minutes=31), at(minutes=30), None, NONE),
    ("earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
     cron_job("*/5 * * * *", last=at(minutes=30), deadline=60), False, at(minutes=31),
     at(minutes=30), None, NONE),
    ("earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)",
     cron_job("*/5 * * * *", last=at(minutes=30), deadline=60), True, at(minutes=32),
     at(minutes=31), None, NONE),
]


@pytest.mark.parametrize(("name", "cj", "sds", "now", "earliest", "recent", "missed"), MOST_RECENT,
                         ids=[case[0] for case in MOST_RECENT])
def test_most_recent_schedule_time(name: str, cj: Object, sds: bool, now: datetime,
                                   earliest: datetime, recent: datetime | None,
                                   missed: MissedSchedules) -> None:
    got = most_recent_schedule_time(cj, now, parse_standard(cj["spec"]["schedule"]), sds)
    assert got == (earliest, recent, missed, None)


def test_a_rogue_schedule_is_an_error() -> None:
    """"59 23 31 2 *" parses, but February 31st never comes."""
    cj = cron_job("59 23 31 2 *", created=at(seconds=10))
    _, recent, _, err = most_recent_schedule_time(cj, at(hours=1), parse_standard("59 23 31 2 *"),
                                                  False)
    assert recent is None and err == "time difference between two schedules is less than 1 second"


NEXT_DURATION = [
    ("complex schedule skipping weekend", cron_job("30 6-16/4 * * 1-5", last=at(minutes=30)),
     at(hours=24, minutes=31), timedelta(hours=3, minutes=59)),
    ("another complex schedule skipping weekend",
     cron_job("30 10,11,12 * * 1-5", last=at(minutes=30)), at(hours=30, minutes=30),
     timedelta(hours=66)),
    ("once a week cronjob, missed two runs", cron_job("0 12 * * 4", last=at(hours=2)),
     at(days=19, hours=1, minutes=30), timedelta(hours=48, minutes=30)),
    ("no previous run of a cronjob", cron_job("0 12 * * 5"), at(hours=6), timedelta(hours=20)),
]


@pytest.mark.parametrize(("name", "cj", "now", "expected"), NEXT_DURATION,
                         ids=[case[0] for case in NEXT_DURATION])
def test_next_schedule_time_duration(name: str, cj: Object, now: datetime,
                                     expected: timedelta) -> None:
    got = next_schedule_time_duration(cj, now, parse_standard(cj["spec"]["schedule"]))
    assert got == pytest.approx(expected.total_seconds() + 0.1)


@pytest.mark.parametrize(("spec", "message"), [
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("@every 1d", 'failed to parse duration @every 1d: time: unknown unit "d" in duration "1d"'),
    ("", "empty spec string"),
])
def test_robfig_parse_errors(spec: str, message: str) -> None:
    with pytest.raises(CronError) as err:
        parse_standard(spec)
    assert str(err.value) == message


def test_next_reads_names_descriptors_days_and_zones() -> None:
    wed = datetime(2025, 1, 1, tzinfo=UTC)  # a Wednesday
    assert parse_standard("0 0 13 * FRI").next(wed) == datetime(2025, 1, 3, tzinfo=UTC)  # or
    assert parse_standard("0 0 * * FRI").next(wed) == datetime(2025, 1, 3, tzinfo=UTC)
    assert parse_standard("0 0 13 * *").next(wed) == datetime(2025, 1, 13, tzinfo=UTC)
    assert parse_standard("@weekly").next(wed) == datetime(2025, 1, 5, tzinfo=UTC)  # Sunday
    assert parse_standard("@monthly").next(wed) == datetime(2025, 2, 1, tzinfo=UTC)
    assert parse_standard("0 0 1 jan *").next(wed) == datetime(2026, 1, 1, tzinfo=UTC)
    paris = ZoneInfo("Europe/Paris")
    at_9 = parse_standard("TZ=Europe/Paris 0 9 * * *").next(wed)
    assert at_9 == datetime(2025, 1, 1, 9, tzinfo=paris) and at_9.utcoffset() == timedelta(0)
    # 02:30 does not exist in Paris on 30 March 2025 (clocks go from 02:00 to 03:00): skipped.
    night = parse_standard("TZ=Europe/Paris 30 2 * * *")
    assert night.next(datetime(2025, 3, 29, 12, tzinfo=UTC)) == datetime(2025, 3, 31, 0, 30,
                                                                         tzinfo=UTC)


# ------------------------------------------------------------------ the API


def cron(name: str = "hello", schedule: str = "*/15 * * * *", behavior: str = "run",
         **spec: Any) -> Object:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, **spec, "jobTemplate": {"spec": {"template": {
                "metadata": {"annotations": {"kubelab.dev/behavior": behavior}},
                "spec": {"restartPolicy": "OnFailure",
                         "containers": [{"name": "main", "image": "busybox:1.36"}]}}}}}}


def refused(c: Cluster, obj: Object) -> str:
    with pytest.raises(ApiError) as err:
        c.client.create(obj)
    assert err.value.code == 422
    return err.value.message


def test_defaults_and_validation_in_upstreams_words() -> None:
    c = Cluster(nodes=0, components=[])
    spec = c.client.create(cron())["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    assert "backoffLimit" not in spec["jobTemplate"]["spec"]  # only a Job gets SetDefaults_Job
    assert refused(c, cron("a", "61 * * * *", timeZone="Europe/Pariss")) == (
        'CronJob.batch "a" is invalid: [spec.schedule: Invalid value: "61 * * * *": end of range '
        '(61) above maximum (59): 61, spec.timeZone: Invalid value: "Europe/Pariss": unknown time '
        'zone Europe/Pariss]')
    assert refused(c, cron("b", "TZ=UTC */5 * * * *")) == (
        'CronJob.batch "b" is invalid: spec.schedule: Invalid value: "TZ=UTC */5 * * * *": cannot '
        'use TZ or CRON_TZ in schedule, use timeZone field instead')
    assert "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones" \
        in refused(c, cron("c", timeZone="Local"))
    assert 'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", ' \
        '"Forbid", "Replace"' in refused(c, cron("d", concurrencyPolicy="Sometimes"))
    assert "metadata.name: Invalid value" in refused(c, cron("x" * 53))
    assert "must be no more than 52 characters" in refused(c, cron("x" * 53))
    bad_restart = cron("e")
    bad_restart["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert 'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: ' \
        '"OnFailure", "Never"' in refused(c, bad_restart)


# ------------------------------------------------------------------ the controller


def cron_events(c: Cluster) -> Counter[str]:
    return Counter(e["reason"] for e in c.get("events") for _ in range(e.get("count", 1))
                   if e["involvedObject"]["kind"] == "CronJob")


def test_a_day_of_schedules_replays_on_the_virtual_clock() -> None:
    """No kubelets: the Jobs never finish, and Allow lets them all run together."""
    c = Cluster(nodes=0, components=["controller-manager"])
    c.client.create(cron())
    c.run(24 * 3600 + 1)
    jobs = sorted(j["metadata"]["name"] for j in c.get("jobs"))
    assert len(jobs) == 96  # every quarter of an hour, 00:15 to 24:00
    start = int(datetime(2025, 1, 1, 0, 15, tzinfo=UTC).timestamp()) // 60
    assert jobs == [f"hello-{start + 15 * i}" for i in range(96)]
    first = c.get("jobs", jobs[0])
    assert first["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] \
        == "2025-01-01T00:15:00Z"
    owner = first["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "hello", True)
    status = c.get("cronjobs", "hello")["status"]
    assert len(status["active"]) == 96 and status["lastScheduleTime"] == "2025-01-02T00:00:00Z"
    assert cron_events(c)["SuccessfulCreate"] == 96
    row = str(c.kubectl("get cronjobs")).splitlines()
    assert row[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST",
                              "SCHEDULE", "AGE"]
    assert row[1].split() == ["hello", "*/15", "*", "*", "*", "*", "<none>", "False", "96",
                              "1s", "24h"]


def test_forbid_skips_while_a_job_runs_and_replace_replaces_it() -> None:
    c = Cluster(nodes=0, components=["controller-manager"])
    c.client.create(cron("forbid", "@hourly", concurrencyPolicy="Forbid"))
    c.client.create(cron("replace", "@hourly", concurrencyPolicy="Replace"))
    c.run(3 * 3600 + 1)
    forbid = [j for j in c.get("jobs") if j["metadata"]["name"].startswith("forbid-")]
    replace = [j for j in c.get("jobs") if j["metadata"]["name"].startswith("replace-")
               and not j["metadata"].get("deletionTimestamp")]
    assert len(forbid) == 1 and len(replace) == 1
    assert replace[0]["metadata"]["annotations"][
        "batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2025-01-01T03:00:00Z"
    events = [(e["involvedObject"]["name"], e["reason"], e["message"]) for e in c.get("events")
              if e["involvedObject"]["kind"] == "CronJob"]
    assert ("forbid", "JobAlreadyActive", "Not starting job because prior execution is running "
            "and concurrency policy is Forbid") in events
    assert sum(1 for e in events if e[:2] == ("replace", "SuccessfulDelete")) == 2


def test_suspend_and_a_time_zone() -> None:
    c = Cluster(nodes=0, components=["controller-manager"])
    c.client.create(cron("paused", "*/5 * * * *", suspend=True))
    c.client.create(cron("nyc", "0 9 * * *", timeZone="America/New_York"))
    c.run(24 * 3600)
    names = [j["metadata"]["name"] for j in c.get("jobs")]
    assert not any(n.startswith("paused-") for n in names)
    (nyc,) = [j for j in c.get("jobs") if j["metadata"]["name"].startswith("nyc-")]
    assert nyc["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == \
        "2025-01-01T09:00:00-05:00"
    assert c.get("cronjobs", "nyc")["status"]["lastScheduleTime"] == "2025-01-01T14:00:00Z"


def test_missed_schedules_after_the_controller_manager_was_down() -> None:
    c = Cluster(nodes=0, components=["controller-manager"])
    c.client.create(cron("every-minute", "* * * * *"))
    c.client.create(cron("deadline", "* * * * *", startingDeadlineSeconds=10))
    c.run(90)
    c.faults.crash("controller-manager")
    c.run(3 * 3600)  # 180 schedules missed
    c.faults.restart("controller-manager")
    c.run(30)
    events = [(e["involvedObject"]["name"], e["reason"], e["message"]) for e in c.get("events")
              if e["involvedObject"]["kind"] == "CronJob"]
    assert ("every-minute", "TooManyMissedTimes", "too many missed start times. Set or decrease "
            ".spec.startingDeadlineSeconds or check clock skew") in events
    # Only the most recent missed time is started, whatever the count.
    assert sum(1 for j in c.get("jobs") if j["metadata"]["name"].startswith("every-minute-")) == 2
    # Within startingDeadlineSeconds only a schedule of the last 10 s counts: the restart came
    # later than that after the last minute, so nothing starts and nothing is "too many".
    assert not any(e[0] == "deadline" and e[1] == "TooManyMissedTimes" for e in events)
    assert sum(1 for j in c.get("jobs") if j["metadata"]["name"].startswith("deadline-")) == 1


def test_history_limits_keep_the_newest_finished_jobs() -> None:
    c = Cluster(nodes=1)
    c.client.create(cron("tidy", "*/10 * * * *", behavior="exit=5",
                         successfulJobsHistoryLimit=2))
    c.run(2 * 3600 + 60)
    jobs = sorted(j["metadata"]["name"] for j in c.get("jobs"))
    assert len(jobs) == 2  # twelve ran; the two newest are kept
    status = c.get("cronjobs", "tidy")["status"]
    assert status.get("active", []) == []
    assert status["lastScheduleTime"] == "2025-01-01T02:00:00Z"
    assert status["lastSuccessfulTime"] > "2025-01-01T02:00:00Z"
    counts = cron_events(c)
    assert counts["SuccessfulCreate"] == 12 and counts["SuccessfulDelete"] == 10
    assert counts["SawCompletedJob"] == 12


# ------------------------------------------------------------------ kubectl


def test_kubectl_create_cronjob_job_from_it_and_describe() -> None:
    c = Cluster(nodes=0, components=["controller-manager"])
    assert str(c.kubectl("create cronjob backup --image=busybox:1.36 --schedule='*/30 * * * *' "
                         "-- sh -c 'echo hi'")) == "cronjob.batch/backup created"
    template = c.get("cronjobs", "backup")["spec"]["jobTemplate"]
    (container,) = template["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["command"]) == ("backup", ["sh", "-c", "echo hi"])
    assert template["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert str(c.kubectl("create job backup-now --from=cronjob/backup")) == \
        "job.batch/backup-now created"
    job = c.get("jobs", "backup-now")
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "backup", True)
    assert str(c.kubectl("create cronjob nightly --image=busybox")) == \
        "error: --schedule must be specified"
    assert str(c.kubectl("create job nothing")) == "error: either --image or --from must be specified"
    c.run(1800 + 1)
    out = str(c.kubectl("describe cronjob backup"))
    lines = [line.split(":", 1)[0] for line in out.splitlines() if line and line[0] != " "]
    assert lines[:14] == ["Name", "Namespace", "Labels", "Annotations", "Schedule",
                          "Concurrency Policy", "Suspend", "Successful Job History Limit",
                          "Failed Job History Limit", "Starting Deadline Seconds", "Selector",
                          "Parallelism", "Completions", "Pod Template"]
    assert "Last Schedule Time:  Wed, 01 Jan 2025 00:30:00 +0000" in out
    assert "Active Jobs:         backup-28928190" in out
    assert "Created job backup-28928190" in out  # the event
    # The manual Job is controlled by the CronJob without being in its active list.
    assert "Saw a job that the controller did not create or forgot: backup-now" in out
