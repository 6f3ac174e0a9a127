"""`kubectl describe` for CronJobs and PodDisruptionBudgets (k8s.io/kubectl pkg/describe/describe.go:
describeCronJob with describeJobTemplate and printActiveJobs, describePodDisruptionBudgetV1)."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.labels import selector_from_label_selector
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import (
    annotations_multiline,
    describe_events,
    labels_multiline,
    rfc1123z,
)
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["describe_cron_job", "describe_pod_disruption_budget"]


def _bool_ptr(value: object) -> str:
    return "<unset>" if value is None else ("True" if value else "False")


def _format_label_selector(selector: Object | None) -> str:
    """metav1.FormatLabelSelector."""
    if selector is None:
        return "<none>"
    return str(selector_from_label_selector(selector)) or "<none>"


def describe_cron_job(client: Client, cj: Object, events: list[Object], now: float) -> str:
    from kubelab.kubectl.describe.apps import describe_pod_template  # apps imports this module

    meta, spec, status = cj["metadata"], cj.get("spec") or {}, cj.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Schedule:\t{spec.get('schedule', '')}\n")
    w.write(0, f"Concurrency Policy:\t{spec.get('concurrencyPolicy', '')}\n")
    w.write(0, f"Suspend:\t{_bool_ptr(spec.get('suspend'))}\n")
    for field, label in (("successfulJobsHistoryLimit", "Successful Job History Limit"),
                         ("failedJobsHistoryLimit", "Failed Job History Limit")):
        value = spec.get(field)
        w.write(0, f"{label}:\t{value if value is not None else '<unset>'}\n")
    deadline = spec.get("startingDeadlineSeconds")
    w.write(0, f"Starting Deadline Seconds:\t{f'{deadline}s' if deadline is not None else '<unset>'}\n")
    # describeJobTemplate
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    selector = job_spec.get("selector")
    w.write(0, f"Selector:\t{selector_from_label_selector(selector) if selector else '<unset>'}\n")
    for field, label in (("parallelism", "Parallelism"), ("completions", "Completions")):
        value = job_spec.get(field)
        w.write(0, f"{label}:\t{value if value is not None else '<unset>'}\n")
    if job_spec.get("activeDeadlineSeconds") is not None:
        w.write(0, f"Active Deadline Seconds:\t{job_spec['activeDeadlineSeconds']}s\n")
    describe_pod_template(w, job_spec.get("template") or {})
    last = status.get("lastScheduleTime")
    w.write(0, f"Last Schedule Time:\t{rfc1123z(last) if last else '<unset>'}\n")
    active = status.get("active") or []
    w.write(0, "Active Jobs:\t" + (", ".join(j.get("name", "") for j in active) or "<none>") + "\n")
    describe_events(w, events, now)
    return w.text()


def describe_pod_disruption_budget(client: Client, pdb: Object, events: list[Object],
                                   now: float) -> str:
    meta, spec, status = pdb["metadata"], pdb.get("spec") or {}, pdb.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("minAvailable") is not None:
        w.write(0, f"Min available:\t{spec['minAvailable']}\n")
    elif spec.get("maxUnavailable") is not None:
        w.write(0, f"Max unavailable:\t{spec['maxUnavailable']}\n")
    selector = spec.get("selector")
    w.write(0, f"Selector:\t{_format_label_selector(selector) if selector is not None else '<unset>'}\n")
    w.write(0, "Status:\n")
    w.write(2, f"Allowed disruptions:\t{status.get('disruptionsAllowed', 0)}\n")
    w.write(2, f"Current:\t{status.get('currentHealthy', 0)}\n")
    w.write(2, f"Desired:\t{status.get('desiredHealthy', 0)}\n")
    w.write(2, f"Total:\t{status.get('expectedPods', 0)}\n")
    describe_events(w, events, now)
    return w.text()
