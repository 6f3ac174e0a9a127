"""The cloud a cloud-controller-manager talks to: load balancers with an address and a set of
backend nodes (cloud-provider's LoadBalancer interface: EnsureLoadBalancer,
UpdateLoadBalancer, EnsureLoadBalancerDeleted). Addresses come from a pool, picked with the
cluster's seeded random generator. It is the world outside the API: it outlives a crash of the
cloud-controller-manager."""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass, field

__all__ = ["FakeCloud", "LoadBalancer"]


@dataclass
class LoadBalancer:
    name: str                 # cloudprovider.DefaultLoadBalancerName: "a" + the Service's uid
    ip: str
    ports: list[int]          # the NodePorts it forwards to
    hosts: list[str] = field(default_factory=list)


class FakeCloud:
    def __init__(self, rand: random.Random, pool: str = "203.0.113.0/24") -> None:
        self.rand = rand
        self.pool = [str(ip) for ip in ipaddress.IPv4Network(pool).hosts()]
        self.balancers: dict[str, LoadBalancer] = {}
        self.calls: list[tuple[str, str]] = []

    def ensure_load_balancer(self, name: str, ports: list[int], hosts: list[str]) -> LoadBalancer:
        self.calls.append(("ensure", name))
        lb = self.balancers.get(name)
        if lb is None:
            used = {b.ip for b in self.balancers.values()}
            free = [ip for ip in self.pool if ip not in used]
            if not free:
                raise RuntimeError("no free address in the load-balancer pool")
            lb = self.balancers[name] = LoadBalancer(name, self.rand.choice(free), ports)
        lb.ports, lb.hosts = list(ports), sorted(hosts)
        return lb

    def update_load_balancer(self, name: str, hosts: list[str]) -> None:
        self.calls.append(("update", name))
        if name in self.balancers:
            self.balancers[name].hosts = sorted(hosts)

    def ensure_load_balancer_deleted(self, name: str) -> None:
        self.calls.append(("delete", name))
        self.balancers.pop(name, None)
