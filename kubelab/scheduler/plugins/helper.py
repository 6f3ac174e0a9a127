"""Helpers the plugins share.

- default_normalize_score: pkg/scheduler/framework/plugins/helper/normalize_score.go
- build_broken_linear_function: plugins/helper/shape_score.go
- tolerates_taint and friends: kubernetes/api core/v1/toleration.go and component-helpers
  scheduling/corev1/helpers.go (FindMatchingUntoleratedTaint)
- RequiredNodeAffinity, PreferredSchedulingTerms: component-helpers
  scheduling/corev1/nodeaffinity/nodeaffinity.go

Integer arithmetic follows Go: int64 division truncates toward zero (go_div).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kubelab.api.errors import ParseError
from kubelab.api.labels import new_requirement
from kubelab.scheduler.interface import NodeScore
from kubelab.scheduler.types import Object

__all__ = [
    "RequiredNodeAffinity",
    "build_broken_linear_function",
    "default_normalize_score",
    "find_matching_untolerated_taint",
    "go_div",
    "go_round",
    "node_selector_term_matches",
    "preferred_scheduling_score",
    "tolerates_taint",
    "tolerations_tolerate_taint",
]

Toleration = Mapping[str, Any]
Taint = Mapping[str, Any]


def go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero (Python's // floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x: float) -> int:
    """Go's math.Round: halves round away from zero (Python's round() rounds to even)."""
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """Scale scores from [0, max(scores)] to [0, max_priority], in place; reverse flips them so
    the lowest raw score gets max_priority. All zero: 0 each, or max_priority each if reversed."""
    max_count = max((s.score for s in scores), default=0)
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = max_priority * s.score // max_count
        s.score = max_priority - score if reverse else score


def build_broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """A piecewise-linear function through (utilization, score) points, flat outside them."""

    def f(p: int) -> int:
        for i, (x, y) in enumerate(shape):
            if p <= x:
                if i == 0:
                    return y
                x0, y0 = shape[i - 1]
                return y0 + go_div((y - y0) * (p - x0), x - x0)
        return shape[-1][1]

    return f


# --- taints and tolerations -------------------------------------------------------------------

def tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """toleration.go ToleratesTaint. An empty effect or key matches all; operator Exists
    matches any value; "" or Equal compares values. (The alpha Lt/Gt operators never match.)"""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(tolerates_taint(t, taint) for t in tolerations)


def find_matching_untolerated_taint(taints: Iterable[Taint],
                                    tolerations: Sequence[Toleration]) -> Taint | None:
    """The first taint no toleration tolerates (the caller picks which taints to pass)."""
    for taint in taints:
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


# --- node selectors and node affinity ---------------------------------------------------------

_INT64 = re.compile(r"[+-]?[0-9]+")


def _as_int(text: Any) -> int | None:
    """strconv.ParseInt(text, 10, 64), which (unlike int()) refuses spaces and underscores."""
    text = str(text)
    return int(text) if _INT64.fullmatch(text) and -(2**63) <= int(text) < 2**63 else None


def _requirement_matches(req: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One NodeSelectorRequirement against node labels (labels/selector.go Requirement.Matches).
    A malformed requirement matches nothing, as a parse error makes the whole term fail."""
    key, operator, values = req.get("key", ""), req.get("operator"), req.get("values") or []
    if operator == "In":
        return key in labels and bool(labels[key] in values)
    if operator == "NotIn":
        return key not in labels or bool(labels[key] not in values)
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt") and key in labels and len(values) == 1:
        have, want = _as_int(labels[key]), _as_int(values[0])
        if have is None or want is None:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _field_matches(req: Mapping[str, Any], node_name: str) -> bool:
    """matchFields supports only metadata.name with In or NotIn and exactly one value."""
    values: list[str] = req.get("values") or []
    if req.get("key") != "metadata.name" or len(values) != 1:
        return False
    if req.get("operator") == "In":
        return node_name == values[0]
    if req.get("operator") == "NotIn":
        return node_name != values[0]
    return False


# nodeaffinity.go nodeSelectorRequirementsAsSelector: NodeSelectorOperator -> selection.Operator.
_SELECTION_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!",
                        "Gt": "gt", "Lt": "lt"}


def _term_parses(term: Mapping[str, Any]) -> bool:
    """newNodeSelectorTerm: each matchExpression must make a valid labels.Requirement (a known
    operator, a valid key, valid label values, one integer for Gt/Lt). A term that does not
    parse matches no node; the other terms still count (LazyErrorNodeSelector)."""
    for req in term.get("matchExpressions") or ():
        operator = _SELECTION_OPERATORS.get(req.get("operator") or "")
        if operator is None:
            return False
        try:
            new_requirement(req.get("key") or "", operator, req.get("values"))
        except ParseError:
            return False
    return True


def _is_empty_term(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def node_selector_term_matches(term: Mapping[str, Any], labels: Mapping[str, str], node_name: str) -> bool:
    """A NodeSelectorTerm: all its expressions and fields must match (an empty term matches
    nothing, but callers skip empty terms before asking)."""
    return (all(_requirement_matches(r, labels) for r in term.get("matchExpressions") or ())
            and all(_field_matches(r, node_name) for r in term.get("matchFields") or ()))


class RequiredNodeAffinity:
    """GetRequiredNodeAffinity: the pod's spec.nodeSelector AND its required node affinity
    (whose terms are ORed; empty terms are ignored, a term that does not parse matches
    nothing, and no usable term matches nothing). Built once per cycle, in PreFilter."""

    __slots__ = ("node_selector", "terms")

    def __init__(self, pod: Object) -> None:
        spec = pod.get("spec") or {}
        self.node_selector: Mapping[str, str] = spec.get("nodeSelector") or {}
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        self.terms: list[Mapping[str, Any]] | None = None
        if required is not None:
            self.terms = [t for t in required.get("nodeSelectorTerms") or ()
                          if not _is_empty_term(t) and _term_parses(t)]

    def match(self, labels: Mapping[str, str], node_name: str) -> bool:
        for key, value in self.node_selector.items():
            if labels.get(key) != value:
                return False
        if self.terms is None:
            return True
        return any(node_selector_term_matches(t, labels, node_name) for t in self.terms)


def preferred_scheduling_score(terms: Sequence[Mapping[str, Any]], labels: Mapping[str, str],
                               node_name: str) -> int:
    """PreferredSchedulingTerms.Score: the sum of the weights of the terms the node matches
    (terms with weight 0 or an empty preference count for nothing)."""
    total = 0
    for term in terms:
        weight = int(term.get("weight") or 0)
        preference = term.get("preference") or {}
        if weight and not _is_empty_term(preference) and node_selector_term_matches(
                preference, labels, node_name):
            total += weight
    return total
