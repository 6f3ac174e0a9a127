"""The embedded store beside a real etcd on this machine (kubelab/etcd/), in one run.

puts/s and watch events/s for the embedded Store, one real etcd member (data on this disk, and
on tmpfs, where fsync is free: etcd 3.4 has no --unsafe-no-fsync) and a three-member cluster on
loopback, and the API server's ConfigMap creates/s on the embedded store and on one real
member. Each real figure is also given as a ratio to the embedded one, measured in the same run.
Puts are sequential, one at a time, as the API server sends its writes: a real etcd's figure is
its round trip plus its fsync (every write waits for the WAL), not its throughput under load.
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import Figure, rate
from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.sim import Clock, RealTimeClock, Trace
from kubelab.store import Store, WatchResponse

VALUE = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"}}' * 8  # ~500 bytes
PUTS = {"embedded": 20_000, "etcd": 500}
EVENTS = 2_000
CREATES = {"embedded": 2_000, "etcd": 200}


def _puts(store: Any, n: int, prefix: str) -> float:
    return rate(n, lambda: [store.put(f"{prefix}{i}", VALUE) for i in range(n)])


def _watch_events(store: Any, clock: Clock, prefix: str) -> float:
    """Events/s delivered to one watch replaying EVENTS puts: from the watch call until its
    callback has been handed every event (through the inbox and the clock, for etcd)."""
    start_rev = store.revision + 1
    for i in range(EVENTS):
        store.put(f"{prefix}{i}", VALUE)
    got: list[int] = []

    def count(resp: WatchResponse) -> None:
        got.append(len(resp.events))

    begin = time.perf_counter()
    store.watch(prefix, prefix=True, start_revision=start_rev, callback=count)
    deadline = begin + 60
    while sum(got) < EVENTS and time.perf_counter() < deadline:
        if isinstance(clock, RealTimeClock):
            clock.run(until=clock.now + 0.005)
        else:
            clock.run_until_idle()
    return sum(got) / (time.perf_counter() - begin)


def _creates(store: Any, clock: Clock, n: int) -> float:
    trace = Trace(lambda: clock.now)
    trace.enabled = False
    server = APIServer(store, clock, random.Random(0), trace=trace)
    token = server.token_for("admin")
    creates = [Request("create", "configmaps", namespace="default", token=token,
                       body={"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": f"cm-{i}", "namespace": "default"},
                             "data": {"key": "value"}}) for i in range(n)]
    return rate(n, lambda: [server.handle(r) for r in creates])


def _on_etcd(members: int, base_dir: str | None, measure: Callable[[Any, Clock], float]
             ) -> float:
    from kubelab.etcd import EtcdBackend, EtcdCluster

    with EtcdCluster(members, base_dir=base_dir) as etcd:
        clock = RealTimeClock()
        store = EtcdBackend(etcd.endpoints, clock)
        try:
            return measure(store, clock)
        finally:
            store.close()


def run() -> list[Figure]:
    if shutil.which("etcd") is None:
        print("bench_etcd: etcd is not installed (make installs it as root); skipped")
        return []
    clock = Clock()
    puts_e = max(_puts(Store(clock), PUTS["embedded"], "/p/") for _ in range(3))
    watch_e = _watch_events(Store(clock), clock, "/w/")
    creates_e = max(_creates(Store(Clock()), Clock(), CREATES["embedded"]) for _ in range(3))
    figures = [Figure("etcd bench: embedded store put", puts_e, "puts/s"),
               Figure("etcd bench: embedded store watch", watch_e, "events/s"),
               Figure("etcd bench: apiserver create on embedded store", creates_e, "creates/s")]
    setups = [("1 real member", 1, None), ("1 real member, tmpfs", 1, "/dev/shm"),
              ("3 real members", 3, None)]
    for label, members, base in setups:
        puts = _on_etcd(members, base, lambda s, c: _puts(s, PUTS["etcd"], "/p/"))
        watch = _on_etcd(members, base, lambda s, c: _watch_events(s, c, "/w/"))
        figures += [Figure(f"etcd bench: {label} put", puts, "puts/s"),
                    Figure(f"etcd bench: {label} put / embedded", puts / puts_e, "ratio"),
                    Figure(f"etcd bench: {label} watch", watch, "events/s"),
                    Figure(f"etcd bench: {label} watch / embedded", watch / watch_e, "ratio")]
    creates = _on_etcd(1, None, lambda s, c: _creates(s, c, CREATES["etcd"]))
    figures += [Figure("etcd bench: apiserver create on 1 real member", creates, "creates/s"),
                Figure("etcd bench: apiserver create, real / embedded", creates / creates_e,
                       "ratio")]
    return figures
