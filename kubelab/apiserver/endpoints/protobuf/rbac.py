"""The protobuf field tables of rbac/v1.

Its kinds: Role, ClusterRole and their bindings.

Transcribed from k8s.io/api rbac/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "AggregationRule": {1: ("clusterRoleSelectors", "LabelSelector", "rep")},
    "ClusterRole": {1: ("metadata", "ObjectMeta", ""), 2: ("rules", "PolicyRule", "rep"),
                    3: ("aggregationRule", "AggregationRule", "ptr")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta", ""), 2: ("subjects", "Subject", "rep"),
                           3: ("roleRef", "RoleRef", "")},
    "PolicyRule": {1: ("verbs", "str", "rep"), 2: ("apiGroups", "str", "rep"),
                   3: ("resources", "str", "rep"), 4: ("resourceNames", "str", "rep"),
                   5: ("nonResourceURLs", "str", "rep")},
    "Role": {1: ("metadata", "ObjectMeta", ""), 2: ("rules", "PolicyRule", "rep")},
    "RoleBinding": {1: ("metadata", "ObjectMeta", ""), 2: ("subjects", "Subject", "rep"),
                    3: ("roleRef", "RoleRef", "")},
    "RoleRef": {1: ("apiGroup", "str", ""), 2: ("kind", "str", ""), 3: ("name", "str", "")},
    "Subject": {1: ("kind", "str", ""), 2: ("apiGroup", "str", ""), 3: ("name", "str", ""),
                4: ("namespace", "str", "")},
}
