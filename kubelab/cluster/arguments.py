"""Cluster(...)'s arguments, checked before anything is built: a wrong one is a TypeError (not
the right kind of value) or a ValueError (the right kind, out of range) that names it, never an
AttributeError from deep inside the cluster."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from kubelab.client.flowcontrol import ClientConnection

__all__ = ["check_arguments", "check_client_connections", "check_component", "check_nodes"]


def _kind(value: object) -> str:
    return type(value).__name__


def _integer(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, got {_kind(value)} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _nodes(nodes: object) -> None:
    if isinstance(nodes, int) and not isinstance(nodes, bool):
        _integer("nodes", nodes, 0)
    elif isinstance(nodes, (bool, str, bytes, Mapping)) or not isinstance(nodes, Iterable):
        raise TypeError(f"nodes must be a number of nodes or a list of Node manifests, got "
                        f"{_kind(nodes)} {nodes!r}")


def check_nodes(manifests: list[Any]) -> None:
    """Each Node manifest is a mapping with a metadata.name (a non-empty string), once."""
    seen: set[str] = set()
    for i, manifest in enumerate(manifests):
        meta = manifest.get("metadata") if isinstance(manifest, Mapping) else None
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if not isinstance(manifest, Mapping):
            raise TypeError(f"nodes[{i}] must be a Node manifest (a dict), got {_kind(manifest)}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"nodes[{i}] is a Node manifest without metadata.name: {dict(manifest)!r}")
        if name in seen:
            raise ValueError(f"nodes[{i}]: a second Node named {name!r}")
        seen.add(name)


def check_arguments(*, nodes: object, seed: object, components: object, realtime: object,
                    speed: object, max_request_bytes: object, replace: object, replicas: object,
                    store: object, etcd_members: object, hollow: object) -> None:
    _nodes(nodes)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {_kind(seed)} {seed!r}")
    if components is not None and (isinstance(components, (str, bytes, Mapping))
                                   or not isinstance(components, Iterable)):
        raise TypeError(f"components must be a list of component names, got {_kind(components)} "
                        f"{components!r}")
    for flag, value in (("realtime", realtime), ("hollow", hollow)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be True or False, got {_kind(value)} {value!r}")
    if isinstance(speed, bool) or not isinstance(speed, (int, float)):
        raise TypeError(f"speed must be a number, got {_kind(speed)} {speed!r}")
    if not (math.isfinite(speed) and speed > 0):
        raise ValueError(f"speed must be a finite number > 0, got {speed!r}")
    _integer("max_request_bytes", max_request_bytes, 1)
    if etcd_members is not None and (isinstance(etcd_members, bool) or not isinstance(etcd_members, int)):
        raise TypeError(f"etcd_members must be an integer, got {_kind(etcd_members)} {etcd_members!r}")
    if not isinstance(store, str):
        raise TypeError(f'store must be a string ("embedded", "etcd" or an etcd:// URL), got '
                        f"{_kind(store)} {store!r}")
    for name, table in (("replace", replace), ("replicas", replicas)):
        if table is not None and not isinstance(table, Mapping):
            raise TypeError(f"{name} must be a dict of component name -> "
                            f"{'constructor' if name == 'replace' else 'count'}, got "
                            f"{_kind(table)} {table!r}")
    for component, constructor in (replace or {}).items():  # type: ignore[attr-defined]
        if not callable(constructor):
            raise TypeError(f"replace[{component!r}] must be a constructor (a class or function "
                            f"taking the component's context), got {_kind(constructor)} {constructor!r}")


def check_component(name: str, component: object, replaced: bool) -> None:
    """What a constructor built can be started and stopped."""
    missing = [m for m in ("start", "stop") if not callable(getattr(component, m, None))]
    if missing:
        source = f"replace[{name!r}]" if replaced else f"the constructor of {name}"
        raise TypeError(f"{source} returned {_kind(component)} {component!r}, not a component: it "
                        f"has no {' or '.join(f'{m}()' for m in missing)}")


def check_client_connections(table: object, known: Iterable[str], sync_cost: object
                             ) -> dict[str, ClientConnection]:
    """client_connection: component name -> ClientConnection or {"qps": ..., "burst": ...};
    sync_cost: None or a number of seconds >= 0."""
    if sync_cost is not None and (isinstance(sync_cost, bool) or not isinstance(sync_cost, (int, float))):
        raise TypeError(f"sync_cost must be a number of seconds, got {_kind(sync_cost)} {sync_cost!r}")
    if sync_cost is not None and not (math.isfinite(sync_cost) and sync_cost >= 0):
        raise ValueError(f"sync_cost must be a finite number of seconds >= 0, got {sync_cost!r}")
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise TypeError(f"client_connection must be a dict of component name -> ClientConnection "
                        f"or {{'qps': ..., 'burst': ...}}, got {_kind(table)} {table!r}")
    known = set(known)
    checked: dict[str, ClientConnection] = {}
    for name, value in table.items():
        if name not in known:
            raise ValueError(f"client_connection: unknown component {name!r}; known: "
                             f"{', '.join(sorted(known))}")
        if isinstance(value, Mapping):
            extra = set(value) - {"qps", "burst"}
            if extra:
                raise ValueError(f"client_connection[{name!r}]: unknown field(s) {sorted(extra)}; "
                                 f"known: qps, burst")
            value = ClientConnection(**value)
        if not isinstance(value, ClientConnection):
            raise TypeError(f"client_connection[{name!r}] must be a ClientConnection or a dict, got "
                            f"{_kind(value)} {value!r}")
        checked[name] = value
    return checked
