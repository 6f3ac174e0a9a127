"""RepackSubsets (pkg/api/v1/endpoints/util.go): one subset per pod and port in, the fewest
subsets out. Each port is mapped to the addresses that offer it (an address ready on one
subset and not ready on another counts as ready), addresses offering the same set of ports
share a subset, and everything is sorted.

Departure: upstream sorts ports and subsets by an md5 hash of their Go printing (portsByHash,
subsetsByHash), an order a learner cannot predict; kubelab sorts ports by (name, port,
protocol) and subsets by their first address. Addresses are sorted as upstream does, by IP
then by the UID of their targetRef.
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api import Object

__all__ = ["repack_subsets", "sort_subsets"]

_NO_PORT = json.dumps({"port": -1})  # the sentinel of a subset without ports


def _address_key(address: Object) -> tuple[str, str]:
    """addressKey: an IP and the UID of the object it came from."""
    return address.get("ip", ""), (address.get("targetRef") or {}).get("uid", "")


def repack_subsets(subsets: list[Object]) -> list[Object]:
    all_addresses: dict[tuple[str, str], Object] = {}
    # port (as JSON, Go's struct key) -> address key -> ready
    port_to_ready: dict[str, dict[tuple[str, str], bool]] = {}
    for subset in subsets:
        port_keys = [json.dumps(p, sort_keys=True) for p in subset.get("ports") or []] or [_NO_PORT]
        for port_key in port_keys:
            for field, is_ready in (("addresses", True), ("notReadyAddresses", False)):
                for address in subset.get(field) or []:  # mapAddressByPort
                    address_key = _address_key(address)
                    all_addresses.setdefault(address_key, dict(address))
                    readiness = port_to_ready.setdefault(port_key, {})
                    if not readiness.get(address_key, False):
                        readiness[address_key] = is_ready
    # The set of addresses (with readiness) -> the ports they offer.
    by_addresses: dict[str, tuple[dict[tuple[str, str], bool], list[Object]]] = {}
    for port, ready_map in port_to_ready.items():
        key = json.dumps(sorted(ready_map.items()))
        _, ports = by_addresses.setdefault(key, (ready_map, []))
        if port != _NO_PORT:
            ports.append(json.loads(port))
    final: list[Object] = []
    for ready_map, ports in by_addresses.values():
        packed: Object = {}
        ready = [all_addresses[k] for k, r in ready_map.items() if r]
        not_ready = [all_addresses[k] for k, r in ready_map.items() if not r]
        if ready:
            packed["addresses"] = ready
        if not_ready:
            packed["notReadyAddresses"] = not_ready
        if ports:
            packed["ports"] = ports
        final.append(packed)
    return sort_subsets(final)


def _port_order(port: Object) -> tuple[Any, ...]:
    return port.get("name", ""), port.get("port", 0), port.get("protocol", "")


def sort_subsets(subsets: list[Object]) -> list[Object]:
    """SortSubsets: the addresses of each subset by IP and UID, its ports, then the subsets."""
    for subset in subsets:
        for field in ("addresses", "notReadyAddresses"):
            if subset.get(field):
                subset[field].sort(key=_address_key)
        if subset.get("ports"):
            subset["ports"].sort(key=_port_order)

    def first(subset: Object) -> tuple[Any, ...]:
        addresses = subset.get("addresses") or subset.get("notReadyAddresses") or [{}]
        return _address_key(addresses[0]), [_port_order(p) for p in subset.get("ports") or []]
    return sorted(subsets, key=first)
