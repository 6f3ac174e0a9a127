"""The course's own admission webhooks, and the helpers a learner's webhook uses.

A webhook here is a function from an AdmissionReview (admission.k8s.io/v1) to an
AdmissionReview whose `response` answers it, as the HTTP handler of a real webhook server is
(kubernetes/kubernetes test/images/agnhost/webhook is the upstream example):

    def require_team(review):
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        if "team" not in labels:
            return denied(review, "every pod needs a team label")
        return allowed(review)

It is run by a pod of the image it is registered for (c.webhook_servers.register, in
kubelab/cluster/webhooks.py); manifests() writes the Deployment, Service and webhook
configuration that install it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

from kubelab.api import Object

__all__ = ["allowed", "default_labels", "denied", "manifests", "patched", "require_labels"]

Review = dict[str, Any]
Handler = Callable[[Review], Review]


def _answer(review: Review, response: dict[str, Any]) -> Review:
    uid = (review.get("request") or {}).get("uid", "")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": uid, **response}}


def allowed(review: Review, warnings: list[str] | None = None) -> Review:
    """Let the request through (with warnings for the client, if any)."""
    return _answer(review, {"allowed": True, **({"warnings": warnings} if warnings else {})})


def denied(review: Review, message: str, code: int = 403, reason: str = "Forbidden") -> Review:
    """Refuse the request; the client sees `admission webhook "<name>" denied the request: <message>`."""
    return _answer(review, {"allowed": False,
                            "status": {"code": code, "reason": reason, "message": message}})


def patched(review: Review, operations: list[dict[str, Any]]) -> Review:
    """Let the request through, changed by these JSONPatch (RFC 6902) operations."""
    if not operations:
        return allowed(review)
    patch = base64.b64encode(json.dumps(operations).encode()).decode()
    return _answer(review, {"allowed": True, "patchType": "JSONPatch", "patch": patch})


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")  # a JSON pointer's token


def default_labels(labels: Mapping[str, str]) -> Handler:
    """A mutating webhook: add each of `labels` that the object does not already have."""
    def mutate(review: Review) -> Review:
        obj = (review.get("request") or {}).get("object") or {}
        have = (obj.get("metadata") or {}).get("labels")
        if not isinstance(have, dict):
            return patched(review, [{"op": "add", "path": "/metadata/labels", "value": dict(labels)}])
        return patched(review, [{"op": "add", "path": f"/metadata/labels/{_escape(k)}", "value": v}
                                for k, v in labels.items() if k not in have])
    return mutate


def require_labels(*keys: str) -> Handler:
    """A validating webhook: refuse objects without every one of `keys` as a label."""
    def validate(review: Review) -> Review:
        obj = (review.get("request") or {}).get("object") or {}
        have = (obj.get("metadata") or {}).get("labels") or {}
        missing = [k for k in keys if k not in have]
        if missing:
            return denied(review, f"missing required label(s): {', '.join(missing)}")
        return allowed(review)
    return validate


def manifests(name: str, image: str, *, mutating: bool = False, namespace: str = "default",
              resources: tuple[str, ...] = ("pods",), operations: tuple[str, ...] = ("CREATE",),
              failure_policy: str = "Fail", timeout_seconds: int = 10, replicas: int = 1,
              namespace_selector: dict[str, Any] | None = None,
              path: str = "/admit") -> list[Object]:
    """A webhook's installation: a Deployment of `image`, a Service on port 443 in front of
    it, and a Mutating- or ValidatingWebhookConfiguration `name` whose one webhook,
    `<name>.kubelab.dev`, calls that Service for `operations` on core `resources`."""
    labels = {"app": name}
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    webhook: dict[str, Any] = {
        "name": f"{name}.kubelab.dev", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "failurePolicy": failure_policy, "timeoutSeconds": timeout_seconds,
        "clientConfig": {"service": {"namespace": namespace, "name": name, "path": path,
                                     "port": 443}},
        "rules": [{"operations": list(operations), "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": list(resources)}]}
    if namespace_selector is not None:
        webhook["namespaceSelector"] = namespace_selector
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": namespace},
         "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                      {"name": "webhook", "image": image,
                       "ports": [{"containerPort": 8443}]}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
         "spec": {"selector": labels, "ports": [{"port": 443, "targetPort": 8443}]}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
         "metadata": {"name": name}, "webhooks": [webhook]},
    ]
