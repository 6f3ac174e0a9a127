"""The protobuf field tables of authorization/v1.

Its kinds: the self subject access and rules reviews.

Transcribed from k8s.io/api authorization/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "FieldSelectorAttributes": {1: ("rawSelector", "str", ""),
                                2: ("requirements", "FieldSelectorRequirement", "rep")},
    "LabelSelectorAttributes": {1: ("rawSelector", "str", ""),
                                2: ("requirements", "LabelSelectorRequirement", "rep")},
    "NonResourceAttributes": {1: ("path", "str", ""), 2: ("verb", "str", "")},
    "NonResourceRule": {1: ("verbs", "str", "rep"), 2: ("nonResourceURLs", "str", "rep")},
    "ResourceAttributes": {1: ("namespace", "str", ""), 2: ("verb", "str", ""), 3: ("group", "str", ""),
                           4: ("version", "str", ""), 5: ("resource", "str", ""),
                           6: ("subresource", "str", ""), 7: ("name", "str", ""),
                           8: ("fieldSelector", "FieldSelectorAttributes", "ptr"),
                           9: ("labelSelector", "LabelSelectorAttributes", "ptr")},
    "ResourceRule": {1: ("verbs", "str", "rep"), 2: ("apiGroups", "str", "rep"),
                     3: ("resources", "str", "rep"), 4: ("resourceNames", "str", "rep")},
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta", ""),
                                2: ("spec", "SelfSubjectAccessReviewSpec", ""),
                                3: ("status", "SubjectAccessReviewStatus", "")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes", "ptr"),
                                    2: ("nonResourceAttributes", "NonResourceAttributes", "ptr")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta", ""),
                               2: ("spec", "SelfSubjectRulesReviewSpec", ""),
                               3: ("status", "SubjectRulesReviewStatus", "")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "str", "")},
    "SubjectAccessReviewStatus": {1: ("allowed", "bool", ""), 2: ("reason", "str", ""),
                                  3: ("evaluationError", "str", ""), 4: ("denied", "bool", "")},
    "SubjectRulesReviewStatus": {1: ("resourceRules", "ResourceRule", "rep"),
                                 2: ("nonResourceRules", "NonResourceRule", "rep"),
                                 3: ("incomplete", "bool", ""), 4: ("evaluationError", "str", "")},
}
