"""Discovery: what a client asks first, to learn which resources the server has.

Two forms, as kube-apiserver serves them:
- the legacy documents: /api (APIVersions), /apis (APIGroupList), and one APIResourceList per
  group version (/api/v1, /apis/apps/v1): k8s.io/apiserver pkg/endpoints/discovery/;
- aggregated discovery (apidiscovery.k8s.io/v2): /api and /apis answer with every resource of
  every group in one APIGroupDiscoveryList when the client's Accept header asks for it, as
  kubectl 1.30+ does first (pkg/endpoints/discovery/aggregated/handler.go). A client that does
  not ask gets the legacy form.
Both are built on every request from what the API server serves, so a CRD's group appears the
moment the CRD is served and goes when it is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.apiextensions.versions import kube_version_key

__all__ = ["AGGREGATED_V2", "KUBE_VERSION", "aggregated", "api_group_list", "api_versions",
           "resource_list", "version_info", "wants_aggregated"]

# The release kubelab follows (docs/ARCHITECTURE.md), as /version reports it.
KUBE_VERSION = ("1", "34", "v1.34.0-kubelab")
AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
_SUBRESOURCE_VERBS = {"status": ["get", "patch", "update"], "scale": ["get", "patch", "update"],
                      "binding": ["create"], "eviction": ["create"], "log": ["get"],
                      "finalize": ["update"], "exec": ["create", "get"], "attach": ["create", "get"],
                      "portforward": ["create", "get"], "ephemeralcontainers": ["get", "patch", "update"],
                      "token": ["create"]}  # --- sa ---
_SUBRESOURCE_KINDS = {"scale": ("autoscaling", "v1", "Scale"), "binding": ("", "v1", "Binding"),
                      "eviction": ("policy", "v1", "Eviction"),
                      "exec": ("", "v1", "PodExecOptions"), "attach": ("", "v1", "PodAttachOptions"),
                      "portforward": ("", "v1", "PodPortForwardOptions"),
                      "token": ("authentication.k8s.io", "v1", "TokenRequest")}  # --- sa ---
# Resources in the "all" category: what `kubectl get all` lists.
_ALL = {"pods", "replicasets", "deployments", "services", "statefulsets", "daemonsets", "jobs",
        "cronjobs", "replicationcontrollers", "horizontalpodautoscalers"}


def version_info() -> dict[str, Any]:
    major, minor, git = KUBE_VERSION
    return {"major": major, "minor": minor, "gitVersion": git, "gitCommit": "kubelab",
            "gitTreeState": "clean", "buildDate": "2025-08-27T00:00:00Z", "goVersion": "go1.24.6",
            "compiler": "gc", "platform": "linux/amd64"}


def wants_aggregated(accept: str) -> bool:
    """Does the Accept header ask for apidiscovery.k8s.io/v2 first-class?"""
    for part in accept.split(","):
        params = {p.split("=", 1)[0].strip(): p.split("=", 1)[-1].strip() for p in part.split(";")[1:]}
        if params.get("g") == "apidiscovery.k8s.io" and params.get("v") == "v2" \
                and params.get("as") == "APIGroupDiscoveryList":
            return True
    return False


def _groups(table: Iterable[ResourceInfo]) -> dict[str, list[ResourceInfo]]:
    groups: dict[str, list[ResourceInfo]] = {}
    for info in table:
        groups.setdefault(info.group, []).append(info)
    return groups


def _versions(infos: Iterable[ResourceInfo]) -> list[str]:
    """The group's versions, preferred first: v1 before v1beta1 (kube-aware order)."""
    return sorted({i.version for i in infos}, key=kube_version_key)


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group_list(table: Iterable[ResourceInfo]) -> dict[str, Any]:
    groups = []
    for name, infos in sorted(_groups(table).items()):
        if not name:
            continue
        versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in _versions(infos)]
        groups.append({"name": name, "versions": versions, "preferredVersion": versions[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _verbs(info: ResourceInfo) -> list[str]:
    return list(info.verbs) if info.verbs else _VERBS


def _categories(info: ResourceInfo) -> list[str]:
    return ["all"] if info.resource in _ALL else []


def resource_list(table: Iterable[ResourceInfo], group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList of one group version, or None if the server has no such thing."""
    infos = [i for i in table if i.group == group and i.version == version]
    if not infos:
        return None
    resources: list[dict[str, Any]] = []
    for info in sorted(infos, key=lambda i: i.resource):
        entry: dict[str, Any] = {"name": info.resource, "singularName": info.singular,
                                 "namespaced": info.namespaced, "kind": info.kind, "verbs": _verbs(info)}
        if info.short_names:
            entry["shortNames"] = list(info.short_names)
        if _categories(info):
            entry["categories"] = _categories(info)
        resources.append(entry)
        for sub in info.subresources:
            sub_group, sub_version, sub_kind = _SUBRESOURCE_KINDS.get(sub, (group, version, info.kind))
            sub_entry: dict[str, Any] = {"name": f"{info.resource}/{sub}", "singularName": "",
                                         "namespaced": info.namespaced, "kind": sub_kind,
                                         "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"])}
            if sub_group != group:
                sub_entry.update(group=sub_group, version=sub_version)
            resources.append(sub_entry)
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": resources}


def _discovery_resource(info: ResourceInfo) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": info.resource,
        "responseKind": {"group": info.group, "version": info.version, "kind": info.kind},
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular, "verbs": _verbs(info)}
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if _categories(info):
        entry["categories"] = _categories(info)
    subs = []
    for sub in info.subresources:
        g, v, k = _SUBRESOURCE_KINDS.get(sub, (info.group, info.version, info.kind))
        subs.append({"subresource": sub, "responseKind": {"group": g, "version": v, "kind": k},
                     "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"])})
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(table: Iterable[ResourceInfo], legacy: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList for /api (legacy=True: the core group) or /apis (the rest)."""
    items = []
    for name, infos in sorted(_groups(table).items()):
        if (name == "") != legacy:
            continue
        versions = [{"version": v, "freshness": "Current",
                     "resources": [_discovery_resource(i) for i in sorted(infos, key=lambda i: i.resource)
                                   if i.version == v]}
                    for v in _versions(infos)]
        items.append({"metadata": {"name": name, "creationTimestamp": None}, "versions": versions})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {}, "items": items}
