"""A seeded load generator: requests to a Service at a rate on the virtual clock, from every node
in turn, each routed through that node's current rules (kubelab.cluster.network.route) and answered or
not by the pod it reached. So a rollout, a failing readiness probe, a killed node and a crashed
kube-proxy show up as what users would feel: errors, and for how long.

    t = c.traffic("web", rate=20)
    c.run(60)
    print(t.summary())          # totals, per pod, and the seconds that had failures
    t.per_second()              # {second: (ok, failed)}: kubelab.viz.plot_traffic(t) draws it

The generator keeps its own random generator (seeded from the cluster's seed), so starting it
changes nothing else in the simulation's story. DNS answers are cached for 5 virtual seconds,
as a client library would cache them.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubelab.cluster.dns import Answer, resolve
from kubelab.cluster.network import route
from kubelab.sim.clock import Timer

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["Result", "Traffic"]

DNS_CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class Result:
    time: float
    node: str
    destination: str     # ip:port, or "" when nothing was reached
    pod: str
    ok: bool
    reason: str


class Traffic:
    def __init__(self, cluster: Cluster, target: str, *, rate: float = 10.0, port: int | None = None,
                 namespace: str = "default") -> None:
        if rate <= 0:
            raise ValueError(f"rate must be > 0 requests per second, got {rate}")
        self.cluster, self.target, self.rate = cluster, target, rate
        self.port, self.namespace = port, namespace
        self.rand = random.Random(f"{cluster.seed}/traffic/{target}")
        self.results: list[Result] = []
        self._timer: Timer | None = None
        self._sent = 0
        self._started = 0.0
        self._dns: tuple[float, Answer] | None = None

    def start(self) -> None:
        if self._timer is None:
            self._started, self._sent = self.cluster.clock.now, 0
            self._timer = self.cluster.clock.call_later(0, self._send, background=True)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _send(self) -> None:
        c = self.cluster
        nodes = c.node_names
        node = nodes[self._sent % len(nodes)]
        self._sent += 1
        host = self.target.partition(":")[0]
        target = self.target
        if not host.replace(".", "").isdigit():
            answer = self._resolve(host)
            if not answer.addresses:
                self._record(node, "", "", False, "no such host")
                self._next()
                return
            target = answer.addresses[0] + self.target[len(host):]
        r = route(c, target, from_node=node, port=self.port, namespace=self.namespace, rand=self.rand)
        self._record(node, r.destination, r.pod, r.ok, r.reason)
        self._next()

    def _resolve(self, host: str) -> Answer:
        now = self.cluster.clock.now
        if self._dns is None or now - self._dns[0] >= DNS_CACHE_SECONDS:
            self._dns = (now, resolve(self.cluster.client, host, self.namespace,
                                      coredns=self.cluster.anatomy))
        return self._dns[1]

    def _record(self, node: str, destination: str, pod: str, ok: bool, reason: str) -> None:
        self.results.append(Result(self.cluster.clock.now, node, destination, pod, ok, reason))

    def _next(self) -> None:
        # request n goes at start + n / rate exactly: no drift from adding up 1/rate
        self._timer = self.cluster.clock.call_at(self._started + self._sent / self.rate, self._send,
                                                 background=True)

    # ------------------------------------------------------------------ what users felt

    @property
    def succeeded(self) -> int:
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.ok)

    def per_second(self) -> dict[int, tuple[int, int]]:
        """{second: (ok, failed)} for every second that had requests."""
        out: dict[int, list[int]] = {}
        for r in self.results:
            counts = out.setdefault(int(r.time), [0, 0])
            counts[0 if r.ok else 1] += 1
        return {s: (ok, bad) for s, (ok, bad) in sorted(out.items())}

    def per_pod(self) -> dict[str, tuple[int, int]]:
        """{pod (or the address, if no pod has it): (ok, failed)}."""
        out: dict[str, list[int]] = {}
        for r in self.results:
            counts = out.setdefault(r.pod or r.destination or "(nothing)", [0, 0])
            counts[0 if r.ok else 1] += 1
        return {p: (ok, bad) for p, (ok, bad) in sorted(out.items())}

    def reasons(self) -> Counter[str]:
        return Counter(r.reason for r in self.results if not r.ok)

    def summary(self) -> str:
        total = len(self.results)
        lines = [f"{total} requests to {self.target}: {self.succeeded} ok, {self.failed} failed"]
        for pod, (ok, bad) in self.per_pod().items():
            lines.append(f"  {pod}: {ok} ok, {bad} failed")
        bad_seconds = [s for s, (_ok, bad) in self.per_second().items() if bad]
        if bad_seconds:
            lines.append(f"  failures in {len(bad_seconds)} second(s): "
                         f"t={bad_seconds[0]}..{bad_seconds[-1]}s")
            for reason, n in self.reasons().most_common():
                lines.append(f"    {n} x {reason}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        state = "running" if self._timer is not None else "stopped"
        return f"<Traffic {self.target} {self.rate}/s {state}: {self.succeeded} ok, {self.failed} failed>"
