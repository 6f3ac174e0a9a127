"""What the API server does to a Job besides validating it (notebook 08).

- set_defaults_job: pkg/apis/batch/v1/defaults.go SetDefaults_Job (completions and parallelism
  1 when both are unset, backoffLimit 6, completionMode NonIndexed, suspend false,
  podReplacementPolicy Failed with a podFailurePolicy and TerminatingOrFailed without, a
  pod-condition rule's status True); defaults.py adds the pod template's.
- generate_selector: pkg/registry/batch/job/strategy.go PrepareForCreate's generateSelector:
  unless spec.manualSelector, the template gets the job-name and controller-uid labels (legacy
  and batch.kubernetes.io/ forms) and the selector matches batch.kubernetes.io/controller-uid.
  SetDefaults_Job gives a Job without labels its template's labels; upstream that happens on
  every decode, so a Job read back shows the generated labels too. kubelab copies them once,
  here, after they are generated: the stored object reads the same.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object

__all__ = ["CONTROLLER_UID_LABEL", "JOB_NAME_LABEL", "LEGACY_CONTROLLER_UID_LABEL",
           "LEGACY_JOB_NAME_LABEL", "generate_selector", "set_defaults_job"]

LEGACY_JOB_NAME_LABEL = "job-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def set_defaults_job(job: Object) -> None:
    spec = job.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    policy = spec.get("podFailurePolicy")
    for rule in _dict(policy).get("rules") or ():
        for pattern in _dict(rule).get("onPodConditions") or ():
            if isinstance(pattern, dict):
                pattern.setdefault("status", "True")
    spec.setdefault("podReplacementPolicy", "Failed" if policy is not None else "TerminatingOrFailed")


def generate_selector(job: Object) -> None:
    spec, meta = job.get("spec"), job["metadata"]
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    template = spec.setdefault("template", {})
    if not isinstance(template, dict):
        return
    template_meta = template.setdefault("metadata", {})
    if not isinstance(template_meta, dict):
        return
    labels = template_meta.get("labels")
    if not isinstance(labels, dict):
        labels = template_meta["labels"] = {}
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, meta.get("name", ""))  # a conflict is refused by validation
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, meta["uid"])
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID_LABEL, meta["uid"])
    if not meta.get("labels"):
        meta["labels"] = dict(labels)
