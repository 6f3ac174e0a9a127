"""FlowSchema and PriorityLevelConfiguration: their validation, in upstream's words.

Follows kubernetes pkg/apis/flowcontrol/validation/validation.go (Kubernetes 1.34, for v1
requests: a Limited level's nominalConcurrencyShares may be 0). The mandatory objects (exempt,
catch-all) must keep their fixed spec. Their defaults are in apiserver/apis/defaults_flowcontrol.py.
"""

from __future__ import annotations

import math
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.validation import is_dns1123_label, is_dns1123_subdomain

__all__ = ["validate_flow_schema", "validate_priority_level_configuration"]

MAX_MATCHING_PRECEDENCE = 10000
MAX_QUEUES = 10 * 1000 * 1000
MAX_HASH_BITS = 60
SUPPORTED_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "proxy",
                   "update", "watch"]
NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


# ------------------------------------------------------------------ FlowSchema

def validate_flow_schema(fs: Object) -> list[FieldError]:
    from kubelab.apiserver.flowcontrol.bootstrap import MANDATORY_FLOW_SCHEMAS

    name = (fs.get("metadata") or {}).get("name", "")
    spec = fs.get("spec") or {}
    errs = _flow_schema_spec(name, spec)
    for mandatory in MANDATORY_FLOW_SCHEMAS:
        if mandatory["metadata"]["name"] == name and spec != mandatory["spec"]:
            errs.append(field_invalid("spec", spec, f"spec of '{name}' must equal the fixed value"))
    return errs + _status((fs.get("status") or {}).get("conditions") or [])


