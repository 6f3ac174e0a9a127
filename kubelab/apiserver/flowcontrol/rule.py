"""Does a request match a FlowSchema? Subjects, then resource or non-resource rules.

Follows k8s.io/apiserver pkg/util/flowcontrol/rule.go. A FlowSchema matches when any of its
rules does; a rule matches when one of its subjects matches the user and one of its resource
rules (for a resource request) or non-resource rules (for a path such as /healthz) matches
the request. A wildcard ("*") counts only as the list's only member, which validation enforces.
Upstream matches typed Go structs; digest() turns a stored FlowSchema into the same shape
once per configuration change (the controller's digestConfigObjects), not once per request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubelab.apiserver.auth.authn import UserInfo

__all__ = ["FlowSchemaDigest", "RequestDigest", "digest", "matches_flow_schema"]

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


@dataclass(frozen=True, slots=True)
class Subject:
    kind: str        # User, Group or ServiceAccount
    name: str        # "" when the kind's own field is missing: it matches nobody
    namespace: str = ""
    present: bool = True


@dataclass(frozen=True, slots=True)
class ResourcePolicyRule:
    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    namespaces: tuple[str, ...]
    cluster_scope: bool


@dataclass(frozen=True, slots=True)
class NonResourcePolicyRule:
    verbs: tuple[str, ...]
    non_resource_urls: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PolicyRulesWithSubjects:
    subjects: tuple[Subject, ...]
    resource_rules: tuple[ResourcePolicyRule, ...]
    non_resource_rules: tuple[NonResourcePolicyRule, ...]


@dataclass(frozen=True, slots=True)
class FlowSchemaDigest:
    """A FlowSchema as the filter uses it; `object` is the stored object itself."""

    name: str
    priority_level: str
    matching_precedence: int
    distinguisher_method: str   # ByUser, ByNamespace or ""
    uid: str
    rules: tuple[PolicyRulesWithSubjects, ...]
    object: dict[str, Any]


def _subject(s: dict[str, Any]) -> Subject:
    kind = str(s.get("kind", ""))
    field = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}.get(kind, "")
    inner = s.get(field) if field else None
    if not isinstance(inner, dict):
        return Subject(kind, "", present=False)
    return Subject(kind, str(inner.get("name", "")), str(inner.get("namespace", "")))


def digest(fs: dict[str, Any]) -> FlowSchemaDigest:
    spec = fs.get("spec") or {}
    rules = tuple(PolicyRulesWithSubjects(
        tuple(_subject(s) for s in rule.get("subjects") or ()),
        tuple(ResourcePolicyRule(tuple(r.get("verbs") or ()), tuple(r.get("apiGroups") or ()),
                                 tuple(r.get("resources") or ()), tuple(r.get("namespaces") or ()),
                                 bool(r.get("clusterScope"))) for r in rule.get("resourceRules") or ()),
        tuple(NonResourcePolicyRule(tuple(r.get("verbs") or ()), tuple(r.get("nonResourceURLs") or ()))
              for r in rule.get("nonResourceRules") or ()))
        for rule in spec.get("rules") or ())
    return FlowSchemaDigest(
        fs["metadata"]["name"], (spec.get("priorityLevelConfiguration") or {}).get("name", ""),
        int(spec.get("matchingPrecedence", 0)),
        str((spec.get("distinguisherMethod") or {}).get("type", "")),
        str(fs["metadata"].get("uid", "")), rules, fs)


def matches_flow_schema(digest: RequestDigest, flow_schema: FlowSchemaDigest) -> bool:
    return any(matches_policy_rule(digest, rule) for rule in flow_schema.rules)


def matches_policy_rule(digest: RequestDigest, rule: PolicyRulesWithSubjects) -> bool:
    if not any(matches_subject(digest.user, s) for s in rule.subjects):
        return False
    if digest.is_resource_request:
        return any(matches_resource_policy_rule(digest, r) for r in rule.resource_rules)
    return any(matches_non_resource_policy_rule(digest, r) for r in rule.non_resource_rules)


def matches_subject(user: UserInfo, subject: Subject) -> bool:
    if not subject.present:
        return False
    if subject.kind == "User":
        return subject.name in ("*", user.name)
    if subject.kind == "Group":
        return subject.name == "*" or subject.name in user.groups
    if subject.kind == "ServiceAccount":
        if subject.name == "*":  # serviceAccountMatchesNamespace
            return user.name.startswith(f"{SA_PREFIX}{subject.namespace}:")
        return user.name == f"{SA_PREFIX}{subject.namespace}:{subject.name}"
    return False


def _contains(value: str, values: tuple[str, ...], wildcard: str) -> bool:
    """containsString: value is listed, or the list is just the wildcard."""
    return values == (wildcard,) or value in values


def matches_resource_policy_rule(digest: RequestDigest, rule: ResourcePolicyRule) -> bool:
    if not _contains(digest.verb, rule.verbs, "*"):
        return False
    joined = f"{digest.resource}/{digest.subresource}" if digest.subresource else digest.resource
    if not _contains(joined, rule.resources, "*"):
        return False
    if not _contains(digest.api_group, rule.api_groups, "*"):
        return False
    if not digest.namespace:
        return rule.cluster_scope
    return _contains(digest.namespace, rule.namespaces, "*")


def matches_non_resource_policy_rule(digest: RequestDigest, rule: NonResourcePolicyRule) -> bool:
    if not _contains(digest.verb, rule.verbs, "*"):
        return False
    for rule_path in rule.non_resource_urls:
        if rule_path in ("*", digest.path):
            return True
        prefix = rule_path.removesuffix("*")
        if not prefix.endswith("/"):
            prefix += "/"
        if digest.path.startswith(prefix):
            return True
    return False
