"""The protobuf field tables of authentication/v1.

Its kinds: TokenRequest and SelfSubjectReview.

Transcribed from k8s.io/api authentication/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "BoundObjectReference": {1: ("kind", "str", ""), 2: ("apiVersion", "str", ""), 3: ("name", "str", ""),
                             4: ("uid", "str", "")},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta", ""), 2: ("status", "SelfSubjectReviewStatus", "")},
    "SelfSubjectReviewStatus": {1: ("userInfo", "UserInfo", "")},
    "TokenRequest": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "TokenRequestSpec", ""),
                     3: ("status", "TokenRequestStatus", "")},
    "TokenRequestSpec": {1: ("audiences", "str", "rep"),
                         3: ("boundObjectRef", "BoundObjectReference", "ptr"),
                         4: ("expirationSeconds", "int", "ptr")},
    "TokenRequestStatus": {1: ("token", "str", ""), 2: ("expirationTimestamp", "time", "")},
    "UserInfo": {1: ("username", "str", ""), 2: ("uid", "str", ""), 3: ("groups", "str", "rep"),
                 4: ("extra", "str", "map")},
}
