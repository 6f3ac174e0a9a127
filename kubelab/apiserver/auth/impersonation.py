"""Impersonation: an authenticated user asks to act as someone else (`kubectl --as=viewer`).

kube-apiserver's WithImpersonation filter (k8s.io/apiserver pkg/endpoints/filters/
impersonation.go) runs right after authentication, before priority and fairness and before
authorization, so everything after it sees the impersonated user. The requestor names who to
be in headers (Impersonate-User, Impersonate-Group, Impersonate-Uid, Impersonate-Extra-<key>),
which kubelab.serve copies into Request.impersonate; in-process clients set it themselves.
Each thing asked for is authorized for the requestor with the verb `impersonate`:

    Impersonate-User: bob                       users "bob"                         (core group)
    Impersonate-User: system:serviceaccount:n:s serviceaccounts "s" in namespace n  (core group)
    Impersonate-Group: devs                     groups "devs"                       (core group)
    Impersonate-Uid: 1234                       uids "1234"           (authentication.k8s.io)
    Impersonate-Extra-scopes: view              userextras/scopes "view" (authentication.k8s.io)

The first refusal is a 403 in the authorizer's words (`users "bob" is forbidden: User "alice"
cannot impersonate resource "users" in API group "" at the cluster scope`). A service account
user brings its groups (system:serviceaccounts, system:serviceaccounts:<namespace>) unless
groups were asked for; every impersonated user but system:anonymous gets
system:authenticated (unless system:authenticated or system:unauthenticated was asked for),
system:anonymous gets system:unauthenticated. The audit record keeps the requestor as its user
and the new identity as impersonated_user, as upstream's audit events do.

Departure: asking for groups, extras or a uid without a user is upstream's
responsewriters.InternalError, a plain-text 500; kubelab answers a 500 Status with the same
words ("requested [...] without impersonating a user").
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api.errors import ApiError
from kubelab.api.request import Impersonation
from kubelab.apiserver.auth.authn import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, UserInfo
from kubelab.apiserver.auth.rbac import AuthzAttributes, forbidden_error

__all__ = ["SERVICE_ACCOUNT_PREFIX", "impersonate"]

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
_SERVICE_ACCOUNTS = "system:serviceaccounts"
_ANONYMOUS = "system:anonymous"
_AUTHENTICATION = "authentication.k8s.io"


def _split_service_account(name: str) -> tuple[str, str] | None:
    """serviceaccount.SplitUsername: system:serviceaccount:<namespace>:<name>, both non-empty."""
    if not name.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = name[len(SERVICE_ACCOUNT_PREFIX):].split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def _reference(kind: str, name: str, namespace: str = "", field_path: str = "") -> str:
    """An ObjectReference as Go's %v prints it: {Kind Namespace Name UID APIVersion
    ResourceVersion FieldPath}."""
    api_version = f"{_AUTHENTICATION}/v1" if kind in ("UserExtra", "UID") else ""
    return "{" + " ".join((kind, namespace, name, "", api_version, "", field_path)) + "}"


def impersonate(requestor: UserInfo, wanted: Impersonation,
                authorize: Callable[[AuthzAttributes], bool]) -> UserInfo:
    """The user the request acts as, once the requestor may be each part of it; ApiError 403
    (or 500 for groups without a user) otherwise."""
    # (kind, group, resource, subresource, namespace, name), in the order upstream checks them.
    checks: list[tuple[str, str, str, str, str]] = []
    references: list[str] = []
    username, groups = "", []
    account = _split_service_account(wanted.user) if wanted.user else None
    if account is not None:
        namespace, name = account
        checks.append(("", "serviceaccounts", "", namespace, name))
        references.append(_reference("ServiceAccount", name, namespace))
        username = wanted.user
        if not wanted.groups:  # a service account's groups are fixed
            groups = [_SERVICE_ACCOUNTS, f"{_SERVICE_ACCOUNTS}:{namespace}"]
    elif wanted.user:
        checks.append(("", "users", "", "", wanted.user))
        references.append(_reference("User", wanted.user))
        username = wanted.user
    for group in wanted.groups:
        checks.append(("", "groups", "", "", group))
        references.append(_reference("Group", group))
        groups.append(group)
    for key, values in wanted.extra:
        for value in values:
            checks.append((_AUTHENTICATION, "userextras", key, "", value))
            references.append(_reference("UserExtra", value, field_path=key))
    if wanted.uid:
        checks.append((_AUTHENTICATION, "uids", "", "", wanted.uid))
        references.append(_reference("UID", wanted.uid))
    if not wanted.user and references:
        raise ApiError(500, "InternalError",
                       f"requested [{' '.join(references)}] without impersonating a user")
    for group, resource, subresource, namespace, name in checks:
        attrs = AuthzAttributes(requestor, "impersonate", group, resource, subresource,
                                namespace, name)
        if not authorize(attrs):
            raise forbidden_error(attrs)
    if username != _ANONYMOUS:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(username, tuple(groups), uid=wanted.uid, extra=wanted.extra)
