"""The generic parts of quota evaluation (k8s.io/apiserver pkg/quota/v1/interfaces.go and
generic/evaluator.go): the Evaluator interface, Matches, CalculateUsageStats, the object count
evaluator, and CalculateUsage (pkg/quota/v1/resources.go), which the resourcequota controller
runs.

An evaluator knows one resource: which quota names it can measure (matching_resources), what
one object uses (usage), what a namespace's objects use (usage_stats, through a lister), which
scopes an object falls in (matches_scope), and what an object must state to be admitted at all
(constraints). A quota's scopes are read as scope selectors (GetScopeSelectorsFromQuota).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kubelab.api import Object
from kubelab.api.quantity import parse_quantity
from kubelab.api.quota.resources import ResourceList, add, intersection, mask, parse_resource_list

__all__ = ["Evaluator", "ListFunc", "ObjectCountEvaluator", "calculate_usage",
           "object_count_quota_resource_name", "scope_selectors_from_quota"]

# (group, resource, namespace) -> the live objects: a lister (controller) or the store (admission).
ListFunc = Callable[[str, str, str], list[Object]]
ONE = parse_quantity(1)


def object_count_quota_resource_name(group: str, resource: str) -> str:
    """ObjectCountQuotaResourceNameFor: count/pods, count/deployments.apps."""
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def scope_selectors_from_quota(quota: Object) -> list[dict[str, Any]]:
    """GetScopeSelectorsFromQuota: spec.scopes as Exists requirements, then the scopeSelector's."""
    spec = quota.get("spec") or {}
    selectors = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or ()]
    return selectors + list((spec.get("scopeSelector") or {}).get("matchExpressions") or ())


class Evaluator:
    """quota.Evaluator. A subclass sets group, resource and the names it measures."""

    group = ""
    resource = ""
    operations: tuple[str, ...] = ("CREATE",)

    def __init__(self, list_func: ListFunc | None = None) -> None:
        self.list_func = list_func

    def group_resource(self) -> tuple[str, str]:
        return self.group, self.resource

    def handles(self, operation: str, subresource: str, obj: Object | None,
                old: Object | None) -> bool:
        """Handles: does this operation change usage?"""
        return operation in self.operations and not subresource

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        raise NotImplementedError

    def matches_scope(self, selector: dict[str, Any], item: Object) -> bool:
        """MatchesNoScopeFunc: a resource without scopes falls in none."""
        return False

    def constraints(self, required: list[str], item: Object) -> str:
        """An error text when item may not be admitted under required, "" when it may."""
        return ""

    def usage(self, item: Object) -> ResourceList:
        raise NotImplementedError

    def matches(self, quota: Object, item: Object) -> bool:
        """generic.Matches: the quota limits one of our resources, and item is in its scopes."""
        hard = parse_resource_list((quota.get("status") or {}).get("hard"))
        if not self.matching_resources(hard):
            return False
        return all(self.matches_scope(s, item) for s in scope_selectors_from_quota(quota))

    def usage_stats(self, namespace: str, resources: list[str],
                    selectors: list[dict[str, Any]]) -> ResourceList:
        """CalculateUsageStats: zero for every resource asked, plus each object in the scopes."""
        used: ResourceList = {name: parse_quantity(0) for name in resources}
        assert self.list_func is not None, "usage stats need a lister"
        for item in self.list_func(self.group, self.resource, namespace):
            if all(self.matches_scope(s, item) for s in selectors):
                used = add(used, mask(self.usage(item), resources))
        return used


class ObjectCountEvaluator(Evaluator):
    """generic.NewObjectCountEvaluator: one of each object, as count/<resource>[.<group>] and,
    for the legacy kinds, its alias (configmaps, secrets, ...)."""

    def __init__(self, group: str, resource: str, list_func: ListFunc | None = None,
                 alias: str = "") -> None:
        super().__init__(list_func)
        self.group, self.resource = group, resource
        self.names = [object_count_quota_resource_name(group, resource), *([alias] if alias else [])]

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return intersection(names, self.names)

    def usage(self, item: Object) -> ResourceList:
        return dict.fromkeys(self.names, ONE)


def calculate_usage(namespace: str, hard: ResourceList, evaluators: Iterable[Evaluator],
                    selectors: list[dict[str, Any]]) -> ResourceList:
    """CalculateUsage: what the namespace uses of each hard resource some evaluator measures."""
    evaluators = list(evaluators)
    names = list(hard)
    potential = [n for e in evaluators for n in e.matching_resources(names)]
    matched = intersection(names, potential)
    used: ResourceList = {}
    for evaluator in evaluators:
        wanted = evaluator.matching_resources(matched)
        if wanted:
            used = add(used, evaluator.usage_stats(namespace, wanted, selectors))
    return mask(used, matched)
