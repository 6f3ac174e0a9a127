"""The Table of APIServices: kube-aggregator pkg/registry/apiservice/etcd/etcd.go
(REST.ConvertToTable, getCondition).

    NAME                     SERVICE       AVAILABLE                 AGE
    v1alpha1.wardle.k8s.io   wardle/api    False (ServiceNotFound)   5s
    v1.apps                  Local         True                      2m
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["add_handlers"]


def _available(svc: Object) -> str:
    """The Available condition's status, with its reason when it is not True; Unknown without
    one."""
    for condition in (svc.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Available":
            status, reason = str(condition.get("status") or ""), condition.get("reason")
            return f"{status} ({reason})" if status != "True" and reason else status
    return "Unknown"


def _row(svc: Object, now: float) -> list[str]:
    service = (svc.get("spec") or {}).get("service")
    where = f"{service.get('namespace', '')}/{service.get('name', '')}" \
        if isinstance(service, dict) else "Local"
    return [svc["metadata"]["name"], where, _available(svc), _age(svc, now)]


def add_handlers(h: TableGenerator) -> None:
    h.table_handler("apiservices", [
        column("Name", format_="name"),
        column("Service", description="The reference to the service that hosts this API endpoint."),
        column("Available", description="Whether this service is available."),
        column("Age")], _row)
