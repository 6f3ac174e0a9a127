"""Several versions of a custom resource, one storage version, conversion strategy None.

apiextensions-apiserver serves every version with `served: true` and stores objects in the one
with `storage: true`. With `conversion: {strategy: None}` (the default) converting is only
rewriting apiVersion (pkg/apiserver/conversion/nop_converter.go): an object written as
example.com/v1beta1 is stored as example.com/v1, and read back through v1beta1 says v1beta1
again. Each version has its own schema, subresources and printer columns, used for requests
made at that version (pkg/apiserver/customresource_handler.go builds one crdInfo per version).

served_versions makes the Served entry of each served version other than the storage one;
to_version rewrites what a request at such a version gets back. kube_version_key orders
versions as discovery lists them (k8s.io/apimachinery pkg/version CompareKubeAwareVersionStrings:
GA before beta before alpha, higher numbers first, then other strings alphabetically).
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.request import WatchEvent
from kubelab.apiserver.apiextensions.crd import crd_schema
from kubelab.apiserver.apiextensions.handler import CustomResourceSchema
from kubelab.apiserver.apiextensions.schema import apply_defaults
from kubelab.apiserver.context import Served
from kubelab.apiserver.registry.strategy import strategy_for

__all__ = ["kube_version_key", "served_versions", "to_version", "versioned_events"]

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def kube_version_key(version: str) -> tuple[int, int, int, str]:
    """Sort key: the first key sorts first (v2, v1, v1beta2, v1beta1, v1alpha1, foo)."""
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (3, 0, 0, version)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, "")


def served_versions(crd: Object, storage: Served) -> dict[str, Served]:
    """The Served entry of each served version but the storage one."""
    out: dict[str, Served] = {}
    for version in ((crd.get("spec") or {}).get("versions") or []):
        if not isinstance(version, dict) or not version.get("served"):
            continue
        name = str(version.get("name") or "")
        if not name or name == storage.info.version:
            continue
        subresources = tuple(s for s in ("status", "scale")
                             if s in (version.get("subresources") or {}))
        info = dataclasses.replace(storage.info, version=name, subresources=subresources)
        out[name] = dataclasses.replace(
            storage, info=info, subresources=frozenset(subresources),
            strategy=strategy_for(info.resource, custom=True, has_status="status" in subresources),
            custom=crd_schema(crd, name))
    return out


def to_version(result: Any, api_version: str, custom: CustomResourceSchema | None = None) -> Any:
    """What a request at api_version gets back: objects and list items say api_version, and
    (custom given) carry the schema's defaults, which upstream applies when it reads from
    etcd, so an object stored before a default was added shows it."""
    if not isinstance(result, dict) or result.get("kind") in ("Status", "Scale"):
        return result  # not an object of the kind (a subresource's own kind, a Status)
    items = result.get("items")
    objects = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else [result]
    if isinstance(items, list) and "apiVersion" in result:  # the list itself
        result["apiVersion"] = api_version
    for obj in objects:
        if "apiVersion" in obj:
            obj["apiVersion"] = api_version
        if custom is not None and custom.has_defaults:
            apply_defaults(obj, custom.schema)
    return result


def versioned_events(on_event: Callable[[WatchEvent], None], api_version: str,
                     custom: CustomResourceSchema | None = None) -> Callable[[WatchEvent], None]:
    """A watch callback that sees each object at api_version, defaulted (a copy: the cache's
    own object is shared by every watcher)."""
    defaults = custom is not None and custom.has_defaults

    def deliver(event: WatchEvent) -> None:
        obj = event.get("object")
        if isinstance(obj, dict) and obj.get("kind") != "Status" and \
                (defaults or obj.get("apiVersion") != api_version):
            copied = copy.deepcopy(obj) if defaults else dict(obj)
            event = {**event, "object": to_version(copied, api_version, custom)}
        on_event(event)
    return deliver
