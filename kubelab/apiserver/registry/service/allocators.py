"""ClusterIP and NodePort allocation, as the Service REST does it on create, update and delete.

Follows pkg/registry/core/service/storage/alloc.go (allocateCreate, allocateUpdate, the
errors wrapped into 422 Invalid), ipallocator/bitmap.go and portallocator/allocator.go (a
range, a random start with a low band kept for static picks: calculateRangeOffset) and
ipallocator/controller/repair.go (after a restart the allocations are rebuilt from the
stored Services).

Where kubelab departs: Kubernetes 1.34 records each ClusterIP as a networking.k8s.io/v1
IPAddress object (MultiCIDRServiceAllocator, GA in 1.33). kubelab keeps the allocations in the
API server's memory and rebuilds them from the stored Services at start, as the bitmap
allocator with its repair loop did: one Service stays one object in every listing.

An allocation lives in three steps, like upstream's transaction: begin_create/begin_update
reserve what the new object needs (under a pending token), the registry writes it, and
record() (called after the write, with the stored object or None for a delete) makes the key
own exactly what its object holds; finish() then releases whatever a failed write left pending.
"""

from __future__ import annotations

import ipaddress
import itertools
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_invalid, internal_error, invalid
from kubelab.apiserver.apis.validation.service_ips import validate_cluster_ips

__all__ = ["NODE_PORT_RANGE", "SERVICE_CIDR", "Pending", "ServiceAllocators"]

SERVICE_CIDR = "10.96.0.0/12"          # kube-apiserver --service-cluster-ip-range (kubeadm's)
NODE_PORT_RANGE = (30000, 32767)       # --service-node-port-range default


def needs_cluster_ip(spec: Object) -> bool:
    ips = spec.get("clusterIPs") or []
    return spec.get("type") != "ExternalName" and not (ips and ips[0] == "None")


def needs_node_port(spec: Object) -> bool:
    """NodePort Services, and LoadBalancers unless allocateLoadBalancerNodePorts is false."""
    kind = spec.get("type")
    return kind == "NodePort" or (kind == "LoadBalancer" and
                                  spec.get("allocateLoadBalancerNodePorts", True) is not False)


