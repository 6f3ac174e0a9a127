"""SelfSubjectAccessReview: "may I do this?", asked of the authorizer (`kubectl auth can-i`).

Nothing is stored. The API server runs the review through the same authorizer as every
request, for the user who sent it, and answers with the review and its status (allowed or
not), as pkg/registry/authorization/selfsubjectaccessreview/rest.go does. The review itself
needs only `create` on selfsubjectaccessreviews, which every authenticated user has
(system:basic-user upstream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import field_invalid, invalid
from kubelab.apiserver.auth.authn import MASTERS
from kubelab.apiserver.auth.rbac import AuthzAttributes
from kubelab.apiserver.endpoints.decode import decode_body

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext

__all__ = ["create_self_subject_access_review"]

_ONE_OF = "exactly one of nonResourceAttributes or resourceAttributes must be specified"


def create_self_subject_access_review(ctx: RequestContext, body: Any) -> Object:
    served = ctx.served
    ctx.enter("decode")
    review = decode_body(body, served.info, served.schema)
    ctx.enter("validation")
    spec = review.get("spec") or {}
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (resource is None) == (non_resource is None):  # validation.go ValidateSelfSubjectAccessReviewSpec
        raise invalid("SelfSubjectAccessReview", "", [field_invalid("spec", non_resource, _ONE_OF)],
                      "authorization.k8s.io")
    ctx.enter("storage")  # (nothing is stored: the authorizer answers)
    user = ctx.user
    if MASTERS in user.groups:
        allowed = True
    elif resource is not None:
        allowed = ctx.server.authorizer.authorize(AuthzAttributes(
            user, resource.get("verb", ""), resource.get("group", ""), resource.get("resource", ""),
            resource.get("subresource", ""), resource.get("namespace", ""), resource.get("name", "")))
    else:
        attributes = non_resource or {}
        allowed = ctx.server.authorizer.allows_non_resource(ctx.user, attributes.get("path", ""),
                                                            attributes.get("verb", ""))
    review["metadata"] = {"creationTimestamp": None}
    review["status"] = {"allowed": allowed}
    return review
