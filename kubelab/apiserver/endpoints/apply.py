"""Server-side apply: the server merges your intent and remembers who owns which field.

`kubectl apply --server-side` sends the whole object you want, as an apply patch
(application/apply-patch+yaml) with a field manager's name. The API server
(k8s.io/apiserver pkg/endpoints/handlers/fieldmanager, sigs.k8s.io/structured-merge-diff):
- creates the object if it does not exist;
- otherwise finds the fields the applied object sets and refuses, with 409 and the list of
  conflicts, to change a field another manager set to a different value, unless `force=true`
  (then the field changes hands);
- merges the applied fields into the live object (lists of named things by their key, like
  containers by name; other lists whole) and removes the fields this manager applied last time
  and no longer sets, unless someone else also owns them;
- records each manager's fields in metadata.managedFields, in the FieldsV1 format
  (`{"f:spec": {"f:replicas": {}}}`, list items as `k:{"name":"app"}`).

kubelab's simplification: only Apply managers are tracked. Upstream also records an Update
entry for every other write (kubectl edit, a controller's patch), so an apply can conflict
with those too; here it conflicts only with other appliers.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, field_required, invalid
from kubelab.api.strategicpatch import MERGE_KEYS
from kubelab.apiserver.endpoints.decode import decode_body
from kubelab.apiserver.storage.codec import decode

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext
    from kubelab.apiserver.registry.store import Registry

__all__ = ["server_side_apply"]

Path = tuple[str, ...]  # FieldsV1 path elements: "f:spec", "f:replicas", 'k:{"name":"app"}'
# Fields every object has that nobody manages (the server sets or owns them).
_UNMANAGED = {"apiVersion", "kind", "status"}
_META_UNMANAGED = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                   "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}


def _item_key(item: Any, key: str) -> str | None:
    return f"k:{json.dumps({key: item[key]}, separators=(',', ':'))}" if isinstance(item, dict) \
        and key in item else None


def field_paths(obj: Any, prefix: Path = (), name: str = "") -> dict[Path, Any]:
    """Every leaf field the object sets, with its value: the set FieldsV1 describes."""
    out: dict[Path, Any] = {}
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            if (not prefix and k in _UNMANAGED) or (prefix == ("f:metadata",) and k in _META_UNMANAGED):
                continue
            out.update(field_paths(v, (*prefix, f"f:{k}"), k))
    elif isinstance(obj, list) and name in MERGE_KEYS and all(isinstance(i, dict) for i in obj):
        for item in obj:
            key = _item_key(item, MERGE_KEYS[name])
            if key is not None:
                out[(*prefix, key, ".")] = None  # the item itself
                out.update(field_paths({k: v for k, v in item.items()}, (*prefix, key), ""))
    else:
        out[prefix] = obj  # a scalar, an atomic list or an empty object
    return out


def to_fields_v1(paths: dict[Path, Any]) -> Object:
    tree: Object = {}
    for path in paths:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return tree


def from_fields_v1(tree: Object, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for element, sub in tree.items():
        path = (*prefix, element)
        if isinstance(sub, dict) and sub:
            out |= from_fields_v1(sub, path)
        else:
            out.add(path)
    return out


def _get(obj: Any, path: Path) -> tuple[bool, Any]:
    for element in path:
        if element == ".":
            return True, obj
        if element.startswith("f:") and isinstance(obj, dict) and element[2:] in obj:
            obj = obj[element[2:]]
        elif element.startswith("k:") and isinstance(obj, list):
            (key, value), = json.loads(element[2:]).items()
            found = [i for i in obj if isinstance(i, dict) and i.get(key) == value]
            if not found:
                return False, None
            obj = found[0]
        else:
            return False, None
    return True, obj


def _merge(live: Any, applied: Any, name: str = "") -> Any:
    """applied's fields over live's: maps key by key, keyed lists item by item, the rest whole."""
    if isinstance(live, dict) and isinstance(applied, dict):
        out = dict(live)
        for k, v in applied.items():
            out[k] = _merge(live.get(k), v, k) if k in live else copy.deepcopy(v)
        return out
    if isinstance(live, list) and isinstance(applied, list) and name in MERGE_KEYS:
        key = MERGE_KEYS[name]
        merged = [copy.deepcopy(i) for i in live]
        for item in applied:
            match = [j for j, old in enumerate(merged) if isinstance(old, dict) and isinstance(item, dict)
                     and key in item and old.get(key) == item[key]]
            if match:
                merged[match[0]] = _merge(merged[match[0]], item)
            else:
                merged.append(copy.deepcopy(item))
        return merged
    return copy.deepcopy(applied)


def _remove(obj: Any, path: Path) -> None:
    """Remove one field (or keyed list item, for a path ending in ".") from obj, in place."""
    parent_path, last = (path[:-2], path[-2]) if path[-1] == "." else (path[:-1], path[-1])
    found, parent = _get(obj, parent_path)
    if not found:
        return
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif last.startswith("k:") and isinstance(parent, list):
        (key, value), = json.loads(last[2:]).items()
        parent[:] = [i for i in parent if not (isinstance(i, dict) and i.get(key) == value)]


def _field_string(path: Path) -> str:
    """fieldpath.Path's String(): .spec.template.spec.containers[name="app"].image"""
    out = ""
    for element in path:
        if element.startswith("f:"):
            out += "." + element[2:]
        elif element.startswith("k:"):
            (key, value), = json.loads(element[2:]).items()
            out += f"[{key}={json.dumps(value)}]"
    return out