def needs_health_check_node_port(spec: Object) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def ip_range_offset(cidr_size: int) -> int:
    """ipallocator calculateRangeOffset: from the CIDR's size (a /22: 1024 // 16 = 64), not
    from the allocatable count; for 16 addresses or fewer (a /28), no static band."""
    return 0 if cidr_size <= 16 else min(max(16, cidr_size // 16), 256)


def port_range_offset(size: int) -> int:
    """portallocator calculateRangeOffset: no static band for 16 ports or fewer."""
    return 0 if size <= 16 else min(max(16, size // 32), 128)


@dataclass
class Pending:
    token: str
    ips: list[int] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)


class ServiceAllocators:
    def __init__(self, rand: random.Random, cidr: str = SERVICE_CIDR,
                 node_ports: tuple[int, int] = NODE_PORT_RANGE) -> None:
        self.rand = rand
        self.cidr = ipaddress.IPv4Network(cidr)
        self.node_ports = node_ports
        # The network and broadcast addresses are never handed out (bitmap.go).
        self._ip_base, self._ip_max = int(self.cidr.network_address) + 1, self.cidr.num_addresses - 2
        self._ip_offset = ip_range_offset(self.cidr.num_addresses)
        self._port_max = node_ports[1] - node_ports[0] + 1
        self._port_offset = port_range_offset(self._port_max)
        self.ips: dict[int, str] = {}      # allocated address -> the key (or pending token) holding it
        self.ports: dict[int, str] = {}
        self._held: dict[str, tuple[set[int], set[int]]] = {}
        self._tokens = itertools.count(1)

    # ------------------------------------------------------------------ the hooks

    def begin_create(self, obj: Object) -> Pending:
        pending = Pending(f"pending:{next(self._tokens)}")
        try:
            self._allocate(obj, None, "", pending)
        except BaseException:
            self.finish(pending)
            raise
        return pending

    def begin_update(self, key: str, obj: Object, old: Object) -> Pending:
        pending = Pending(f"pending:{next(self._tokens)}")
        _patch_allocated_values(obj, old)
        try:
            self._allocate(obj, old, key, pending)
        except BaseException:
            self.finish(pending)
            raise
        return pending

    def finish(self, pending: Pending) -> None:
        """Release what the request reserved and no stored object claimed (a failed write)."""
        for ip in pending.ips:
            if self.ips.get(ip) == pending.token:
                del self.ips[ip]
        for port in pending.ports:
            if self.ports.get(port) == pending.token:
                del self.ports[port]

    def record(self, key: str, obj: Object | None) -> None:
        """The object at key is now obj (None: deleted): it holds exactly obj's allocations."""
        texts, ports = _allocations(obj) if obj is not None else (set(), set())
        ips = {ip for ip in (self._ip_int(s) for s in texts) if ip is not None}
        old_ips, old_ports = self._held.pop(key, (set(), set()))
        for ip in old_ips - ips:
            if self.ips.get(ip) == key:
                del self.ips[ip]
        for port in old_ports - ports:
            if self.ports.get(port) == key:
                del self.ports[port]
        for ip in ips:
            self.ips[ip] = key
        for port in ports:
            self.ports[port] = key
        if ips or ports:
            self._held[key] = (ips, ports)

    def repair(self, services: Iterable[tuple[str, Object]]) -> None:
        """repair.go: rebuild every allocation from the stored Services."""
        self.ips.clear()
        self.ports.clear()
        self._held.clear()
        for key, obj in services:
            self.record(key, obj)

    # ------------------------------------------------------------------ allocation

    def _allocate(self, obj: Object, old: Object | None, key: str, pending: Pending) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        name = str((obj.get("metadata") or {}).get("name") or "")
        errs = validate_cluster_ips(spec)
        if errs:
            raise invalid("Service", name, errs)
        errs = _init_ip_family_fields(spec)
        if errs:
            raise invalid("Service", name, errs)
        if needs_cluster_ip(spec):
            self._allocate_cluster_ip(spec, name, key, pending)
        errs = self._allocate_node_ports(spec, key, pending)
        if errs:
            raise invalid("Service", name, errs)

    def _allocate_cluster_ip(self, spec: Object, name: str, key: str, pending: Pending) -> None:
        wanted = spec.get("clusterIP") or ""
        if not wanted:
            ip = self._next(self.ips, self._ip_max, self._ip_offset, pending.token)
            if ip is None:
                raise internal_error("failed to allocate a serviceIP: range is full")
            pending.ips.append(self._ip_base + ip)
            text = str(ipaddress.IPv4Address(self._ip_base + ip))
            spec["clusterIP"], spec["clusterIPs"] = text, [text]
            return
        ip = self._ip_int(wanted)
        problem = ""
        if ip is None:  # validate_cluster_ips has refused a malformed address already
            problem = (f"the provided IP ({wanted}) is not in the valid range. The range of valid "
                       f"IPs is {self.cidr}")
        elif self.ips.get(ip, key) != key or (not key and ip in self.ips):
            problem = "provided IP is already allocated"  # held by another Service
        if problem:
            raise invalid("Service", name, [field_invalid(
                "spec.clusterIPs", spec.get("clusterIPs") or [wanted],
                f"failed to allocate IP {wanted}: {problem}")])
        assert ip is not None
        if ip not in self.ips:
            self.ips[ip] = pending.token
            pending.ips.append(ip)

    def _allocate_node_ports(self, spec: Object, key: str, pending: Pending) -> list[FieldError]:
        errs: list[FieldError] = []
        wanted: list[tuple[str, Object, str]] = []
        if needs_node_port(spec):
            wanted = [(f"spec.ports[{i}].nodePort", p, "nodePort")
                      for i, p in enumerate(spec.get("ports") or []) if isinstance(p, dict)]
        if needs_health_check_node_port(spec):
            wanted.append(("spec.healthCheckNodePort", spec, "healthCheckNodePort"))
        low, high = self.node_ports
        for path, holder, field_name in wanted:
            port = holder.get(field_name) or 0
            if not isinstance(port, int):
                continue  # the decoder has refused anything but an int32 already
            if port == 0:
                offset = self._next(self.ports, self._port_max, self._port_offset, pending.token)
                if offset is None:
                    raise internal_error("failed to allocate a nodePort: range is full")
                holder[field_name] = low + offset
                pending.ports.append(low + offset)
                continue
            owner = self.ports.get(port)
            if not low <= port <= high:
                errs.append(field_invalid(path, port, "provided port is not in the valid range. "
                                          f"The range of valid ports is {low}-{high}"))
            elif owner is not None and owner not in (key, pending.token):
                errs.append(field_invalid(path, port, "provided port is already allocated"))
            elif owner is None:
                self.ports[port] = pending.token
                pending.ports.append(port)
        return errs

    def _next(self, used: dict[int, str], size: int, offset: int, token: str) -> int | None:
        """AllocateNext with randomScanStrategyWithOffset: a random start above the static band,
        scanning up and wrapping; only when that is full, the band itself."""
        base = self._ip_base if used is self.ips else self.node_ports[0]
        for lo, hi in ((offset, size), (0, offset)):
            if hi <= lo:
                continue
            start = self.rand.randrange(hi - lo)
            for i in range(hi - lo):
                candidate = lo + (start + i) % (hi - lo)
                if base + candidate not in used:
                    used[base + candidate] = token
                    return candidate
        return None

    def _ip_int(self, text: str) -> int | None:
        """The address as an int if it is an allocatable address of the range, else None."""
        try:
            address = ipaddress.IPv4Address(text)
        except ValueError:
            return None
        value = int(address)
        return value if self._ip_base <= value < self._ip_base + self._ip_max else None


def _init_ip_family_fields(spec: Object) -> list[FieldError]:
    """initIPFamilyFields (alloc.go) for kubelab's single-stack IPv4 cluster: default the
    policy (RequireDualStack when two IPs or families are asked for), refuse what the cluster
    cannot give, infer the families from the IPs, then IPv4."""
    if spec.get("type") == "ExternalName":
        return []
    ips, families = spec.get("clusterIPs") or [], spec.get("ipFamilies") or []
    if spec.get("ipFamilyPolicy") is None:
        spec["ipFamilyPolicy"] = "RequireDualStack" if 2 in (len(ips), len(families)) \
            else "SingleStack"
    policy = spec["ipFamilyPolicy"]
    errs: list[FieldError] = []
    if policy == "RequireDualStack":
        errs.append(field_invalid("spec.ipFamilyPolicy", policy,
                                  "this cluster is not configured for dual-stack services"))
    errs += [field_invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster")
             for i, family in enumerate(families) if family != "IPv4"]
    if policy == "SingleStack":
        if len(ips) > 1:
            errs.append(field_invalid("spec.clusterIPs", ips,
                                      "'SingleStack' policy may not have more than one ClusterIP"))
        if len(families) > 1:
            errs.append(field_invalid("spec.ipFamilies", families,
                                      "'SingleStack' policy may not have more than one ipFamily"))
    inferred = list(families)
    for i, ip in enumerate(ips):
        if ip == "None":
            break
        if i >= len(inferred):
            inferred.append("IPv6" if ":" in str(ip) else "IPv4")
    if errs:
        return errs
    spec["ipFamilies"] = inferred or ["IPv4"]
    return []


def _allocations(obj: Object) -> tuple[set[str], set[int]]:
    spec = obj.get("spec") or {}
    ips = {ip for ip in spec.get("clusterIPs") or [] if isinstance(ip, str) and ip != "None"}
    ports = {p["nodePort"] for p in spec.get("ports") or []
             if isinstance(p, dict) and isinstance(p.get("nodePort"), int) and p["nodePort"]}
    if isinstance(spec.get("healthCheckNodePort"), int) and spec["healthCheckNodePort"]:
        ports.add(spec["healthCheckNodePort"])
    return ips, ports


def _patch_allocated_values(obj: Object, old: Object) -> None:
    """patchAllocatedValues (rest.go): an update that leaves out what was allocated (kubectl
    apply of the original manifest) keeps the old ClusterIP and NodePorts."""
    spec, old_spec = obj.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict):
        return
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec) and not spec.get("clusterIP"):
        spec["clusterIP"] = old_spec.get("clusterIP", "")
        spec["clusterIPs"] = list(old_spec.get("clusterIPs") or [])
    if needs_node_port(old_spec) and needs_node_port(spec):
        old_ports = {p.get("port"): p.get("nodePort") for p in old_spec.get("ports") or []
                     if isinstance(p, dict)}
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort") and old_ports.get(port.get("port")):
                port["nodePort"] = old_ports[port.get("port")]
    if needs_health_check_node_port(old_spec) and needs_health_check_node_port(spec) and \
            not spec.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = old_spec.get("healthCheckNodePort")
