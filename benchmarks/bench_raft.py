"""The 3-member Raft etcd beside the single store: puts/s of each, and their ratio, in one run.

A put on the Raft cluster is a proposal: the leader appends it, sends AppendEntries to both
followers, counts their answers, commits, applies to its store and tells the followers the new
commit index (kubelab/store/raft/). Every member applies it to its own store, so the floor is
three store puts plus the messages; the ratio says what replication costs in kubelab's model.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.bench_store import KEYS, VALUE, best
from benchmarks.common import Figure
from kubelab.sim import Clock
from kubelab.store import Store
from kubelab.store.raft import EtcdCluster


def bench_single_put(n: int = 50_000) -> float:
    def make() -> Callable[[], object]:
        store = Store(Clock())

        def body() -> None:
            for i in range(n):
                store.put(KEYS[i % len(KEYS)], VALUE)
        return body
    return best(n, make)


def bench_raft_put(n: int = 5_000, members: int = 3) -> float:
    def make() -> Callable[[], object]:
        etcd = EtcdCluster(Clock(), random.Random(0), members=members)
        client = etcd.client

        def body() -> None:
            for i in range(n):
                client.put(KEYS[i % len(KEYS)], VALUE)
            assert all(m.store.revision == n + 1 for m in etcd.members.values())
        return body
    return best(n, make)


def run() -> list[Figure]:
    single, raft = bench_single_put(), bench_raft_put()
    return [
        Figure("store put, single store", single, "ops/s"),
        Figure("store put, 3-member Raft etcd", raft, "ops/s"),
        Figure("store put, Raft / single (ratio, same run)", raft / single, "x"),
    ]
