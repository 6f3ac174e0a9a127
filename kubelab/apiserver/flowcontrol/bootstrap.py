"""The APF objects every API server makes sure exist: upstream's bootstrap configuration.

Follows k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go (Kubernetes 1.34): the
mandatory PriorityLevelConfigurations exempt and catch-all with their FlowSchemas, and the
suggested ones (system, node-high, leader-election, workload-high, workload-low,
global-default) with theirs. Each carries the annotation apf.kubernetes.io/autoupdate-spec:
"true", as upstream's, meaning the server may rewrite it. 1.34 no longer suggests the
FlowSchemas workload-leader-election and endpoint-controller: both served leader election
through Endpoints and ConfigMaps, which is gone (kubernetes commit 2800c16c, "Remove
FlowSchemas handling non-leases-backed leader election", first in 1.34.0), so neither do we.
tests/test_apf_classify.py compares every object with default.go at kubernetes-1.34.0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.apiserver.bootstrap import ensure_objects

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["AUTO_UPDATE", "GROUP", "MANDATORY_FLOW_SCHEMAS", "MANDATORY_PRIORITY_LEVELS",
           "SUGGESTED_FLOW_SCHEMAS", "SUGGESTED_PRIORITY_LEVELS", "config_objects",
           "ensure_config_objects"]

GROUP = "flowcontrol.apiserver.k8s.io"
API_VERSION = f"{GROUP}/v1"
AUTO_UPDATE = "apf.kubernetes.io/autoupdate-spec"

Obj = dict[str, Any]


def _meta(name: str) -> Obj:
    return {"name": name, "annotations": {AUTO_UPDATE: "true"}}


def priority_level(name: str, shares: int, lendable: int, queues: int = 0, hand_size: int = 0,
                   queue_length_limit: int = 0) -> Obj:
    """A Limited level; queues=0 makes its limitResponse Reject."""
    response: Obj = {"type": "Reject"}
    if queues:
        response = {"type": "Queue", "queuing": {"queues": queues, "handSize": hand_size,
                                                 "queueLengthLimit": queue_length_limit}}
    return {"apiVersion": API_VERSION, "kind": "PriorityLevelConfiguration", "metadata": _meta(name),
            "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": shares, "lendablePercent": lendable,
                "limitResponse": response}}}


def _subjects(kind: str, *names: str) -> list[Obj]:
    if kind == "ServiceAccount":  # kubeSystemServiceAccount
        return [{"kind": kind, "serviceAccount": {"name": n, "namespace": "kube-system"}}
                for n in names]
    return [{"kind": kind, kind.lower(): {"name": n}} for n in names]


def _resource_rule(verbs: list[str], groups: list[str], resources: list[str],
                   cluster_scope: bool) -> Obj:
    return {"verbs": verbs, "apiGroups": groups, "resources": resources, "namespaces": ["*"],
            "clusterScope": cluster_scope}


EVERYTHING = [_resource_rule(["*"], ["*"], ["*"], True)]
EVERY_PATH = [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def flow_schema(name: str, level: str, precedence: int, distinguisher: str, subjects: list[Obj],
                resource_rules: list[Obj] | None = None,
                non_resource_rules: list[Obj] | None = None) -> Obj:
    rule: Obj = {"subjects": subjects}
    if resource_rules:
        rule["resourceRules"] = resource_rules
    if non_resource_rules:
        rule["nonResourceRules"] = non_resource_rules
    spec: Obj = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence}
    if distinguisher:
        spec["distinguisherMethod"] = {"type": distinguisher}
    spec["rules"] = [rule]
    return {"apiVersion": API_VERSION, "kind": "FlowSchema", "metadata": _meta(name), "spec": spec}


EXEMPT_LEVEL: Obj = {
    "apiVersion": API_VERSION, "kind": "PriorityLevelConfiguration", "metadata": _meta("exempt"),
    "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}}

MANDATORY_PRIORITY_LEVELS: list[Obj] = [priority_level("catch-all", 5, 0), EXEMPT_LEVEL]
MANDATORY_FLOW_SCHEMAS: list[Obj] = [
    flow_schema("exempt", "exempt", 1, "", _subjects("Group", "system:masters"),
                EVERYTHING, EVERY_PATH),
    flow_schema("catch-all", "catch-all", 10000, "ByUser",
                _subjects("Group", "system:unauthenticated", "system:authenticated"),
                EVERYTHING, EVERY_PATH),
]

SUGGESTED_PRIORITY_LEVELS: list[Obj] = [
    priority_level("system", 30, 33, 64, 6, 50),
    priority_level("node-high", 40, 25, 64, 6, 50),
    priority_level("leader-election", 10, 0, 16, 4, 50),
    priority_level("workload-high", 40, 50, 128, 6, 50),
    priority_level("workload-low", 100, 90, 128, 6, 50),
    priority_level("global-default", 20, 50, 128, 6, 50),
]

_EVERYONE = _subjects("Group", "system:unauthenticated", "system:authenticated")
_LEASES = _resource_rule(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], False)
SUGGESTED_FLOW_SCHEMAS: list[Obj] = [
    flow_schema("system-nodes", "system", 500, "ByUser", _subjects("Group", "system:nodes"),
                EVERYTHING, EVERY_PATH),
    flow_schema("system-node-high", "node-high", 400, "ByUser", _subjects("Group", "system:nodes"),
                [_resource_rule(["*"], [""], ["nodes", "nodes/status"], True),
                 _resource_rule(["*"], ["coordination.k8s.io"], ["leases"], False)]),
    flow_schema("probes", "exempt", 2, "", _EVERYONE, None,
                [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]),
    flow_schema("system-leader-election", "leader-election", 100, "ByUser",
                _subjects("User", "system:kube-controller-manager", "system:kube-scheduler")
                + _subjects("ServiceAccount", "*"), [_LEASES]),
    flow_schema("kube-controller-manager", "workload-high", 800, "ByNamespace",
                _subjects("User", "system:kube-controller-manager"), EVERYTHING, EVERY_PATH),
    flow_schema("kube-scheduler", "workload-high", 800, "ByNamespace",
                _subjects("User", "system:kube-scheduler"), EVERYTHING, EVERY_PATH),
    flow_schema("kube-system-service-accounts", "workload-high", 900, "ByNamespace",
                _subjects("ServiceAccount", "*"), EVERYTHING, EVERY_PATH),
    flow_schema("service-accounts", "workload-low", 9000, "ByUser",
                _subjects("Group", "system:serviceaccounts"), EVERYTHING, EVERY_PATH),
    flow_schema("global-default", "global-default", 9900, "ByUser", _EVERYONE,
                EVERYTHING, EVERY_PATH),
]


def config_objects() -> list[tuple[str, Obj]]:
    """(resource, object) for every bootstrap object, levels before the schemas naming them."""
    return ([("prioritylevelconfigurations", pl)
             for pl in MANDATORY_PRIORITY_LEVELS + SUGGESTED_PRIORITY_LEVELS]
            + [("flowschemas", fs) for fs in MANDATORY_FLOW_SCHEMAS + SUGGESTED_FLOW_SCHEMAS])


def ensure_config_objects(server: APIServer) -> None:
    """Create every bootstrap FlowSchema and PriorityLevelConfiguration that is missing, as
    the configuration ensurer does at each start (pkg/registry/flowcontrol/ensurer), through
    the one function that creates the server's bootstrap objects."""
    ensure_objects(server, [(GROUP, resource, obj) for resource, obj in config_objects()])
