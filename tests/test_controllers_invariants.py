"""Rollout invariants under seeded random faults.

While the controller manager crashes and restarts, loses watch events and has its writes
conflict with a meddling client, a rolling update must never run more than
replicas + maxSurge pods nor fewer than replicas - maxUnavailable available pods (nodes stay
healthy), and once the faults stop it must finish: every pod from the new template, Ready.

A lost watch event can only be recovered by a relist (that is why a watch must not lose
events); so a drop-events window ends as an operator would end it: stop the loss, compact the
store and cut the watches, which makes every reflector relist.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.viz import keep_pods_ready
from tests.controllers_helpers import active_pods, deployment, ready, replica_sets, settle

CM = "system:kube-controller-manager"
SHAPES = [(10, "25%", "25%", 3, 2), (3, 1, 0, 1, 0), (6, 2, 1, 2, 1), (5, 0, 1, 0, 1)]


def _meddle(c: Cluster, rand: random.Random) -> None:
    """Another writer touches the Deployment or a ReplicaSet: the controllers' next writes
    with the cached resourceVersion get 409 Conflict."""
    targets: list[tuple[str, str]] = [("deployments", "web")]
    targets += [("replicasets", rs["metadata"]["name"]) for rs in replica_sets(c)]
    resource, name = rand.choice(targets)
    with contextlib.suppress(ApiError):
        c.client.patch(resource, name, {"metadata": {"annotations": {
            "example.com/poke": str(rand.random())}}})


def _schedule_faults(c: Cluster, rand: random.Random, start: float, until: float) -> list[str]:
    plan: list[str] = []
    t = start + rand.uniform(0.0, 2.0)
    while t < until:
        kind = rand.choice(["crash", "drop", "meddle", "meddle"])
        if kind == "crash":
            down = rand.uniform(0.2, 5.0)
            c.faults.at(t, "crash", "controller-manager")
            c.faults.at(t + down, "restart", "controller-manager")
            plan.append(f"crash@{t:.1f}+{down:.1f}")
            t += down
        elif kind == "drop":
            window, p = rand.uniform(1.0, 20.0), rand.choice([0.2, 0.5, 1.0])
            c.faults.at(t, "drop_watch_events", p, CM)
            for fault in ("heal_watch_events", "compact", "break_watches"):
                c.faults.at(t + window, fault)
            plan.append(f"drop{p}@{t:.1f}+{window:.1f}")
            t += window
        else:
            c.clock.call_at(t, _meddle, c, rand)
            plan.append(f"meddle@{t:.1f}")
        t += rand.uniform(0.5, 6.0)
    return plan


@pytest.mark.parametrize("seed", range(8))
def test_rollout_bounds_hold_and_the_rollout_converges_under_faults(seed: int) -> None:
    rand = random.Random(seed)
    replicas, surge, unavailable, max_surge, max_unavailable = SHAPES[seed % len(SHAPES)]
    c = Cluster(nodes=4, seed=seed, components=["controller-manager"])
    c.apply(deployment(replicas=replicas, surge=surge, unavailable=unavailable))
    settle(c, rounds=2)
    assert len([p for p in active_pods(c) if ready(p)]) == replicas
    keep_pods_ready(c, every=rand.choice([1.0, 2.0, 3.0]))
    violations: list[str] = []

    def check() -> None:
        pods = active_pods(c)
        available = [p for p in pods if ready(p)]
        if len(pods) > replicas + max_surge:
            violations.append(f"t={c.clock.now:.2f}: {len(pods)} pods > {replicas}+{max_surge}")
        if len(available) < replicas - max_unavailable:
            violations.append(f"t={c.clock.now:.2f}: {len(available)} available "
                              f"< {replicas}-{max_unavailable}")
        c.clock.call_later(0.1, check, background=True)
    check()
    start = c.clock.now
    plan = _schedule_faults(c, rand, start, start + 60)
    # Two rollouts: the second one starts while the first may still be under way (a rollover).
    for when, image in ((start, "nginx:1.26"), (start + rand.uniform(5, 40), "nginx:1.27")):
        c.clock.call_at(when, lambda image=image: c.client.patch(
            "deployments", "web", {"spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": image}]}}}}, patch_type="strategic"))
    c.run(start + 80 - c.clock.now)
    if "controller-manager" not in c.components:
        c.faults.restart("controller-manager")

    def done() -> bool:
        pods = active_pods(c)
        return len(pods) == replicas and all(ready(p) for p in pods) and all(
            p["spec"]["containers"][0]["image"] == "nginx:1.27" for p in pods) and \
            c.kubectl("rollout status deployment/web") == 'deployment "web" successfully rolled out'
    took = c.run_until(done, timeout=300)
    context: dict[str, Any] = {"seed": seed, "plan": plan, "converged_after": took}
    assert violations == [], context
