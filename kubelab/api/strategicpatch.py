"""Strategic merge patch (k8s.io/apimachinery pkg/util/strategicpatch patch.go), both halves:
the API server applies one (smpPatcher, k8s.io/apiserver pkg/endpoints/handlers/patch.go
strategicPatchObject: StrategicMergeMapPatch, mergeMap, mergeSliceWithSpecialElements, with
their error texts) and kubectl computes one (CreateThreeWayMergePatch for `kubectl apply`,
pkg/cmd/apply/patcher.go; CreateTwoWayMergePatch for `kubectl set`). Both live here, in
kubelab.api, because kubectl never imports the API server. Built-in kinds only: the merge keys
are the `patchMergeKey` tags of k8s.io/api's types (a custom resource has none).

kubelab's departure: the merge keys are a table by field name (MERGE_KEYS), not looked up in
each type's schema, so a field named like one of them merges by that key in any kind.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError

__all__ = ["MERGE_KEYS", "SET_LISTS", "go_value", "merge_key", "strategic_merge_patch",
           "three_way_strategic_patch", "two_way_strategic_patch"]

# patchMergeKey of list fields in k8s.io/api (core/v1 types.go, apps/v1, meta/v1).
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "env": "name", "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort",
    "conditions": "type", "ownerReferences": "uid", "imagePullSecrets": "name",
    "addresses": "type",
}
SET_LISTS = {"finalizers"}  # lists of strings with patchStrategy "merge": a union


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """StrategicMergeMapPatch: a merge patch whose lists of named things merge by their key
    (MERGE_KEYS), with the $patch and $deleteFromPrimitiveList directives. target is left as
    it was: merged objects are new dicts."""
    if not isinstance(patch, dict):
        return patch
    if "$patch" in patch:  # strategicpatch handleDirectiveInMergeMap
        if patch["$patch"] == "replace":
            return {k: v for k, v in patch.items() if k != "$patch"}
        if patch["$patch"] == "delete":
            return {}
        raise _bad_patch_type(patch["$patch"], patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            _directive(result, key, value)
        elif value is None:
            result.pop(key, None)
        elif isinstance(value, list) and isinstance(result.get(key), list):
            result[key] = _merge_list(result[key], value, key)
        else:
            result[key] = strategic_merge_patch(result.get(key), value)
    return result


def _directive(result: dict[str, Any], key: str, value: Any) -> None:
    """$deleteFromPrimitiveList/<field>: [values] removes values; other directives are hints."""
    if key.startswith("$deleteFromPrimitiveList/") and isinstance(value, list):
        field = key.split("/", 1)[1]
        if isinstance(result.get(field), list):
            result[field] = [v for v in result[field] if v not in value]


def merge_key(field: str, *lists: list[Any]) -> str | None:
    """The patchMergeKey of a list field, when its items are maps (None: the list is atomic)."""
    items = [i for items in lists for i in items]
    key = MERGE_KEYS.get(field)
    if field == "ports" and not any(isinstance(i, dict) and "containerPort" in i for i in items):
        key = "port"  # ServiceSpec.ports merge by port, a Container's by containerPort
    if key is None or not all(isinstance(item, dict) for item in items):
        return None
    return key


def _merge_list(live: list[Any], patch: list[Any], field: str) -> list[Any]:
    if field in SET_LISTS:
        return live + [v for v in patch if v not in live]
    key = merge_key(field, live, patch)
    if key is None:
        return patch
    merged = list(live)
    items = []
    for item in patch:  # mergeSliceWithSpecialElements: the $patch items first
        directive = item.get("$patch")
        if directive is None:
            if key not in item:
                raise _no_merge_key(item, key)
            items.append(item)
        elif directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            merged = [old for old in merged if old.get(key) != item[key]]
        elif directive == "replace":
            return [i for i in patch if "$patch" not in i]
        elif directive == "merge":
            raise _smp_error("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, item)
    for item in items:
        where = next((i for i, old in enumerate(merged) if old.get(key) == item.get(key)), None)
        if where is None:
            merged.append(item)
        else:
            merged[where] = strategic_merge_patch(merged[where], item)
    return merged


def three_way_strategic_patch(original: Any, modified: Any, current: Any) -> Any:
    """CreateThreeWayMergePatch: the patch taking `current` to `modified` (what it sets or
    changes), with the deletions of what `original` (the last applied) had and `modified`
    dropped: `null` for a field, `{"$patch": "delete", <key>: ...}` for an item of a list that
    merges by key, `$deleteFromPrimitiveList/<field>` for a set list's value. What others set
    (a controller's status, the scheduler's nodeName) and `original` never had stays. {} when
    nothing needs to change."""
    if not (isinstance(modified, dict) and isinstance(current, dict)):
        return modified
    original = original if isinstance(original, dict) else {}
    patch: dict[str, Any] = {key: None for key in original if key not in modified and key in current}
    for key, value in modified.items():
        have = current.get(key)
        if isinstance(value, dict) and isinstance(have, dict):
            sub = three_way_strategic_patch(original.get(key), value, have)
            if sub != {}:
                patch[key] = sub
        elif isinstance(value, list) and isinstance(have, list):
            was = original.get(key)
            patch.update(_three_way_list(key, was if isinstance(was, list) else [], value, have))
        elif have != value or key not in current:
            patch[key] = value
    return patch


def _three_way_list(field: str, original: list[Any], modified: list[Any],
                    current: list[Any]) -> dict[str, Any]:
    """diffLists, for one list field: its part of the patch ({} when it needs none)."""
    if field in SET_LISTS:
        gone = [v for v in original if v not in modified and v in current]
        out: dict[str, Any] = {}
        if gone:
            out[f"$deleteFromPrimitiveList/{field}"] = gone
        added = [v for v in modified if v not in current]
        if added:
            out[field] = added
        return out
    key = merge_key(field, original, modified, current)
    if key is None or not all(key in item for item in (*original, *modified, *current)):
        return {} if modified == current else {field: modified}  # an atomic list: replaced
    items: list[Any] = []
    for item in modified:
        have = next((c for c in current if c[key] == item[key]), None)
        if have is None:
            items.append(item)
            continue
        was = next((o for o in original if o[key] == item[key]), None)
        sub = three_way_strategic_patch(was, item, have)
        if sub != {}:
            items.append({key: item[key], **sub})
    kept = {item[key] for item in modified}
    items += [{"$patch": "delete", key: o[key]} for o in original
              if o[key] not in kept and any(c[key] == o[key] for c in current)]
    return {field: items} if items else {}


def two_way_strategic_patch(before: Any, after: Any) -> Any:
    """CreateTwoWayMergePatch: the patch taking `before` to `after`, deleting what `after`
    dropped ({} when they are equal); what `kubectl set` sends."""
    return three_way_strategic_patch(before, after, before)


def _smp_error(message: str) -> ApiError:
    """The strategic merge errors that are not Status errors upstream: the handler passes them
    on as they are, so they reach the client as 500 with no reason (`Error from server: ...`)."""
    return ApiError(500, "", message)


def _no_merge_key(item: dict[str, Any], key: str) -> ApiError:
    return _smp_error(f"map: {go_value(item)} does not contain declared merge key: {key}")


def _bad_patch_type(directive: Any, item: dict[str, Any]) -> ApiError:
    shown = directive if isinstance(directive, str) else f"%!s({go_value(directive)})"
    return _smp_error(f"unknown patch type: {shown} in map: {go_value(item)}")


def go_value(value: Any) -> str:
    """A JSON value as Go's %v prints it: map[a:1 b:[x y]], keys sorted, <nil> for null."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