def _conflict_error(conflicts: list[tuple[str, Path]], api_version: str) -> ApiError:
    """409 as errors.NewApplyConflict words it, the conflicts grouped by manager as
    structured-merge-diff's Conflicts.Error() prints them."""
    by_manager: dict[str, list[str]] = {}
    for manager, path in conflicts:
        by_manager.setdefault(manager, []).append(_field_string(path))
    parts = []
    for manager, fields in by_manager.items():
        if len(fields) == 1:
            parts.append(f'conflict with "{manager}" using {api_version}: {fields[0]}')
        else:
            parts.append(f'conflicts with "{manager}" using {api_version}:\n' +
                         "\n".join(f"- {f}" for f in fields))
    n = len(conflicts)
    message = f"Apply failed with {n} conflict{'s' if n > 1 else ''}: " + "\n".join(parts)
    causes = [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}" using {api_version}',
               "field": _field_string(p)} for m, p in conflicts]
    return ApiError(409, "Conflict", message, {"causes": causes})


def server_side_apply(registry: Registry, ctx: RequestContext) -> Object:
    r, served = ctx.request, ctx.served
    manager = str(r.options.get("fieldManager") or "")
    if not manager:
        raise invalid("PatchOptions", "", [field_required("fieldManager", "is required for apply patch")],
                      "meta.k8s.io")
    if not isinstance(r.body, dict):
        raise ApiError(400, "BadRequest", "error decoding YAML: the apply patch must be an object")
    applied = copy.deepcopy(r.body)
    applied.setdefault("metadata", {}).setdefault("name", r.name)
    paths = field_paths(applied)
    entry = {"manager": manager, "operation": "Apply", "apiVersion": served.info.api_version,
             "time": ctx.server.timestamp(), "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(paths)}
    try:
        kv = registry.read(ctx, r.namespace, r.name)
    except ApiError as err:
        if err.code != 404:
            raise
        applied["metadata"]["managedFields"] = [entry]
        ctx.enter("decode")
        return registry.create(ctx, decode_body(applied, served.info, served.schema))
    live = decode(kv.value, kv.mod_revision)
    managed = [m for m in (live.get("metadata") or {}).get("managedFields") or [] if isinstance(m, dict)]
    mine_before = set().union(*(from_fields_v1(m.get("fieldsV1") or {}) for m in managed
                                if m.get("manager") == manager and m.get("operation") == "Apply"))
    others = [m for m in managed if not (m.get("manager") == manager and m.get("operation") == "Apply")]
    conflicts: list[tuple[str, Path]] = []
    for other in others:
        owned = from_fields_v1(other.get("fieldsV1") or {})
        # A field both set to the same value is shared; a different value is a conflict.
        theirs = [p for p in sorted(owned & set(paths)) if p[-1] != "." and _get(live, p) != (True, paths[p])]
        conflicts += [(str(other.get("manager")), p) for p in theirs]
        if r.options.get("force"):  # the conflicting fields change hands
            other["fieldsV1"] = to_fields_v1(dict.fromkeys(owned - set(theirs)))
    if conflicts and not r.options.get("force"):
        raise _conflict_error(conflicts, served.info.api_version)
    result = _merge(live, applied)
    owned_by_others = set().union(*(from_fields_v1(m.get("fieldsV1") or {}) for m in others))
    for path in sorted(mine_before - set(paths) - owned_by_others, key=len, reverse=True):
        _remove(result, path)
    result["metadata"]["managedFields"] = [m for m in others if m.get("fieldsV1")] + [entry]
    ctx.enter("decode")
    return registry.update(ctx, decode_body(result, served.info, served.schema), kv)
