"""Client-side `kubectl apply`: create what is missing, patch what changed, say which.

kubectl remembers what you applied last in the annotation
kubectl.kubernetes.io/last-applied-configuration and sends a three-way patch: fields you removed
from the file since last time are deleted, fields you set are set, fields others set (a
controller's status, the scheduler's nodeName) are left alone. For built-in kinds kubectl sends
a strategic merge patch (CreateThreeWayMergePatch, kubelab.api.strategicpatch): lists of
containers, env vars, ports, volumes merge by their key, and an item dropped from the file is
deleted with a `$patch: delete` item; for custom resources a JSON merge patch
(jsonmergepatch.CreateThreeWayJSONMergePatch, three_way_merge_patch here), whose lists are
replaced whole. kubelab's departure: the strategic patch carries no `$setElementOrder`
directives, so a reordered list keeps the live order.
(kubectl: staging/src/k8s.io/kubectl/pkg/cmd/apply/patcher.go)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.resources import BUILTIN_RESOURCES
from kubelab.api.strategicpatch import three_way_strategic_patch
from kubelab.client.client import Client

__all__ = ["LAST_APPLIED", "WARNING_NO_LAST_APPLIED", "apply_objects", "three_way_merge_patch"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

def three_way_merge_patch(original: Any, modified: Any, current: Any) -> Any:
    """The merge patch taking `current` to `modified`, deleting what `original` had and
    `modified` dropped. Returns {} when nothing needs to change."""
    if not (isinstance(modified, dict) and isinstance(current, dict)):
        return modified
    original = original if isinstance(original, dict) else {}
    patch: Object = {}
    for key in original:
        if key not in modified and key in current:
            patch[key] = None
    for key, value in modified.items():
        have = current.get(key)
        if isinstance(value, dict) and isinstance(have, dict):
            sub = three_way_merge_patch(original.get(key), value, have)
            if sub != {}:
                patch[key] = sub
        elif have != value or key not in current:
            patch[key] = value
    return patch


def _display(obj: Object, group: str) -> str:
    kind = str(obj.get("kind", "")).lower()
    return f"{kind}.{group}/{obj['metadata'].get('name', '')}" if group else \
        f"{kind}/{obj['metadata'].get('name', '')}"


WARNING_NO_LAST_APPLIED = (
    "Warning: resource {} is missing the " + LAST_APPLIED + " annotation which is required by "
    "kubectl apply. kubectl apply should only be used on resources created declaratively by either "
    "kubectl create --save-config or kubectl apply. The missing annotation will be patched "
    "automatically.")


def apply_objects(client: Client, objects: list[Object], warn: Callable[[str], None] | None = None
                  ) -> list[str]:
    """Apply each object in order; returns kubectl's lines (`deployment.apps/web created`).
    warn hears apply.go's warning about a live object that was never applied (kubectl prints it
    on stderr)."""
    lines = []
    for obj in objects:
        info = client.resource_for(obj)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):  # the server's decoder says why, in Go's words
            lines.append(f"{_display(client.create(obj), info.group)} created")
            continue
        # A name or namespace that is not a string counts as none (unstructured GetName);
        # the server's decoder refuses the object then.
        name = meta.get("name") if isinstance(meta.get("name"), str) else ""
        namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
        namespace = (namespace or "default") if info.namespaced else ""
        applied = json.dumps(obj, sort_keys=True, separators=(",", ":"))
        try:
            current = client.get(info.resource, name, namespace) if name else None
        except ApiError as err:
            if err.code != 404:
                raise
            current = None
        if current is None:
            new = json.loads(applied)
            new["metadata"].setdefault("annotations", {})[LAST_APPLIED] = applied
            created = client.create(new, namespace)
            lines.append(f"{_display(created, info.group)} created")
            continue
        previous = (current["metadata"].get("annotations") or {}).get(LAST_APPLIED)
        if previous is None and warn is not None:
            warn(WARNING_NO_LAST_APPLIED.format(f"{info.resource}/{current['metadata']['name']}"))
        original = json.loads(previous) if previous else {}
        strategic = info in BUILTIN_RESOURCES
        diff = three_way_strategic_patch if strategic else three_way_merge_patch
        patch = diff(original, json.loads(applied), current)
        if previous != applied:
            patch.setdefault("metadata", {}).setdefault("annotations", {})[LAST_APPLIED] = applied
        if not patch:
            lines.append(f"{_display(current, info.group)} unchanged")
            continue
        patch_type = "strategic" if strategic else "merge"
        patched = client.patch(info.resource, current["metadata"]["name"], patch, namespace,
                               patch_type=patch_type)
        lines.append(f"{_display(patched, info.group)} configured")
    return lines
