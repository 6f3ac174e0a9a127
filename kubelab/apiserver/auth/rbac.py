"""Authorization with RBAC: may this user do this verb on this resource here?

Roles and ClusterRoles hold rules (apiGroups x resources x verbs, optionally resourceNames);
RoleBindings grant a role's rules inside one namespace, ClusterRoleBindings everywhere. A
request is allowed when any rule bound to the user, or to one of the user's groups, matches.
Nothing is ever denied explicitly: no matching rule means 403. This follows
plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows, VerbMatches, ResourceMatches, ...) and
the Forbidden wording of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go.

RBAC objects are ordinary objects in the store. The authorizer indexes them by subject once,
and caches each decision; any write to an RBAC object drops both (invalidate()).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from kubelab.api.errors import ApiError, ParseError, forbidden
from kubelab.api.labels import selector_from_label_selector
from kubelab.apiserver.auth.authn import MASTERS, UserInfo

__all__ = ["RBAC_RESOURCES", "AuthzAttributes", "RBACAuthorizer", "forbidden_error", "rule_allows"]

RBAC_RESOURCES = frozenset({"roles", "rolebindings", "clusterroles", "clusterrolebindings"})
Rule = dict[str, Any]
Loader = Callable[[str], list[dict[str, Any]]]  # resource -> every object of it
_MAX_CACHED_DECISIONS = 100_000


class AuthzAttributes(NamedTuple):
    """authorizer.Attributes of a resource request (a tuple: it is also the cache key)."""

    user: UserInfo
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str


def rule_allows(rule: Rule, verb: str, group: str, resource: str, subresource: str,
                name: str) -> bool:
    """RuleAllows for a resource request."""
    verbs = rule.get("verbs") or ()
    if verb not in verbs and "*" not in verbs:
        return False
    groups = rule.get("apiGroups") or ()
    if group not in groups and "*" not in groups:
        return False
    combined = f"{resource}/{subresource}" if subresource else resource
    if not any(r == "*" or r == combined or (subresource and r == "*/" + subresource)
               for r in rule.get("resources") or ()):
        return False
    names = rule.get("resourceNames")
    return not names or name in names


class RBACAuthorizer:
    def __init__(self, load: Loader) -> None:
        self._load = load
        self._index: _Index | None = None
        self._decisions: dict[AuthzAttributes, bool] = {}
        self.enabled = True  # False: AlwaysAllow, for experiments

    def invalidate(self) -> None:
        """An RBAC object changed: forget the index and every cached decision."""
        self._index = None
        self._decisions.clear()

    def authorize(self, a: AuthzAttributes) -> bool:
        user = a.user
        # The privileged group is allowed before RBAC runs, as upstream's authorizer chain does.
        if not self.enabled or MASTERS in user.groups:
            return True
        decision = self._decisions.get(a)
        if decision is None:
            decision = self._decide(a)
            if len(self._decisions) >= _MAX_CACHED_DECISIONS:
                self._decisions.clear()
            self._decisions[a] = decision
        return decision

    def rules_for(self, user: UserInfo, namespace: str) -> list[Rule]:
        """Every rule that applies to user in namespace ("" : cluster-wide rules only)."""
        if self._index is None:
            self._index = _Index(self._load)
        subjects = [("User", user.name), *(("Group", g) for g in user.groups)]
        rules: list[Rule] = []
        for subject in subjects:
            rules += self._index.cluster.get(subject, ())
            if namespace:
                rules += self._index.namespaced.get((namespace, *subject), ())
        return rules

    def allows_non_resource(self, user: UserInfo, path: str, verb: str) -> bool:
        """A non-resource URL (/metrics, /healthz): a cluster rule's nonResourceURLs names the
        path, or a prefix of it ending in "*" (NonResourceURLMatches, rbac/v1 helpers.go)."""
        if not self.enabled or MASTERS in user.groups:
            return True
        for rule in self.rules_for(user, ""):
            verbs = rule.get("verbs") or []
            if "*" not in verbs and verb not in verbs:
                continue
            if any(u in (path, "*") or (u.endswith("*") and path.startswith(u[:-1]))
                   for u in rule.get("nonResourceURLs") or ()):
                return True
        return False

    def _decide(self, a: AuthzAttributes) -> bool:
        return any(rule_allows(rule, a.verb, a.group, a.resource, a.subresource, a.name)
                   for rule in self.rules_for(a.user, a.namespace))


class _Index:
    """Rules by subject: cluster[(kind, name)] and namespaced[(ns, kind, name)]."""

    def __init__(self, load: Loader) -> None:
        self.cluster: dict[tuple[str, str], list[Rule]] = {}
        self.namespaced: dict[tuple[str, str, str], list[Rule]] = {}
        cluster_roles = {_name(r): r for r in load("clusterroles")}
        roles = {(_namespace(r), _name(r)): r for r in load("roles")}
        resolved: dict[str, list[Rule]] = {}

        def cluster_rules(name: str, seen: frozenset[str] = frozenset()) -> list[Rule]:
            if name not in resolved:
                role = cluster_roles.get(name) or {}
                rules = _rules(role)
                # What the clusterrole-aggregation controller writes into aggregated roles
                # (admin, edit, view): the rules of every ClusterRole its selectors match.
                for selector in _selectors(role):
                    for other_name, other in sorted(cluster_roles.items()):
                        labels = (other.get("metadata") or {}).get("labels") or {}
                        if other_name not in seen | {name} and selector.matches(labels):
                            rules = rules + cluster_rules(other_name, seen | {name})
                resolved[name] = rules
            return resolved[name]

        for binding in load("clusterrolebindings"):
            ref = binding.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                for subject in _subjects(binding, ""):
                    self.cluster.setdefault(subject, []).extend(cluster_rules(ref.get("name", "")))
        for binding in load("rolebindings"):
            ns, ref = _namespace(binding), binding.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                rules = cluster_rules(ref.get("name", ""))
            else:
                rules = _rules(roles.get((ns, ref.get("name", ""))) or {})
            for subject in _subjects(binding, ns):
                self.namespaced.setdefault((ns, *subject), []).extend(rules)


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _namespace(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace", ""))


def _rules(role: dict[str, Any]) -> list[Rule]:
    return [r for r in role.get("rules") or () if isinstance(r, dict)]


def _selectors(role: dict[str, Any]) -> list[Any]:
    selectors = []
    for ls in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        try:
            selectors.append(selector_from_label_selector(ls))
        except ParseError:
            continue
    return selectors


def _subjects(binding: dict[str, Any], namespace: str) -> list[tuple[str, str]]:
    """Subjects as (kind, name); a ServiceAccount is the user system:serviceaccount:<ns>:<name>."""
    out = []
    for s in binding.get("subjects") or ():
        kind, name = s.get("kind"), s.get("name", "")
        if kind in ("User", "Group"):
            out.append((kind, name))
        elif kind == "ServiceAccount":
            out.append(("User", f"system:serviceaccount:{s.get('namespace') or namespace}:{name}"))
    return out


def forbidden_error(a: AuthzAttributes, reason: str = "") -> ApiError:
    """403 in upstream's words, e.g. `pods "web" is forbidden: User "bob" cannot get resource
    "pods" in API group "" in the namespace "default"`."""
    resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    message = f'User "{a.user.name}" cannot {a.verb} resource "{resource}" in API group "{a.group}"'
    message += f' in the namespace "{a.namespace}"' if a.namespace else " at the cluster scope"
    if reason:
        message += f": {reason}"
    return forbidden(a.resource, a.name, message, a.group)
