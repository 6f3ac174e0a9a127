"""batch/v1 CronJob rules: the CronJob half of pkg/apis/batch/validation/validation.go
(ValidateCronJobCreate, ValidateCronJobUpdate, validateCronJobSpec, validateScheduleFormat,
validateTimeZone, validateConcurrencyPolicy, ValidateJobTemplateSpec). The words are
upstream's; the schedule is parsed by robfig/cron's standard parser (kubelab/api/cron.py), and
the time zone is loaded as Go's time.LoadLocation would (zoneinfo, the system's tzdata).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from kubelab.api import Object
from kubelab.api.cron import CronError, load_location, parse_standard
from kubelab.api.errors import FieldError, field_invalid, field_not_supported, field_required
from kubelab.apiserver.apis.validation.batch import validate_job_spec

__all__ = ["validate_cron_job", "validate_cron_job_status_update", "validate_cron_job_update"]

NEGATIVE = "must be greater than or equal to 0"
CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
# https://data.iana.org/time-zones/theory.html#naming; 0-9 and + for legacy names.
VALID_TIME_ZONE_CHARACTERS = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
# The controller appends "-<minutes since the epoch>" (11 characters) to a Job's name.
MAX_CRON_JOB_NAME = 63 - 11


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def validate_cron_job(cj: Object) -> list[FieldError]:
    """ValidateCronJobCreate: the spec, and a name short enough for its Jobs' names."""
    errs = validate_cron_job_spec(_dict(cj.get("spec")), None)
    name = _dict(cj.get("metadata")).get("name")
    if isinstance(name, str) and len(name) > MAX_CRON_JOB_NAME:
        errs.append(field_invalid("metadata.name", name,
                                  f"must be no more than {MAX_CRON_JOB_NAME} characters"))
    return errs


def validate_cron_job_update(cj: Object, old: Object) -> list[FieldError]:
    """ValidateCronJobUpdate: no name length check, so old long-named CronJobs stay editable."""
    return validate_cron_job_spec(_dict(cj.get("spec")), _dict(old.get("spec")))


def validate_cron_job_spec(spec: Object, old_spec: Object | None) -> list[FieldError]:
    errs: list[FieldError] = []
    schedule = spec.get("schedule")
    if not schedule:
        errs.append(field_required("spec.schedule"))
    else:
        allow_tz = old_spec is not None and "TZ" in str(old_spec.get("schedule") or "")
        errs += validate_schedule_format(str(schedule), allow_tz, spec.get("timeZone"))
    deadline = spec.get("startingDeadlineSeconds")
    if isinstance(deadline, int) and deadline < 0:
        errs.append(field_invalid("spec.startingDeadlineSeconds", deadline, NEGATIVE))
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        errs += validate_time_zone(spec.get("timeZone"))
    policy = spec.get("concurrencyPolicy")
    if not policy:
        errs.append(field_required("spec.concurrencyPolicy"))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(field_not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    errs += validate_job_template_spec(_dict(spec.get("jobTemplate")))
    for field in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(field)
        if isinstance(value, int) and value < 0:  # zero is a valid limit
            errs.append(field_invalid(f"spec.{field}", value, NEGATIVE))
    return errs


def validate_schedule_format(schedule: str, allow_tz_in_schedule: bool,
                             time_zone: str | None) -> list[FieldError]:
    """validateScheduleFormat: robfig's parse error, and no TZ= in a new schedule."""
    errs: list[FieldError] = []
    try:
        parse_standard(schedule)
    except CronError as err:
        errs.append(field_invalid("spec.schedule", schedule, str(err)))
    if allow_tz_in_schedule and "TZ" in schedule and time_zone is not None:
        errs.append(field_invalid("spec.schedule", schedule,
                                  "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    elif not allow_tz_in_schedule and "TZ" in schedule:
        errs.append(field_invalid("spec.schedule", schedule,
                                  "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    return errs


def validate_time_zone(time_zone: Any) -> list[FieldError]:
    """validateTimeZone: an IANA name that the system's tzdata knows."""
    path = "spec.timeZone"
    if time_zone is None:
        return []
    if time_zone == "":
        return [field_invalid(path, time_zone, "timeZone must be nil or non-empty string")]
    for part in str(time_zone).split("/"):
        if part in (".", "..") or part.startswith("-") or \
                not VALID_TIME_ZONE_CHARACTERS.fullmatch(part):
            return [field_invalid(path, time_zone, f"unknown time zone {time_zone}")]
    errs: list[FieldError] = []
    if str(time_zone).lower() == "local":
        errs.append(field_invalid(path, time_zone, "timeZone must be an explicit time zone as "
                                  "defined in https://www.iana.org/time-zones"))
        return errs  # Go's LoadLocation("Local") succeeds
    try:
        load_location(str(time_zone))
    except CronError as err:
        errs.append(field_invalid(path, time_zone, str(err)))
    return errs


def validate_job_template_spec(template: Object) -> list[FieldError]:
    """ValidateJobTemplateSpec: the Job spec under spec.jobTemplate, without a selector."""
    spec = _dict(template.get("spec"))
    errs = [dataclasses.replace(e, field="spec.jobTemplate." + e.field)
            for e in validate_job_spec(spec, job_template=True)]
    if spec.get("selector") is not None:
        errs.append(field_invalid("spec.jobTemplate.spec.selector", spec["selector"],
                                  "`selector` will be auto-generated"))
    if spec.get("manualSelector") is True:
        errs.append(field_not_supported("spec.jobTemplate.spec.manualSelector", True,
                                        ["nil", "false"]))
    return errs


def validate_cron_job_status_update(cj: Object, old: Object) -> list[FieldError]:
    """The status strategy validates nothing beyond the object's metadata."""
    return []
