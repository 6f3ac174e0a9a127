"""`kubectl describe quota` (k8s.io/kubectl pkg/describe/describe.go ResourceQuotaDescriber,
describeQuota, helpTextForResourceQuotaScope).

Name, Namespace, the scopes sorted with the help text of the four pod scopes, then the
"Resource Used Hard" table of status.hard in name order; a used quantity whose format differs
from the hard one's is printed in the hard one's. No events, as upstream.
"""

from __future__ import annotations

from decimal import Decimal

from kubelab.api import Object
from kubelab.api.quantity import Quantity
from kubelab.api.quota.resources import parse_resource_list
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import Describer
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["QUOTA_DESCRIBERS", "describe_quota"]

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
    meta, spec, status = quota["metadata"], quota.get("spec") or {}, quota.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    scopes = sorted(str(s) for s in spec.get("scopes") or ())
    if scopes:
        w.write(0, f"Scopes:\t{', '.join(scopes)}\n")
        for scope in scopes:
            if scope in SCOPE_HELP:
                w.write(0, f" * {SCOPE_HELP[scope]}\n")
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


QUOTA_DESCRIBERS: dict[str, Describer] = {"resourcequotas": describe_quota}
