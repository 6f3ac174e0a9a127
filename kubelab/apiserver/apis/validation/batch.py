"""batch/v1 rules: Jobs (notebook 08).

pkg/apis/batch/validation/validation.go: ValidateJob (ValidateGeneratedSelector,
ValidateJobSpec, validateJobSpec, validatePodFailurePolicy and its rules,
validatePodReplacementPolicy), ValidateJobSpecUpdate (the immutable fields) and
validateJobStatus. The words are upstream's.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    ParseError,
    field_duplicate,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.labels import selector_from_label_selector
from kubelab.apiserver.apis.validation.core import validate_pod_spec
from kubelab.apiserver.apis.validation.meta import validate_labels

__all__ = ["validate_job", "validate_job_status_update", "validate_job_update"]

NEGATIVE = "must be greater than or equal to 0"
MAX_PARALLELISM_FOR_INDEXED_JOB = 100000
ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]  # sets.List: sorted
OPERATORS = ["In", "NotIn"]
CONDITION_STATUSES = ["False", "True", "Unknown"]
# ValidateGeneratedSelector: what a generated selector must select.
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _nonnegative(spec: Object, field: str, path: str = "spec") -> list[FieldError]:
    value = spec.get(field)
    return [field_invalid(f"{path}.{field}", value, NEGATIVE)] \
        if isinstance(value, int) and value < 0 else []


def validate_generated_selector(job: Object) -> list[FieldError]:
    """ValidateGeneratedSelector: unless spec.manualSelector, the selector must select the
    controller-uid and job-name labels the API server put on the template."""
    spec, meta = _dict(job.get("spec")), _dict(job.get("metadata"))
    if spec.get("manualSelector") is True:
        return []
    labels = _dict(_dict(spec.get("template")).get("metadata")).get("labels")
    if not isinstance(labels, dict):
        return []
    errs = []
    for key, want in ((CONTROLLER_UID_LABEL, meta.get("uid")), (JOB_NAME_LABEL, meta.get("name"))):
        if labels.get(key) != want:
            errs.append(field_invalid(f"spec.template.metadata.labels[{key}]", labels.get(key),
                                      f"must be '{want}'"))
    try:
        selector = selector_from_label_selector(spec.get("selector"))
    except ParseError:
        return errs
    if not selector.matches({CONTROLLER_UID_LABEL: str(meta.get("uid")),
                             JOB_NAME_LABEL: str(meta.get("name"))}):
        errs.append(field_invalid("spec.selector", spec.get("selector"),
                                  "`selector` not auto-generated"))
    return errs


def validate_job(job: Object) -> list[FieldError]:
    """ValidateJob: the generated selector, then the spec."""
    return validate_generated_selector(job) + validate_job_spec(_dict(job.get("spec")))


def validate_job_spec(spec: Object, *, job_template: bool = False) -> list[FieldError]:
    """validateJobSpec, and with it ValidateJobSpec's selector check unless job_template (a
    CronJob's job template has no selector yet: ValidateJobTemplateSpec)."""
    errs: list[FieldError] = []
    for field in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                  "ttlSecondsAfterFinished"):
        errs += _nonnegative(spec, field)
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(field_not_supported("spec.completionMode", mode, ["NonIndexed", "Indexed"]))
    if mode == "Indexed":
        if spec.get("completions") is None:
            errs.append(field_required("spec.completions", "when completion mode is Indexed"))
        parallelism = spec.get("parallelism")
        if isinstance(parallelism, int) and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
            errs.append(field_invalid("spec.parallelism", parallelism,
                                      f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB}"
                                      " when completion mode is Indexed"))
    template = _dict(spec.get("template"))
    pod_spec = _dict(template.get("spec"))
    if spec.get("podFailurePolicy") is not None:
        errs += _pod_failure_policy(spec, pod_spec)
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        allowed = ["Failed"] if spec.get("podFailurePolicy") is not None else ["Failed",
                                                                               "TerminatingOrFailed"]
        if replacement not in allowed:
            errs.append(field_not_supported("spec.podReplacementPolicy", replacement, allowed))
    if job_template:
        errs += validate_labels(_dict(template.get("metadata")).get("labels") or {},
                                "spec.template.metadata.labels")
    else:
        errs += _selector_and_template(spec, template)
    errs += validate_pod_spec(pod_spec, "spec.template.spec")
    # SetDefaults_PodSpec may have made it Always: both that and "" are "not given".
    policy, path = pod_spec.get("restartPolicy") or "", "spec.template.spec.restartPolicy"
    if policy in ("Always", ""):
        errs.append(field_required(path, 'valid values: "OnFailure", "Never"'))
    elif policy not in ("OnFailure", "Never"):
        errs.append(field_not_supported(path, policy, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and policy != "Never":
        errs.append(field_invalid(path, policy,
                                  'only "Never" is supported when podFailurePolicy is specified'))
    return errs


def _selector_and_template(spec: Object, template: Object) -> list[FieldError]:
    """ValidateJobSpec: a selector is required, and must select the template's labels."""
    raw = spec.get("selector")
    labels = _dict(template.get("metadata")).get("labels") or {}
    errs = validate_labels(labels, "spec.template.metadata.labels")
    if raw is None:
        return [*errs, field_required("spec.selector")]
    errs += validate_labels(_dict(raw).get("matchLabels"), "spec.selector.matchLabels")
    try:
        selector = selector_from_label_selector(raw)
    except ParseError:
        return [*errs, field_invalid("spec.selector", raw, "invalid label selector")]
    if not selector.matches(labels):
        errs.append(field_invalid("spec.template.metadata.labels", labels,
                                  "`selector` does not match template `labels`"))
    return errs


def _pod_failure_policy(spec: Object, pod_spec: Object) -> list[FieldError]:
    """validatePodFailurePolicy and validatePodFailurePolicyRule."""
    names = {c.get("name") for key in ("containers", "initContainers")
             for c in pod_spec.get(key) or () if isinstance(c, dict)}
    errs: list[FieldError] = []
    for i, rule in enumerate(_dict(spec.get("podFailurePolicy")).get("rules") or ()):
        rule, path = _dict(rule), f"spec.podFailurePolicy.rules[{i}]"
        action = rule.get("action")
        if not action:
            errs.append(field_required(f"{path}.action", f"valid values: {_go_list(ACTIONS)}"))
        elif action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            errs.append(field_invalid(f"{path}.action", action,
                                      "requires the backoffLimitPerIndex to be set"))
        elif action not in ACTIONS:
            errs.append(field_not_supported(f"{path}.action", action, ACTIONS))
        on_exit, on_conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
        if on_exit is not None:
            errs += _on_exit_codes(_dict(on_exit), f"{path}.onExitCodes", names)
        for j, pattern in enumerate(on_conditions or ()):
            status = _dict(pattern).get("status")
            status_path = f"{path}.onPodConditions[{j}].status"
            if not status:
                errs.append(field_required(status_path, f"valid values: {_go_list(CONDITION_STATUSES)}"))
            elif status not in CONDITION_STATUSES:
                errs.append(field_not_supported(status_path, status, CONDITION_STATUSES))
        if on_exit is not None and on_conditions:
            errs.append(field_invalid(path, None, "specifying both OnExitCodes and OnPodConditions "
                                      "is not supported"))
        if on_exit is None and not on_conditions:
            errs.append(field_invalid(path, None, "specifying one of OnExitCodes and OnPodConditions "
                                      "is required"))
    return errs


def _go_list(values: list[str]) -> str:
    """fmt's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def _on_exit_codes(req: Object, path: str, names: set[Any]) -> list[FieldError]:
    """validatePodFailurePolicyRuleOnExitCodes."""
    errs: list[FieldError] = []
    operator = req.get("operator")
    if not operator:
        errs.append(field_required(f"{path}.operator", f"valid values: {_go_list(OPERATORS)}"))
    elif operator not in OPERATORS:
        errs.append(field_not_supported(f"{path}.operator", operator, OPERATORS))
    name = req.get("containerName")
    if name is not None and name not in names:
        errs.append(field_invalid(f"{path}.containerName", name, "must be one of the container or "
                                  "initContainer names in the pod template"))
    values = req.get("values") or []
    if not values:
        errs.append(field_invalid(f"{path}.values", values, "at least one value is required"))
    seen: set[int] = set()
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            errs.append(field_invalid(f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(field_duplicate(f"{path}.values[{j}]", value))
        seen.add(value)
    if any(a > b for a, b in pairwise(values)):
        errs.append(field_invalid(f"{path}.values", values, "must be ordered"))
    return errs


IMMUTABLE = ("completionMode", "podFailurePolicy", "selector", "template", "manualSelector")


def validate_job_update(job: Object, old: Object) -> list[FieldError]:
    """ValidateJobSpecUpdate: checked as on create, and these fields are kept."""
    errs = validate_job_spec(_dict(job.get("spec")))
    spec, old_spec = _dict(job.get("spec")), _dict(old.get("spec"))
    fields = IMMUTABLE if spec.get("completionMode") == "Indexed" else (*IMMUTABLE, "completions")
    for field in fields:
        if spec.get(field) != old_spec.get(field):
            errs.append(field_invalid(f"spec.{field}", spec.get(field), "field is immutable"))
    return errs


def validate_job_status_update(job: Object, old: Object) -> list[FieldError]:
    """validateJobStatus: counts are never negative."""
    status = _dict(job.get("status"))
    errs: list[FieldError] = []
    for field in ("active", "succeeded", "failed", "ready", "terminating"):
        errs += _nonnegative(status, field, "status")
    return errs
