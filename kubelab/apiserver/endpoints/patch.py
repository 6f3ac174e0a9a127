"""PATCH: compute the new object from the live one and a patch, then treat it as an update.

Three patch types, as kubectl sends them (k8s.io/apiserver/pkg/endpoints/handlers/patch.go):
- "merge": JSON merge patch (RFC 7386): objects merge key by key, null deletes, lists replace.
- "strategic": like merge, but lists of named things merge by their key (containers by name,
  conditions by type, ...) as the `patchMergeKey` tags of k8s.io/api say; built-in kinds only.
- "json": JSON patch (RFC 6902): a list of add/remove/replace/move/copy/test operations.
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api.errors import ApiError, bad_request
from kubelab.apiserver.endpoints.decode import copy_json

__all__ = ["PATCH_TYPES", "apply_patch"]

PATCH_TYPES = ("merge", "strategic", "json")

# patchMergeKey of list fields in k8s.io/api (core/v1 types.go, apps/v1, meta/v1).
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "env": "name", "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort",
    "conditions": "type", "ownerReferences": "uid", "imagePullSecrets": "name",
    "addresses": "type",
}
SET_LISTS = {"finalizers"}  # lists of strings with patchStrategy "merge": a union

_MEDIA = ("application/json-patch+json, application/merge-patch+json, "
          "application/apply-patch+yaml")


def apply_patch(live: dict[str, Any], patch: Any, patch_type: str, builtin: bool) -> Any:
    """The patched object. live is the caller's own copy and may be changed in place."""
    if patch_type not in PATCH_TYPES or (patch_type == "strategic" and not builtin):
        media = _MEDIA + (", application/strategic-merge-patch+json" if builtin else "")
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown "
                       f"format - accepted media types include: {media}")
    patch = copy_json(patch, "error decoding patch")
    if patch_type == "json":
        if not isinstance(patch, list):
            raise bad_request("json: cannot unmarshal object into Go value of type "
                              "jsonpatch.Patch")
        return _json_patch(live, patch)
    if not isinstance(patch, dict):
        raise bad_request("error decoding patch: json: cannot unmarshal array into Go value "
                          "of type map[string]interface {}")
    return _merge(live, patch, strategic=patch_type == "strategic")


def _merge(target: Any, patch: Any, strategic: bool) -> Any:
    if not isinstance(patch, dict):
        return patch
    if strategic and "$patch" in patch:  # strategicpatch handleDirectiveInMergeMap
        if patch["$patch"] == "replace":
            return {k: v for k, v in patch.items() if k != "$patch"}
        if patch["$patch"] == "delete":
            return {}
        raise _bad_patch_type(patch["$patch"], patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if strategic and key.startswith("$"):
            _directive(result, key, value)
        elif value is None:
            result.pop(key, None)
        elif strategic and isinstance(value, list) and isinstance(result.get(key), list):
            result[key] = _merge_list(result[key], value, key)
        else:
            result[key] = _merge(result.get(key), value, strategic)
    return result


def _directive(result: dict[str, Any], key: str, value: Any) -> None:
    """$deleteFromPrimitiveList/<field>: [values] removes values; other directives are hints."""
    if key.startswith("$deleteFromPrimitiveList/") and isinstance(value, list):
        field = key.split("/", 1)[1]
        if isinstance(result.get(field), list):
            result[field] = [v for v in result[field] if v not in value]


def _merge_list(live: list[Any], patch: list[Any], field: str) -> list[Any]:
    if field in SET_LISTS:
        return live + [v for v in patch if v not in live]
    key = MERGE_KEYS.get(field)
    if field == "ports" and not any(isinstance(i, dict) and "containerPort" in i
                                    for i in (*live, *patch)):
        key = "port"  # ServiceSpec.ports merge by port, a Container's by containerPort
    if key is None or not all(isinstance(item, dict) for item in (*live, *patch)):
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
            merged[where] = _merge(merged[where], item, strategic=True)
    return merged


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


# ------------------------------------------------------------------ JSON patch (RFC 6902)


def _json_patch(doc: Any, ops: list[Any]) -> Any:
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise bad_request(f"Unexpected kind: {op!r}" if isinstance(op, dict)
                              else "json: cannot unmarshal into Go value of type jsonpatch.Operation")
        kind, path = op["op"], op.get("path")
        if not isinstance(path, str):
            raise _unprocessable(f"{kind} operation does not apply: doc is missing path: "
                                 f"{json.dumps(path)}")
        if kind == "test":
            if _get(doc, path, kind) != op.get("value"):
                raise _unprocessable(f"testing value {path} failed: test failed")
        elif kind == "remove":
            doc = _remove(doc, path, kind)
        elif kind in ("add", "replace"):
            if "value" not in op:
                raise _unprocessable(f"{kind} operation does not apply: missing value")
            if kind == "replace":
                _get(doc, path, kind)
            doc = _add(doc, path, op["value"], kind, replace=kind == "replace")
        elif kind in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise _unprocessable(f"{kind} operation does not apply: doc is missing from path")
            value = _get(doc, source, kind)
            if kind == "move":
                doc = _remove(doc, source, kind)
            doc = _add(doc, path, json.loads(json.dumps(value)), kind, replace=False)
        else:
            raise bad_request(f"Unexpected kind: {kind}")
    return doc


def _unprocessable(message: str) -> ApiError:
    return ApiError(422, "Invalid", message)


def _split(path: str, kind: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _unprocessable(f"{kind} operation does not apply: doc is missing path: "
                             f"{json.dumps(path)}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, path: str, kind: str) -> tuple[Any, str]:
    parts = _split(path, kind)
    if not parts:
        raise _unprocessable(f"{kind} operation does not apply: doc is missing path: \"\"")
    node = doc
    for part in parts[:-1]:
        node = _child(node, part, path, kind)
    return node, parts[-1]


def _child(node: Any, part: str, path: str, kind: str) -> Any:
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    raise _unprocessable(f"{kind} operation does not apply: doc is missing path: "
                         f"{json.dumps(path)}")


def _get(doc: Any, path: str, kind: str) -> Any:
    node = doc
    for part in _split(path, kind):
        node = _child(node, part, path, kind)
    return node


def _remove(doc: Any, path: str, kind: str) -> Any:
    parent, last = _parent(doc, path, kind)
    _child(parent, last, path, kind)
    if isinstance(parent, dict):
        del parent[last]
    else:
        del parent[int(last)]
    return doc


def _add(doc: Any, path: str, value: Any, kind: str, replace: bool) -> Any:
    if path == "":
        return value
    parent, last = _parent(doc, path, kind)
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise _unprocessable(f"{kind} operation does not apply: doc is missing path: "
                                 f"{json.dumps(path)}")
    else:
        raise _unprocessable(f"{kind} operation does not apply: doc is missing path: "
                             f"{json.dumps(path)}")
    return doc
