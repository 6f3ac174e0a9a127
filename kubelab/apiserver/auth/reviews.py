"""The self reviews: who am I, may I do this, what may I do (`kubectl auth whoami|can-i`).

SelfSubjectAccessReview: "may I do this?", asked of the authorizer (`kubectl auth can-i`).
SelfSubjectReview (pkg/registry/authentication/selfsubjectreview/rest.go): the user the request
authenticated as, after impersonation (`kubectl auth whoami`). SelfSubjectRulesReview
(pkg/registry/authorization/selfsubjectrulesreview/rest.go): every rule RBAC grants the user in
a namespace, cluster-wide rules included (`kubectl auth can-i --list`); upstream's answer is
"incomplete" only where an authorizer cannot list its rules, and kubelab has only RBAC.

Nothing is stored. The API server runs the review through the same authorizer as every
request, for the user who sent it, and answers with the review and its status (allowed or
not), as pkg/registry/authorization/selfsubjectaccessreview/rest.go does. The review itself
needs only `create` on selfsubjectaccessreviews, which every authenticated user has
(system:basic-user upstream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import bad_request, field_invalid, invalid
from kubelab.apiserver.auth.authn import MASTERS, UserInfo
from kubelab.apiserver.auth.rbac import AuthzAttributes
from kubelab.apiserver.endpoints.decode import decode_body

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext

__all__ = ["create_self_subject_access_review", "create_self_subject_review",
           "create_self_subject_rules_review", "create_subject_access_review"]

_ONE_OF = "exactly one of nonResourceAttributes or resourceAttributes must be specified"


def create_subject_access_review(ctx: RequestContext, body: Any) -> Object:
    """SubjectAccessReview (pkg/registry/authorization/subjectaccessreview/rest.go): the same
    question for the user the spec names (user, groups, uid, extra), as the CSR approver asks
    it. validation.go ValidateSubjectAccessReviewSpec: a user or groups is required."""
    served = ctx.served
    ctx.enter("decode")
    review = decode_body(body, served.info, served.schema)
    spec = review.get("spec") or {}
    if not spec.get("user") and not spec.get("groups"):
        raise invalid("SubjectAccessReview", "", [field_invalid(
            "spec.user", spec.get("user", ""), "at least one of user or group must be specified")],
            "authorization.k8s.io")
    extra = tuple((k, tuple(v)) for k, v in sorted((spec.get("extra") or {}).items()))
    user = UserInfo(str(spec.get("user") or ""), tuple(spec.get("groups") or ()),
                    str(spec.get("uid") or ""), extra)
    return _access_review(ctx, review, user, "SubjectAccessReview")


def create_self_subject_access_review(ctx: RequestContext, body: Any) -> Object:
    served = ctx.served
    ctx.enter("decode")
    review = decode_body(body, served.info, served.schema)
    return _access_review(ctx, review, ctx.user, "SelfSubjectAccessReview")


def _access_review(ctx: RequestContext, review: Object, user: UserInfo, kind: str) -> Object:
    """The authorizer's answer for user, as the review's status."""
    ctx.enter("validation")
    spec = review.get("spec") or {}
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (resource is None) == (non_resource is None):  # validation.go ValidateSelfSubjectAccessReviewSpec
        raise invalid(kind, "", [field_invalid("spec", non_resource, _ONE_OF)], "authorization.k8s.io")
    ctx.enter("storage")  # (nothing is stored: the authorizer answers)
    if MASTERS in user.groups:
        allowed = True
    elif resource is not None:
        allowed = ctx.server.authorizer.authorize(AuthzAttributes(
            user, resource.get("verb", ""), resource.get("group", ""), resource.get("resource", ""),
            resource.get("subresource", ""), resource.get("namespace", ""), resource.get("name", "")))
    else:
        attributes = non_resource or {}
        allowed = ctx.server.authorizer.allows_non_resource(user, attributes.get("path", ""),
                                                            attributes.get("verb", ""))
    review["metadata"] = {"creationTimestamp": None}
    review["status"] = {"allowed": allowed}
    return review


def create_self_subject_review(ctx: RequestContext, body: Any) -> Object:
    decode_body(body, ctx.served.info, ctx.served.schema)
    ctx.enter("storage")  # (nothing is stored)
    user = ctx.user
    info: Object = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = {key: list(values) for key, values in user.extra}
    return {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "status": {"userInfo": info}}


def create_self_subject_rules_review(ctx: RequestContext, body: Any) -> Object:
    review = decode_body(body, ctx.served.info, ctx.served.schema)
    namespace = (review.get("spec") or {}).get("namespace") or ""
    if not namespace:
        raise bad_request("no namespace on request")
    ctx.enter("storage")  # (nothing is stored: RBAC lists the rules)
    resource_rules, non_resource_rules = [], []
    for rule in ctx.server.authorizer.rules_for(ctx.user, namespace):
        verbs = list(rule.get("verbs") or [])
        if rule.get("resources"):
            entry: Object = {"verbs": verbs, "apiGroups": list(rule.get("apiGroups") or []),
                             "resources": list(rule["resources"])}
            if rule.get("resourceNames"):
                entry["resourceNames"] = list(rule["resourceNames"])
            resource_rules.append(entry)
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": verbs, "nonResourceURLs": list(rule["nonResourceURLs"])})
    review["metadata"] = {"creationTimestamp": None}
    review["status"] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                        "incomplete": False}
    return review
