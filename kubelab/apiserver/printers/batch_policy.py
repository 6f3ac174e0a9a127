"""`kubectl get cronjobs` and `kubectl get poddisruptionbudgets` columns.

pkg/printers/internalversion/printers.go (1.34): printCronJob (NAME SCHEDULE TIMEZONE SUSPEND
ACTIVE LAST SCHEDULE AGE, wide: CONTAINERS IMAGES SELECTOR; printBoolPtr: "<unset>" for an
unset suspend, "True" or "False" otherwise; "<none>" for no time zone and no last schedule) and
printPodDisruptionBudget (NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE; "N/A" for
the field that is not set), registered by add_handlers as printers.go's AddHandlers does.
Cells are the strings kubectl prints, as in internalversion.py.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.duration import human_duration
from kubelab.api.meta import parse_time
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["add_handlers", "format_label_selector"]


def format_label_selector(selector: Object | None) -> str:
    """metav1.FormatLabelSelector: "<none>" for no selector, "<none>" too when it is empty."""
    if selector is None:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or []:
        values = ",".join(e.get("values") or [])
        parts.append({"In": f"{e['key']} in ({values})", "NotIn": f"{e['key']} notin ({values})",
                      "Exists": e["key"], "DoesNotExist": f"!{e['key']}"}.get(e.get("operator"), ""))
    return ",".join(parts) or "<none>"


def _bool_ptr(value: object) -> str:
    """printBoolPtr."""
    return "<unset>" if value is None else ("True" if value else "False")


def _cron_job_row(cj: Object, now: float) -> list[str]:
    spec, st = cj.get("spec") or {}, cj.get("status") or {}
    last = st.get("lastScheduleTime")
    last_schedule = human_duration(now - parse_time(last)) if last else "<none>"
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    containers = ((job_spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [cj["metadata"]["name"], str(spec.get("schedule", "")),
            str(spec["timeZone"]) if spec.get("timeZone") is not None else "<none>",
            _bool_ptr(spec.get("suspend")), str(len(st.get("active") or [])), last_schedule,
            _age(cj, now), ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers),
            format_label_selector(job_spec.get("selector"))]


def _pdb_row(pdb: Object, now: float) -> list[str]:
    spec, st = pdb.get("spec") or {}, pdb.get("status") or {}
    return [pdb["metadata"]["name"],
            str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
            str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
            str(st.get("disruptionsAllowed", 0)), _age(pdb, now)]


def add_handlers(h: TableGenerator) -> None:
    h.table_handler("cronjobs", [
        column("Name", format_="name"), column("Schedule"), column("Timezone"),
        column("Suspend", "boolean"), column("Active", "integer"), column("Last Schedule"),
        column("Age"), column("Containers", priority=1), column("Images", priority=1),
        column("Selector", priority=1)], _cron_job_row)
    h.table_handler("poddisruptionbudgets", [
        column("Name", format_="name"), column("Min Available"), column("Max Unavailable"),
        column("Allowed Disruptions", "integer"), column("Age")], _pdb_row)
