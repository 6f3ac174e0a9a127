"""Does a request match a FlowSchema? Subjects, then resource or non-resource rules.

Follows k8s.io/apiserver pkg/util/flowcontrol/rule.go. A FlowSchema matches when any of its
rules does; a rule matches when one of its subjects matches the user and one of its resource
rules (for a resource request) or non-resource rules (for a path such as /healthz) matches
the request. A wildcard ("*") counts only as the list's only member, which validation enforces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubelab.apiserver.authn import UserInfo

__all__ = ["RequestDigest", "matches_flow_schema"]

SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True, slots=True)
class RequestDigest:
    """What classification looks at (upstream's RequestDigest: RequestInfo and user.Info)."""

    user: UserInfo
    verb: str
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    is_resource_request: bool = True
    path: str = ""


def matches_flow_schema(digest: RequestDigest, flow_schema: dict[str, Any]) -> bool:
    rules = (flow_schema.get("spec") or {}).get("rules") or []
    return any(matches_policy_rule(digest, rule) for rule in rules)


def matches_policy_rule(digest: RequestDigest, rule: dict[str, Any]) -> bool:
    if not any(matches_subject(digest.user, s) for s in rule.get("subjects") or []):
        return False
    if digest.is_resource_request:
        return any(matches_resource_policy_rule(digest, r) for r in rule.get("resourceRules") or [])
    return any(matches_non_resource_policy_rule(digest, r)
               for r in rule.get("nonResourceRules") or [])


def matches_subject(user: UserInfo, subject: dict[str, Any]) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        name = (subject.get("user") or {}).get("name")
        return subject.get("user") is not None and name in ("*", user.name)
    if kind == "Group":
        if subject.get("group") is None:
            return False
        seek = subject["group"].get("name")
        return seek == "*" or seek in user.groups
    if kind == "ServiceAccount":
        sa = subject.get("serviceAccount")
        if sa is None:
            return False
        namespace, name = sa.get("namespace", ""), sa.get("name", "")
        if name == "*":  # serviceAccountMatchesNamespace
            return user.name.startswith(f"{SA_PREFIX}{namespace}:")
        return user.name == f"{SA_PREFIX}{namespace}:{name}"
    return False


def _contains(value: str, values: list[str], wildcard: str) -> bool:
    """containsString: value is listed, or the list is just the wildcard."""
    return values == [wildcard] or value in values


def matches_resource_policy_rule(digest: RequestDigest, rule: dict[str, Any]) -> bool:
    if not _contains(digest.verb, rule.get("verbs") or [], "*"):
        return False
    joined = f"{digest.resource}/{digest.subresource}" if digest.subresource else digest.resource
    if not _contains(joined, rule.get("resources") or [], "*"):
        return False
    if not _contains(digest.api_group, rule.get("apiGroups") or [], "*"):
        return False
    if not digest.namespace:
        return bool(rule.get("clusterScope"))
    return _contains(digest.namespace, rule.get("namespaces") or [], "*")


def matches_non_resource_policy_rule(digest: RequestDigest, rule: dict[str, Any]) -> bool:
    if not _contains(digest.verb, rule.get("verbs") or [], "*"):
        return False
    for rule_path in rule.get("nonResourceURLs") or []:
        if rule_path in ("*", digest.path):
            return True
        prefix = rule_path.removesuffix("*")
        if not prefix.endswith("/"):
            prefix += "/"
        if digest.path.startswith(prefix):
            return True
    return False
