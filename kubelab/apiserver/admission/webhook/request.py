"""The AdmissionReview the API server sends, and how it reads the answer.

Follows k8s.io/apiserver pkg/admission/plugin/webhook/request/admissionreview.go
(CreateV1AdmissionReview, VerifyAdmissionResponse). kubelab speaks only admission.k8s.io/v1,
which every webhook must list in admissionReviewVersions (kopf lists v1 and v1beta1).

    {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": ..., "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "requestKind": ..., "requestResource": ...,
        "name": "web", "namespace": "default", "operation": "CREATE",
        "userInfo": {"username": "kubernetes-admin", "groups": [...]},
        "object": {...}, "oldObject": null, "dryRun": false,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}

(subResource and requestSubResource only when there is one: Go leaves empty fields out.)

The answer is an AdmissionReview whose `response` has the same uid, `allowed`, and for a
mutating webhook an optional base64 JSONPatch (`patch`, with `patchType: JSONPatch`); `status`
explains a denial; `warnings` and `auditAnnotations` are passed on.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from dataclasses import dataclass, field
from typing import Any

from kubelab.apiserver.admission.chain import Attributes

__all__ = ["AdmissionResponse", "create_admission_review", "verify_admission_response"]

API_VERSION = "admission.k8s.io/v1"
OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


@dataclass
class AdmissionResponse:
    """request.AdmissionResponse: what the dispatchers use of the answer."""

    allowed: bool
    patch: list[Any] | None = None
    result: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)


def create_admission_review(uid: str, attrs: Attributes) -> dict[str, Any]:
    """CreateV1AdmissionReview: the request, with copies of the objects."""
    user = attrs.user
    kind = {"group": attrs.group, "version": attrs.version, "kind": attrs.kind}
    resource = {"group": attrs.group, "version": attrs.version, "resource": attrs.resource}
    options: dict[str, Any] | None = None
    if attrs.operation in OPTIONS_KIND:
        options = {"apiVersion": "meta.k8s.io/v1", "kind": OPTIONS_KIND[attrs.operation]}
        if attrs.dry_run:
            options["dryRun"] = ["All"]
    request: dict[str, Any] = {
        "uid": uid, "kind": kind, "resource": resource, "subResource": attrs.subresource,
        "requestKind": dict(kind), "requestResource": dict(resource),
        "requestSubResource": attrs.subresource,
        "name": attrs.name, "namespace": attrs.namespace, "operation": attrs.operation,
        "userInfo": {"username": user.name, "groups": list(user.groups)},
        "object": copy.deepcopy(attrs.object), "oldObject": copy.deepcopy(attrs.old_object),
        "dryRun": attrs.dry_run, "options": options,
    }
    # Go's `omitempty`: an empty subResource, name or namespace is left out, not sent as ""
    # (kopf tells "no subresource" from "" by that); object, oldObject and options are null.
    for key in ("subResource", "requestSubResource", "name", "namespace"):
        if not request[key]:
            del request[key]
    if not request["userInfo"]["groups"]:
        del request["userInfo"]["groups"]
    return {"apiVersion": API_VERSION, "kind": "AdmissionReview", "request": request}


def verify_admission_response(uid: str, mutating: bool, review: Any) -> AdmissionResponse:
    """VerifyAdmissionResponse; ValueError in upstream's words when the answer is not one."""
    review = review if isinstance(review, dict) else {}
    response = review.get("response")
    if not isinstance(response, dict):
        raise ValueError("webhook response was absent")
    if response.get("uid") != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    if review.get("apiVersion") != API_VERSION or review.get("kind") != "AdmissionReview":
        got = f'{review.get("apiVersion") or ""}, Kind={review.get("kind") or ""}'
        raise ValueError(f"expected webhook response of {API_VERSION}, Kind=AdmissionReview, "
                         f"got {got if got != ', Kind=' else '/, Kind='}")
    raw, patch_type = response.get("patch"), response.get("patchType")
    patch: list[Any] | None = None
    if mutating:
        if raw and patch_type is None:
            raise ValueError("webhook returned response.patch but not response.patchType")
        if not raw and patch_type is not None:
            raise ValueError("webhook returned response.patchType but not response.patch")
        if patch_type is not None and patch_type != "JSONPatch":
            raise ValueError(f'webhook returned invalid response.patchType of "{patch_type}"')
        if raw:
            patch = _decode_patch(raw)
    else:
        if raw:
            raise ValueError("validating webhook may not return response.patch")
        if patch_type is not None:
            raise ValueError("validating webhook may not return response.patchType")
    warnings = [str(w) for w in response.get("warnings") or [] if isinstance(w, str)]
    annotations = response.get("auditAnnotations")
    return AdmissionResponse(
        response.get("allowed") is True, patch,
        response.get("status") if isinstance(response.get("status"), dict) else None,
        warnings, {str(k): str(v) for k, v in annotations.items()}
        if isinstance(annotations, dict) else {})


def _decode_patch(raw: Any) -> list[Any]:
    """response.patch is base64 of a JSON array of RFC 6902 operations."""
    try:
        ops = json.loads(base64.b64decode(str(raw), validate=True))
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"cannot decode response.patch: {err}") from None
    if not isinstance(ops, list):
        raise ValueError("response.patch is not a JSON array of patch operations")
    return ops
