"""Pruning and defaulting of a custom object by its structural schema.

prune follows pkg/apiserver/schema/pruning/algorithm.go: a field the schema does not specify
is dropped, unless the schema around it says `x-kubernetes-preserve-unknown-fields: true`
(whose specified fields are still pruned by their own schemas); apiVersion, kind and metadata
of the object (and of each `x-kubernetes-embedded-resource`) are the server's, never pruned.
What has no schema is unspecified all the way down: the items of an array without `items`,
the values under `additionalProperties: true` or `false` (the key stays; an object value is
emptied, as structural schemas give a boolean additionalProperties no schema). It returns
the paths it dropped, sorted, which a Strict request turns into `strict decoding error:
unknown field "spec.foo"` (pkg/apiserver/schema/objectmeta and the unstructured decoder's
strict mode do the same upstream).

apply_defaults follows pkg/apiserver/schema/defaulting/algorithm.go: a field that is absent,
or null where the schema is not nullable, gets a copy of its `default`, and so does a null
list item or additionalProperties value whose schema is not nullable; then defaulting goes
on inside it (a `default: null` is no default). As upstream, defaults apply when a request
is decoded (create, update) and when an object is read from the store (get, list, watch:
versions.to_version), so an object written before a default existed shows it without being
rewritten.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["apply_defaults", "prune"]

META_FIELDS = ("apiVersion", "kind", "metadata")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune(value: Any, schema: dict[str, Any] | None, path: str = "", root: bool = True) -> list[str]:
    """Drop what schema does not specify from value, in place; the dropped paths, sorted
    (PruneWithOptions). root: value is a resource (isResourceRoot), whose apiVersion, kind and
    metadata stay."""
    if root:
        schema = {**(schema or {}), "x-kubernetes-embedded-resource": True}
    dropped: list[str] = []
    _prune(value, schema, path, dropped)
    return sorted(dropped)


def _additional(schema: dict[str, Any]) -> tuple[bool, dict[str, Any] | None]:
    """(is additionalProperties set, its schema): true and false both have no schema, so the
    values under them are pruned as unspecified (a scalar stays, an object is emptied)."""
    additional = schema.get("additionalProperties")
    return additional is not None, additional if isinstance(additional, dict) else None


def _prune(value: Any, schema: dict[str, Any] | None, path: str, dropped: list[str]) -> None:
    if schema is not None and schema.get("x-kubernetes-preserve-unknown-fields"):
        _skip_prune(value, schema, path, dropped)
        return
    if isinstance(value, dict):
        if schema is None:
            dropped += [_join(path, k) for k in value]
            value.clear()
            return
        properties = schema.get("properties") or {}
        has_additional, additional = _additional(schema)
        embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        for key in list(value):
            if embedded and key in META_FIELDS:
                continue
            if key in properties:
                _prune(value[key], properties[key], _join(path, key), dropped)
            elif has_additional:
                _prune(value[key], additional, _join(path, key), dropped)
            else:
                if key not in META_FIELDS or path:
                    dropped.append(_join(path, key))
                del value[key]
    elif isinstance(value, list):
        items = None if schema is None else schema.get("items")
        for i, item in enumerate(value):  # no items: each is unspecified
            _prune(item, items if isinstance(items, dict) else None, f"{path}[{i}]", dropped)


def _skip_prune(value: Any, schema: dict[str, Any] | None, path: str, dropped: list[str]) -> None:
    """skipPrune: under x-kubernetes-preserve-unknown-fields unknown fields stay, but the
    specified ones are pruned by their own schemas."""
    if schema is None:
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        has_additional, additional = _additional(schema)
        embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        for key in list(value):
            if embedded and key in META_FIELDS:
                continue
            if key in properties:
                _prune(value[key], properties[key], _join(path, key), dropped)
            elif has_additional:
                _prune(value[key], additional, _join(path, key), dropped)
    elif isinstance(value, list):
        items = schema.get("items")
        for i, item in enumerate(value):
            _skip_prune(item, items if isinstance(items, dict) else None, f"{path}[{i}]", dropped)


def _is_non_nullable_null(value: Any, schema: Any) -> bool:
    return value is None and isinstance(schema, dict) and not schema.get("nullable")


def apply_defaults(value: Any, schema: dict[str, Any] | None) -> None:
    """Fill in schema defaults in value, in place (defaulting.Default): a property that is
    absent, or null where its schema is not nullable, gets a copy of its default, and so does
    a null value under additionalProperties or in a list whose items are not nullable."""
    if schema is None:
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, sub in properties.items():
            if not isinstance(sub, dict) or sub.get("default") is None:
                continue
            if key not in value or _is_non_nullable_null(value[key], sub):
                value[key] = copy.deepcopy(sub["default"])
        additional = schema.get("additionalProperties")
        for key in value:
            if key in properties:
                apply_defaults(value[key], properties[key])
            elif isinstance(additional, dict):
                if _is_non_nullable_null(value[key], additional):
                    value[key] = copy.deepcopy(additional.get("default"))
                apply_defaults(value[key], additional)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        for i, item in enumerate(value):
            if _is_non_nullable_null(item, items):
                value[i] = copy.deepcopy(items.get("default"))
            apply_defaults(value[i], items)
