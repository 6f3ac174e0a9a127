"""`kubectl describe quota` and `kubectl describe namespace` (k8s.io/kubectl pkg/describe/
describe.go: ResourceQuotaDescriber, describeQuota, helpTextForResourceQuotaScope;
NamespaceDescriber, describeNamespace, DescribeResourceQuotas).

A quota: Name, Namespace, the scopes sorted with the help text of the four pod scopes, then the
"Resource Used Hard" table of status.hard in name order; a used quantity whose format differs
from the hard one's is printed in the hard one's. No events, as upstream.

A namespace: Name, Labels, Annotations, Status (and its conditions), then its quotas ("No
resource quota." when it has none). The LimitRange section is left out, as the describer does
when the server serves no limitranges (a 404), which kubelab does not.
"""

from __future__ import annotations

from decimal import Decimal

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.quantity import Quantity
from kubelab.api.quota.resources import parse_resource_list
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import (
    Describer,
    annotations_multiline,
    labels_multiline,
    rfc1123z,
)
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["QUOTA_DESCRIBERS", "describe_namespace", "describe_quota", "describe_resource_quotas"]

SCOPE_HELP = {
    "Terminating": "Matches all pods that have an active deadline. These pods have a limited "
                   "lifespan on a node before being actively terminated by the system.",
    "NotTerminating": "Matches all pods that do not have an active deadline. These pods usually "
                      "include long running pods whose container command is not expected to "
                      "terminate.",
    "BestEffort": "Matches all pods that do not have resource requirements set. These pods "
                  "have a best effort quality of service.",
    "NotBestEffort": "Matches all pods that have at least one resource requirement set. These "
                     "pods have a burstable or guaranteed quality of service.",
}


def describe_quota(client: Client, quota: Object, events: list[Object], now: float) -> str:
    meta, status = quota["metadata"], quota.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    _scopes(w, 0, quota, " * ")
    w.write(0, "Resource\tUsed\tHard\n")
    w.write(0, "--------\t----\t----\n")
    hard, used = parse_resource_list(status.get("hard")), parse_resource_list(status.get("used"))
    for name in sorted(hard):
        h = hard[name]
        u = used.get(name, Quantity(Decimal(0)))
        if u.format != h.format:
            u = Quantity(Decimal(u.value()), h.format)
        w.write(0, f"{name}\t{u}\t{h}\n")
    return w.text()


def _scopes(w: PrefixWriter, level: int, quota: Object, bullet: str) -> None:
    scopes = sorted(str(s) for s in (quota.get("spec") or {}).get("scopes") or ())
    if scopes:
        w.write(level, f"Scopes:\t{', '.join(scopes)}\n")
        for scope in scopes:
            if scope in SCOPE_HELP:
                w.write(level, f"{bullet}{SCOPE_HELP[scope]}\n")


def describe_resource_quotas(w: PrefixWriter, quotas: list[Object]) -> None:
    """DescribeResourceQuotas: each quota by name, its scopes and Resource/Used/Hard."""
    if not quotas:
        w.write(0, "No resource quota.\n")
        return
    w.write(0, "Resource Quotas\n")
    for quota in sorted(quotas, key=lambda q: q["metadata"]["name"]):
        w.write(1, f"Name:\t{quota['metadata']['name']}\n")
        _scopes(w, 1, quota, "* ")
        w.write(1, "Resource\tUsed\tHard\n")
        w.write(1, "--------\t---\t---\n")
        status = quota.get("status") or {}
        hard, used = parse_resource_list(status.get("hard")), parse_resource_list(status.get("used"))
        for name in sorted(hard):
            w.write(1, f"{name}\t{used.get(name, Quantity(Decimal(0)))}\t{hard[name]}\n")


def describe_namespace(client: Client, ns: Object, events: list[Object], now: float) -> str:
    meta, status = ns["metadata"], ns.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Status:\t{status.get('phase', '')}\n")
    if status.get("conditions"):
        w.write(0, "Conditions:\n")
        w.write(1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
        w.write(1, "----\t------\t------------------\t------\t-------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type', '')}\t{c.get('status', '')}\t"
                       f"{rfc1123z(c.get('lastTransitionTime'))}\t{c.get('reason', '')}\t"
                       f"{c.get('message', '')}\n")
    try:
        quotas: list[Object] | None = client.list("resourcequotas", meta["name"])["items"]
    except ApiError as err:
        if err.code != 404:
            raise
        quotas = None  # the server serves no quotas: no section
    if quotas is not None:
        w.write(0, "\n")
        describe_resource_quotas(w, quotas)
    return w.text()


QUOTA_DESCRIBERS: dict[str, Describer] = {"resourcequotas": describe_quota,
                                          "namespaces": describe_namespace}
