"""The protobuf field tables of meta/v1.

Its kinds: ObjectMeta, LabelSelector, DeleteOptions and the other messages every kind embeds.

Transcribed from k8s.io/apimachinery pkg/apis/meta/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "Condition": {1: ("type", "str", ""), 2: ("status", "str", ""), 3: ("observedGeneration", "int", ""),
                  4: ("lastTransitionTime", "time", ""), 5: ("reason", "str", ""),
                  6: ("message", "str", "")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "int", "ptr"), 2: ("preconditions", "Preconditions", "ptr"),
                      3: ("orphanDependents", "bool", "ptr"), 4: ("propagationPolicy", "str", "ptr"),
                      5: ("dryRun", "str", "rep"),
                      6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "bool", "ptr")},
    "FieldSelectorRequirement": {1: ("key", "str", ""), 2: ("operator", "str", ""),
                                 3: ("values", "str", "rep")},
    "LabelSelector": {1: ("matchLabels", "str", "map"),
                      2: ("matchExpressions", "LabelSelectorRequirement", "rep")},
    "LabelSelectorRequirement": {1: ("key", "str", ""), 2: ("operator", "str", ""),
                                 3: ("values", "str", "rep")},
    "ManagedFieldsEntry": {1: ("manager", "str", ""), 2: ("operation", "str", ""),
                           3: ("apiVersion", "str", ""), 4: ("time", "time", "ptr"),
                           6: ("fieldsType", "str", ""), 7: ("fieldsV1", "raw", "ptr"),
                           8: ("subresource", "str", "")},
    "ObjectMeta": {1: ("name", "str", ""), 2: ("generateName", "str", ""), 3: ("namespace", "str", ""),
                   4: ("selfLink", "str", ""), 5: ("uid", "str", ""), 6: ("resourceVersion", "str", ""),
                   7: ("generation", "int", ""), 8: ("creationTimestamp", "time", ""),
                   9: ("deletionTimestamp", "time", "ptr"),
                   10: ("deletionGracePeriodSeconds", "int", "ptr"), 11: ("labels", "str", "map"),
                   12: ("annotations", "str", "map"), 13: ("ownerReferences", "OwnerReference", "rep"),
                   14: ("finalizers", "str", "rep"), 17: ("managedFields", "ManagedFieldsEntry", "rep")},
    "OwnerReference": {1: ("kind", "str", ""), 3: ("name", "str", ""), 4: ("uid", "str", ""),
                       5: ("apiVersion", "str", ""), 6: ("controller", "bool", "ptr"),
                       7: ("blockOwnerDeletion", "bool", "ptr")},
    "Preconditions": {1: ("uid", "str", "ptr"), 2: ("resourceVersion", "str", "ptr")},
}
