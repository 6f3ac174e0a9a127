"""The protobuf field tables of scheduling/v1.

Its kinds: PriorityClass.

Transcribed from k8s.io/api scheduling/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "PriorityClass": {1: ("metadata", "ObjectMeta", ""), 2: ("value", "int", ""),
                      3: ("globalDefault", "bool", ""), 4: ("description", "str", ""),
                      5: ("preemptionPolicy", "str", "ptr")},
}
