"""JSON patch (RFC 6902) and JSON merge patch (RFC 7386), the two mechanisms of
jsonPatcher (k8s.io/apiserver pkg/endpoints/handlers/patch.go applyJSPatch), which upstream
takes from gopkg.in/evanphx/json-patch (patch.go: DecodePatch, Patch.Apply; merge.go:
MergePatch), with that library's error texts.
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api.errors import ApiError, bad_request

__all__ = ["apply_json_patch", "merge_patch"]


def merge_patch(target: Any, patch: Any) -> Any:
    """MergePatch (RFC 7386): objects merge key by key, null deletes, anything else replaces.
    target is left as it was: merged objects are new dicts."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def apply_json_patch(doc: Any, ops: list[Any]) -> Any:
    """Patch.Apply (RFC 6902): the operations in order; doc may be changed in place."""
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
