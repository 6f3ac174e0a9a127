"""`kubectl auth can-i` and `kubectl auth whoami` (k8s.io/kubectl/pkg/cmd/auth cani.go, whoami.go).

can-i asks the server with a SelfSubjectAccessReview and prints `yes` (exit 0) or `no` (exit 1,
with the review's reason if it has one). `can-i --list` asks for a SelfSubjectRulesReview and
prints its rules as kubectl does: each rule broken down to one group, resource and verb
(rbac BreakdownRule), rules that differ only by verb merged again (CompactRules, verbs appended,
not deduplicated), sorted by the rule's Go string (so by verbs first: `[*]` before `[create]`),
in a tabwriter table. Non-resource rules are not merged, so a URL two roles allow is listed
twice, as on a real cluster. whoami prints the SelfSubjectReview's user (or -o json|yaml).
"""

from __future__ import annotations

import argparse

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, Printed
from kubelab.kubectl.printers import to_json, to_yaml

__all__ = ["auth"]

Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
# (verbs, apiGroups, resources, resourceNames, nonResourceURLs): a PolicyRule's fields in order


def auth(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    sub, *rest = args.args or [""]
    if sub == "can-i":
        return _can_i(client, args, rest)
    if sub == "whoami":
        if rest:
            raise KubectlError(f"unknown command {rest[0]!r} for \"kubectl auth whoami\"")
        return _whoami(client, args.output)
    raise KubectlError(f'unknown command "{sub}" for "kubectl auth"' if sub else
                       "You must specify the type of resource to get. Use \"kubectl auth --help\"")


def _whoami(client: Client, output: str) -> str:
    review = client.create({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    if output in ("json", "yaml"):
        return to_json(review) if output == "json" else to_yaml(review)
    user: Object = review["status"]["userInfo"]
    rows = [["ATTRIBUTE", "VALUE"]]
    if user.get("username"):
        rows.append(["Username", user["username"]])
    if user.get("uid"):
        rows.append(["UID", user["uid"]])
    if user.get("groups"):
        rows.append(["Groups", _go_list(user["groups"])])
    for key in sorted(user.get("extra") or {}):
        rows.append([f"Extra: {key}", _go_list(user["extra"][key])])
    return _tabwriter(rows)


def _can_i(client: Client, args: argparse.Namespace, words: list[str]) -> str:
    namespace = "" if args.all_namespaces else args.namespace
    if args.list:
        if words:
            raise KubectlError("list option must be specified with no arguments")
        return _list(client, args.namespace, args.no_headers)
    if args.no_headers:
        raise KubectlError("--no-headers cannot be set without --list specified")
    if len(words) != 2:
        raise KubectlError("you must specify two or three arguments: verb, resource, and "
                           "optional resourceName")
    verb, target = words
    warning = ""
    if target.startswith("/"):
        if args.subresource:
            raise KubectlError("--subresource can not be used with NonResourceURL")
        spec: Object = {"nonResourceAttributes": {"verb": verb, "path": target}}
    else:
        resource, _, name = target.partition("/")
        group = ""
        if resource != "*":
            try:
                info = client.resource(resource.lower())
                resource, group = info.resource, info.group
            except (ApiError, ValueError):
                warning = f"Warning: the server doesn't have a resource type '{resource}'\n"
        spec = {"resourceAttributes": {"namespace": namespace, "verb": verb, "group": group,
                                       "resource": resource, "subresource": args.subresource,
                                       "name": name}}
    review = client.create({"apiVersion": "authorization.k8s.io/v1",
                            "kind": "SelfSubjectAccessReview", "spec": spec})
    status = review.get("status") or {}
    if status.get("allowed"):
        return warning + "yes"
    answer = "no" + "".join(f" - {status[k]}" for k in ("reason", "evaluationError") if status.get(k))
    raise Printed(warning + answer)


def _list(client: Client, namespace: str, no_headers: bool) -> str:
    review = client.create({"apiVersion": "authorization.k8s.io/v1",
                            "kind": "SelfSubjectRulesReview", "spec": {"namespace": namespace}})
    status = review.get("status") or {}
    rules: list[Rule] = []
    for r in status.get("resourceRules") or ():
        rules += _breakdown((tuple(r.get("verbs") or ()), tuple(r.get("apiGroups") or ()),
                             tuple(r.get("resources") or ()), tuple(r.get("resourceNames") or ()), ()))
    for r in status.get("nonResourceRules") or ():
        rules += _breakdown((tuple(r.get("verbs") or ()), (), (), (),
                             tuple(r.get("nonResourceURLs") or ())))
    rows = [] if no_headers else [["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]]
    for verbs, groups, resources, names, urls in sorted(_compact(rules), key=_go_string):
        rows.append([_combine_resource_group(resources, groups), _go_list(urls), _go_list(names),
                     _go_list(verbs)])
    warning = ""
    if status.get("incomplete"):
        warning = f"warning: the list may be incomplete: {status.get('evaluationError', '')}\n"
    return warning + _tabwriter(rows)


def _breakdown(rule: Rule) -> list[Rule]:
    """BreakdownRule: one verb, group, resource (and name) per rule; URLs one per verb."""
    verbs, groups, resources, names, urls = rule
    out: list[Rule] = [((v,), (g,), (r,), (n,), ()) for g in groups for r in resources
                       for v in verbs for n in names] if names else \
        [((v,), (g,), (r,), (), ()) for g in groups for r in resources for v in verbs]
    return out + [((v,), (), (), (), (u,)) for u in urls for v in verbs]


def _compact(rules: list[Rule]) -> list[Rule]:
    """CompactRules: simple rules (one group, one resource, at most one name, no URL) that
    differ only by verb become one, their verbs appended in order."""
    merged: dict[tuple[tuple[str, ...], ...], list[str]] = {}
    others: list[Rule] = []
    for verbs, groups, resources, names, urls in rules:
        if not urls and len(groups) == 1 and len(resources) == 1 and len(names) <= 1:
            merged.setdefault((groups, resources, names), []).extend(verbs)
        else:
            others.append((verbs, groups, resources, names, urls))
    return others + [(tuple(verbs), g, r, n, ()) for (g, r, n), verbs in merged.items()]


def _go_string(rule: Rule) -> str:
    """PolicyRule.String(), which SortableRuleSlice compares."""
    fields = ("Verbs", "APIGroups", "Resources", "ResourceNames", "NonResourceURLs")
    return "&PolicyRule{" + "".join(f"{f}:{_go_list(v)}," for f, v in zip(fields, rule, strict=True)) + "}"


def _combine_resource_group(resources: tuple[str, ...], groups: tuple[str, ...]) -> str:
    """describe's CombineResourceGroup: `pods`, `deployments.apps`, `pods/log`, `*.*`."""
    if not resources:
        return ""
    resource, slash, sub = resources[0].partition("/")
    combined = resource + (f".{groups[0]}" if groups and groups[0] else "")
    return combined + (f"/{sub}" if slash else "")


def _go_list(values: list[str] | tuple[str, ...]) -> str:
    return "[" + " ".join(values) + "]"  # fmt's %v of a []string


def _tabwriter(rows: list[list[str]]) -> str:
    """printers.GetNewTabWriter: minwidth 6, padding 3; the last cell of a line is not padded."""
    if not rows:
        return ""
    widths = [max(6, max(len(r[c]) for r in rows) + 3) for c in range(len(rows[0]) - 1)]
    return "\n".join(("".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)) + r[-1]).rstrip()
                     for r in rows)
