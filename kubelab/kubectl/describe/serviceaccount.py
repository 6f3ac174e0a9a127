"""`kubectl describe serviceaccount` (k8s.io/kubectl pkg/describe/describe.go
ServiceAccountDescriber, describeServiceAccount).

Name, Namespace, Labels, Annotations, then three lists in the order of their headers: the
account's imagePullSecrets, its mountable secrets (.secrets; one that does not exist is marked
` (not found)`), and its token Secrets (type kubernetes.io/service-account-token, annotated
with the account's name), each `<none>` when empty; then the events.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import (
    Describer,
    annotations_multiline,
    describe_events,
    labels_multiline,
)
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["SERVICE_ACCOUNT_DESCRIBERS", "describe_service_account"]

SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"


def describe_service_account(client: Client, sa: Object, events: list[Object], now: float) -> str:
    meta = sa["metadata"]
    namespace = meta.get("namespace", "")
    try:
        secrets = client.list("secrets", namespace).get("items") or []
    except ApiError:
        secrets = []
    existing = {s["metadata"]["name"] for s in secrets}
    tokens = sorted(s["metadata"]["name"] for s in secrets if s.get("type") == SERVICE_ACCOUNT_TOKEN
                    and (s["metadata"].get("annotations") or {}).get(SERVICE_ACCOUNT_NAME_KEY)
                    == meta["name"])
    pull = [str(r.get("name", "")) for r in sa.get("imagePullSecrets") or []]
    mountable = [str(r.get("name", "")) + ("" if r.get("name") in existing else " (not found)")
                 for r in sa.get("secrets") or []]
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{namespace}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    for header, names in (("Image pull secrets:", pull), ("Mountable secrets:", mountable),
                          ("Tokens:", tokens)):
        if not names:
            w.write(0, f"{header}\t<none>\n")
        for i, name in enumerate(names):
            w.write(0, f"{header if i == 0 else ''}\t{name}\n")
    describe_events(w, events, now)
    return w.text()


SERVICE_ACCOUNT_DESCRIBERS: dict[str, Describer] = {"serviceaccounts": describe_service_account}