def _flow_schema_spec(name: str, spec: dict[str, Any]) -> list[FieldError]:
    errs = []
    precedence = spec.get("matchingPrecedence", 0)
    if precedence <= 0:
        errs.append(field_invalid("spec.matchingPrecedence", precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        errs.append(field_invalid("spec.matchingPrecedence", precedence,
                                  f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
    if precedence == 1 and name != "exempt":
        errs.append(field_invalid("spec.matchingPrecedence", precedence,
                                  "only the schema named 'exempt' may have matchingPrecedence 1"))
    method = spec.get("distinguisherMethod")
    if method is not None and method.get("type") not in ("ByNamespace", "ByUser"):
        errs.append(field_not_supported("spec.distinguisherMethod.type", method.get("type", ""),
                                        ["ByNamespace", "ByUser"]))
    level = (spec.get("priorityLevelConfiguration") or {}).get("name", "")
    if level:
        errs += [field_invalid("spec.priorityLevelConfiguration.name", level, msg)
                 for msg in is_dns1123_subdomain(level)]
    else:
        errs.append(field_required("spec.priorityLevelConfiguration.name",
                                   "must reference a priority level"))
    for i, rule in enumerate(spec.get("rules") or []):
        errs += _rule(rule, f"spec.rules[{i}]")
    return errs


def _rule(rule: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    subjects = rule.get("subjects") or []
    if not subjects:
        errs.append(field_required(f"{path}.subjects", "subjects must contain at least one value"))
    for i, subject in enumerate(subjects):
        errs += _subject(subject, f"{path}.subjects[{i}]")
    resource_rules, non_resource_rules = rule.get("resourceRules") or [], \
        rule.get("nonResourceRules") or []
    if not resource_rules and not non_resource_rules:
        errs.append(field_required(path, "at least one of resourceRules and nonResourceRules "
                                         "has to be non-empty"))
    for i, rr in enumerate(resource_rules):
        errs += _resource_rule(rr, f"{path}.resourceRules[{i}]")
    for i, nr in enumerate(non_resource_rules):
        errs += _non_resource_rule(nr, f"{path}.nonResourceRules[{i}]")
    return errs


_SUBJECT_FIELD = {"ServiceAccount": "serviceAccount", "User": "user", "Group": "group"}


def _subject(subject: dict[str, Any], path: str) -> list[FieldError]:
    kind = subject.get("kind", "")
    own = _SUBJECT_FIELD.get(kind)
    if own is None:
        return [field_not_supported(f"{path}.kind", kind, ["Group", "ServiceAccount", "User"])]
    errs = []
    value = subject.get(own)
    if value is None:
        errs.append(field_required(f"{path}.{own}",
                                   f"{own} is required when subject kind is '{kind}'"))
    elif kind == "ServiceAccount":
        sa_name, namespace = value.get("name", ""), value.get("namespace", "")
        if not sa_name:
            errs.append(field_required(f"{path}.serviceAccount.name"))
        elif sa_name != "*":
            errs += [field_invalid(f"{path}.serviceAccount.name", sa_name, m)
                     for m in is_dns1123_subdomain(sa_name)]
        if namespace:
            errs += [field_invalid(f"{path}.serviceAccount.namespace", namespace, m)
                     for m in is_dns1123_label(namespace)]
        else:
            errs.append(field_required(f"{path}.serviceAccount.namespace",
                                       "must specify namespace for service account"))
    elif not value.get("name"):
        errs.append(field_required(f"{path}.{own}.name"))
    for other_kind, other in _SUBJECT_FIELD.items():
        if other != own and subject.get(other) is not None:
            errs.append(field_forbidden(f"{path}.{other}", f"{other} is forbidden when subject "
                                                           f"kind is not '{other_kind}'"))
    return errs


def _verbs(verbs: list[str], path: str) -> list[FieldError]:
    if not verbs:
        return [field_required(f"{path}.verbs", "verbs must contain at least one value")]
    if "*" in verbs:
        return [field_invalid(f"{path}.verbs", verbs, "if '*' is present, must not specify "
                                                      "other verbs")] if len(verbs) > 1 else []
    if not set(verbs) <= set(SUPPORTED_VERBS):
        return [field_not_supported(f"{path}.verbs", verbs, SUPPORTED_VERBS)]
    return []


def _resource_rule(rule: dict[str, Any], path: str) -> list[FieldError]:
    errs = _verbs(rule.get("verbs") or [], path)
    for key, what in (("apiGroups", "api group"), ("resources", "resource")):
        values = rule.get(key) or []
        if not values:
            errs.append(field_required(f"{path}.{key}",
                                       f"resource rules must supply at least one {what}"))
        elif len(values) > 1 and "*" in values:
            errs.append(field_invalid(f"{path}.{key}", values,
                                      f"if '*' is present, must not specify other {what}s"))
    namespaces = rule.get("namespaces") or []
    if not namespaces and not rule.get("clusterScope"):
        errs.append(field_required(f"{path}.namespaces", "resource rules that are not cluster "
                                                         "scoped must supply at least one namespace"))
    elif "*" in namespaces:
        if len(namespaces) > 1:
            errs.append(field_invalid(f"{path}.namespaces", namespaces,
                                      "if '*' is present, must not specify other namespaces"))
    else:
        for i, ns in enumerate(namespaces):
            errs += [field_invalid(f"{path}.namespaces[{i}]", ns, NS_ERR_INTRO + m)
                     for m in is_dns1123_label(ns)]
    return errs


def _non_resource_rule(rule: dict[str, Any], path: str) -> list[FieldError]:
    errs = _verbs(rule.get("verbs") or [], path)
    urls = rule.get("nonResourceURLs") or []
    if not urls:
        errs.append(field_required(f"{path}.nonResourceURLs",
                                   "nonResourceURLs must contain at least one value"))
    elif "*" in urls:
        if len(urls) > 1:
            errs.append(field_invalid(f"{path}.nonResourceURLs", urls,
                                      "if '*' is present, must not specify other non-resource URLs"))
    else:
        for i, url in enumerate(urls):
            problem = _non_resource_url(url)
            if problem:
                errs.append(field_invalid(f"{path}.nonResourceURLs[{i}]", url, problem))
    return errs


def _non_resource_url(path: str) -> str:
    """ValidateNonResourceURLPath."""
    if not path:
        return "must not be empty"
    if path == "/":
        return ""
    if not path.startswith("/"):
        return "must start with slash"
    if " " in path:
        return "must not contain white-space"
    if "//" in path:
        return "must not contain double slash"
    wildcards = path.count("*")
    if wildcards > 1 or (wildcards == 1 and not path.endswith("/*")):
        return "wildcard can only do suffix matching"
    return ""


def _status(conditions: list[dict[str, Any]], path: str = "status") -> list[FieldError]:
    errs, seen = [], set()
    for i, condition in enumerate(conditions):
        kind = condition.get("type", "")
        if kind in seen:
            errs.append(field_duplicate(f"{path}.conditions[{i}].type", kind))
        seen.add(kind)
        if not kind:
            errs.append(field_required(f"{path}.conditions[{i}].type", "must not be empty"))
    return errs


# ------------------------------------------------------------------ PriorityLevelConfiguration

def validate_priority_level_configuration(pl: Object) -> list[FieldError]:
    from kubelab.apiserver.flowcontrol.bootstrap import MANDATORY_PRIORITY_LEVELS

    name = (pl.get("metadata") or {}).get("name", "")
    spec = pl.get("spec") or {}
    errs = _priority_level_spec(name, spec)
    for mandatory in MANDATORY_PRIORITY_LEVELS:
        if mandatory["metadata"]["name"] != name:
            continue
        if name == "exempt":  # its spec.exempt may be tuned since 1.28
            if {k: v for k, v in spec.items() if k != "exempt"} != \
                    {k: v for k, v in mandatory["spec"].items() if k != "exempt"}:
                errs.append(field_invalid("spec", spec, "spec of 'exempt' except the "
                                                        "'spec.exempt' field must equal the fixed value"))
        elif spec != mandatory["spec"]:
            errs.append(field_invalid("spec", spec, f"spec of '{name}' must equal the fixed value"))
    return errs + _status((pl.get("status") or {}).get("conditions") or [])


def _priority_level_spec(name: str, spec: dict[str, Any]) -> list[FieldError]:
    errs = []
    kind = spec.get("type", "")
    if (name == "exempt") != (kind == "Exempt"):
        errs.append(field_invalid("spec.type", kind,
                                  "type must be 'Exempt' if and only if name is 'exempt'"))
    if kind == "Exempt":
        if spec.get("limited") is not None:
            errs.append(field_forbidden("spec.limited", "must be nil if the type is not Limited"))
        errs += _shares_and_lending(spec.get("exempt") or {}, "spec.exempt")
    elif kind == "Limited":
        if spec.get("exempt") is not None:
            errs.append(field_forbidden("spec.exempt", "must be nil if the type is Limited"))
        limited = spec.get("limited")
        if limited is None:
            errs.append(field_required("spec.limited", "must not be empty when type is Limited"))
        else:
            errs += _limited(limited, "spec.limited")
    else:
        errs.append(field_not_supported("spec.type", kind, ["Exempt", "Limited"]))
    return errs


def _shares_and_lending(part: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    shares = part.get("nominalConcurrencyShares", 0)
    if shares < 0:
        errs.append(field_invalid(f"{path}.nominalConcurrencyShares", shares,
                                  "must be a non-negative integer"))
    lendable = part.get("lendablePercent")
    if lendable is not None and not 0 <= lendable <= 100:
        errs.append(field_invalid(f"{path}.lendablePercent", lendable,
                                  "must be between 0 and 100, inclusive"))
    return errs


def _limited(limited: dict[str, Any], path: str) -> list[FieldError]:
    errs = _shares_and_lending(limited, path)
    borrowing = limited.get("borrowingLimitPercent")
    if borrowing is not None and borrowing < 0:
        errs.append(field_invalid(f"{path}.borrowingLimitPercent", borrowing,
                                  "if specified, must be a non-negative integer"))
    response = limited.get("limitResponse") or {}
    rpath = f"{path}.limitResponse"
    kind = response.get("type", "")
    queuing = response.get("queuing")
    if kind == "Reject":
        if queuing is not None:
            errs.append(field_forbidden(f"{rpath}.queuing",
                                        "must be nil if limited.limitResponse.type is not Limited"))
    elif kind == "Queue":
        if queuing is None:
            errs.append(field_required(f"{rpath}.queuing",
                                       "must not be empty if limited.limitResponse.type is Limited"))
        else:
            errs += _queuing(queuing, f"{rpath}.queuing")
    else:
        errs.append(field_not_supported(f"{rpath}.type", kind, ["Queue", "Reject"]))
    return errs


def _queuing(q: dict[str, Any], path: str) -> list[FieldError]:
    """ValidatePriorityLevelQueuingConfiguration."""
    errs = []
    limit, queues, hand = q.get("queueLengthLimit", 0), q.get("queues", 0), q.get("handSize", 0)
    if limit <= 0:
        errs.append(field_invalid(f"{path}.queueLengthLimit", limit, "must be positive"))
    if queues <= 0:
        errs.append(field_invalid(f"{path}.queues", queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(field_invalid(f"{path}.queues", queues, f"must not be greater than {MAX_QUEUES}"))
    if hand <= 0:
        errs.append(field_invalid(f"{path}.handSize", hand, "must be positive"))
    elif hand > queues:
        errs.append(field_invalid(f"{path}.handSize", hand,
                                  f"should not be greater than queues ({queues})"))
    elif math.ceil(math.log2(queues) * hand) > MAX_HASH_BITS:
        errs.append(field_invalid(f"{path}.handSize", hand,
                                  f"required entropy bits of deckSize {queues} and handSize "
                                  f"{hand} should not be greater than {MAX_HASH_BITS}"))
    return errs
