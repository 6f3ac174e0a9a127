"""Raft's invariants over 300 seeded fault schedules on a simulated etcd cluster.

Each schedule crashes, restarts and partitions members at random while a small workload writes,
then heals everything. The checks run on the members' real state (kubelab/store/raft/invariants.py):
election safety, leader completeness, state machine safety, log matching; and after healing,
every acknowledged write is readable and every member holds the same data.
"""

from __future__ import annotations

import random
from collections import Counter

from kubelab.sim import Clock
from kubelab.store import UnavailableError
from kubelab.store.raft import EtcdCluster

SEEDS = 300


def run_schedule(seed: int, stats: Counter[str]) -> EtcdCluster:
    rng = random.Random(seed)
    clock = Clock()
    etcd = EtcdCluster(clock, random.Random(seed), members=3 if seed % 3 else 5,
                       snapshot_count=16, catch_up_entries=4)
    names = list(etcd.members)
    acked: dict[str, bytes] = {}
    for step in range(10):
        action = rng.choice(["crash", "restart", "partition", "heal", "write", "write"])
        up = [n for n in names if etcd.members[n].up]
        down = [n for n in names if not etcd.members[n].up]
        if action == "crash" and up:
            etcd.crash(rng.choice(up))
        elif action == "restart" and down:
            etcd.restart(rng.choice(down))
        elif action == "partition":
            etcd.partition(*rng.sample(names, rng.randint(1, len(names) - 1)))
        elif action == "heal":
            etcd.heal()
        for i in range(rng.randint(1, 6)):
            key, value = f"/registry/k/{step}-{i}", f"{seed}-{step}-{i}".encode()
            try:
                etcd.client.put(key, value)
            except UnavailableError as err:
                assert str(err) == "etcdserver: request timed out" and err.latency == 7.0
                stats["timed out"] += 1
            else:
                acked[key] = value
                stats["acknowledged"] += 1
        clock.run(until=clock.now + rng.choice([0.05, 0.3, 1.0, 2.5, 4.0]))
        assert etcd.violations() == [], (seed, step)
    etcd.heal()
    for n in names:
        if not etcd.members[n].up:
            etcd.restart(n)
    clock.run(until=clock.now + 10)
    assert etcd.violations() == [], seed
    assert etcd.leader is not None, seed
    # no acknowledged write is lost, and the members agree on everything
    got = {kv.key: kv.value for kv in etcd.client.range("/registry/k/", prefix=True).kvs}
    assert {k: got.get(k) for k in acked} == acked, seed
    contents = {n: m.store.range("", "\0").kvs for n, m in etcd.members.items()}
    commits = {m.raft.log.committed for m in etcd.members.values()}
    assert len(set(contents.values())) == 1 and len(commits) == 1, seed
    stats["snapshots installed"] += sum(m.restored for m in etcd.members.values())
    stats["leaders"] += len(etcd.checker.leaders)
    return etcd


def test_raft_invariants_hold_under_300_seeded_fault_schedules() -> None:
    stats: Counter[str] = Counter()
    for seed in range(SEEDS):
        run_schedule(seed, stats)
    # the schedules really exercised what they claim to
    assert stats["timed out"] > 100 and stats["acknowledged"] > 1000
    assert stats["snapshots installed"] > 10 and stats["leaders"] > 2 * SEEDS


def test_the_same_seed_gives_the_same_history() -> None:
    a, b = run_schedule(7, Counter()), run_schedule(7, Counter())
    assert a.timeline == b.timeline and a.status() == b.status()
