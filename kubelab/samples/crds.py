"""The custom kinds of notebook 08's exercises, as CustomResourceDefinitions.

- Website (web.kubelab.dev/v1, exercise 8.1): spec.image and spec.replicas; its operator owns a
  Deployment of that name and reports Ready with observedGeneration.
- LedgerLock (batch.kubelab.dev/v1, exercise 8.2): spec.book; its operator holds the book's lock
  in the outside ledger (kubelab/cluster/ledger.py) and releases it, through a finalizer, on delete.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object

__all__ = ["LEDGER_LOCK_CRD", "LOCK_FINALIZER", "WEBSITE_CRD", "ledger_lock", "website"]

LOCK_FINALIZER = "batch.kubelab.dev/release-lock"
_CONDITIONS = {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(group: str, kind: str, plural: str, spec: Object, status: Object,
         columns: list[Object]) -> Object:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "additionalPrinterColumns": columns,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": spec, "status": status}}}}]}}


WEBSITE_CRD = _crd(
    "web.kubelab.dev", "Website", "websites",
    {"type": "object", "properties": {
        "image": {"type": "string", "default": "nginx:1.27"},
        "replicas": {"type": "integer", "minimum": 0, "maximum": 20, "default": 1}}},
    {"type": "object", "properties": {"readyReplicas": {"type": "integer"},
                                      "observedGeneration": {"type": "integer"},
                                      "conditions": _CONDITIONS}},
    [{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
     {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
     {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])

LEDGER_LOCK_CRD = _crd(
    "batch.kubelab.dev", "LedgerLock", "ledgerlocks",
    {"type": "object", "required": ["book"], "properties": {"book": {"type": "string", "minLength": 1}}},
    {"type": "object", "properties": {"token": {"type": "string"}}},
    [{"name": "Book", "type": "string", "jsonPath": ".spec.book"},
     {"name": "Token", "type": "string", "jsonPath": ".status.token"}])


def website(name: str, replicas: int = 2, image: str = "nginx:1.27", namespace: str = "default") -> Object:
    return {"apiVersion": "web.kubelab.dev/v1", "kind": "Website",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "image": image}}


def ledger_lock(name: str, book: str, namespace: str = "default", **meta: Any) -> Object:
    return {"apiVersion": "batch.kubelab.dev/v1", "kind": "LedgerLock",
            "metadata": {"name": name, "namespace": namespace, **meta}, "spec": {"book": book}}
