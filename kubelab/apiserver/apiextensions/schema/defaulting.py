"""Pruning and defaulting of a custom object by its structural schema.

prune follows pkg/apiserver/schema/pruning/algorithm.go: a field the schema does not specify
is dropped, unless the schema around it says `x-kubernetes-preserve-unknown-fields: true`;
apiVersion, kind and metadata of the object (and of each `x-kubernetes-embedded-resource`)
are the server's, never pruned. It returns the paths it dropped, which a Strict request turns
into `strict decoding error: unknown field "spec.foo"` (pkg/apiserver/schema/objectmeta and
the unstructured decoder's strict mode do the same upstream).

apply_defaults follows pkg/apiserver/schema/defaulting/algorithm.go: a field that is absent,
or null where the schema is not nullable, gets a copy of its `default`; then defaulting goes
on inside it. As upstream, defaults apply when a request is decoded (create, update) and when
an object is read from the store (get, list, watch: versions.to_version), so an object
written before a default existed shows it without being rewritten.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["apply_defaults", "prune"]

META_FIELDS = ("apiVersion", "kind", "metadata")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune(value: Any, schema: dict[str, Any], path: str = "", root: bool = True) -> list[str]:
    """Drop what schema does not specify from value, in place; the dropped paths."""
    dropped: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        resource_root = root or bool(schema.get("x-kubernetes-embedded-resource"))
        for key in sorted(value):
            if resource_root and key in META_FIELDS:
                continue
            sub = properties.get(key)
            if sub is None and isinstance(additional, dict):
                sub = additional
            if isinstance(sub, dict):
                dropped += prune(value[key], sub, _join(path, key), False)
            elif additional is True or schema.get("x-kubernetes-preserve-unknown-fields"):
                continue
            else:
                del value[key]
                dropped.append(_join(path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            dropped += prune(item, schema["items"], f"{path}[{i}]", False)
    return dropped


def apply_defaults(value: Any, schema: dict[str, Any]) -> None:
    """Fill in schema defaults in value, in place (defaulting.Default)."""
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, sub in properties.items():
            if not isinstance(sub, dict) or "default" not in sub:
                continue
            if key not in value or (value[key] is None and not sub.get("nullable")):
                value[key] = copy.deepcopy(sub["default"])
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, additional)
            if isinstance(sub, dict):
                apply_defaults(item, sub)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])
