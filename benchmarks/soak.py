"""A seeded fault-schedule soak (issue 15): one scenario generator, used by the test in
`make test` (tests/test_soak.py, a hundred seeds) and by `make soak SEEDS=1000` (this module).

Each seed builds a small cluster (full control plane, a kubelet per node), runs a Deployment,
and for a while breaks everything kubelab can break: components crash, nodes die or are cut
off, watch events are dropped, delayed, duplicated and reordered, the store is compacted and
slowed, the registry fails, containers crash; meanwhile the Deployment rolls out a new image and
is scaled. Then every fault heals. While it runs, and after, the invariants hold:

- no pod is bound to a node that does not exist;
- at most replicas + maxSurge active pods whenever both controllers have seen the current spec
  (every observedGeneration matches its generation), except while the controller manager is
  losing watch events and until it relisted (kubelab loses them silently, see WatchFaults);
- every ownerReference is well formed, at most one of them a controller, and at the end each
  pod's controller is a live ReplicaSet of the Deployment;
- no two pods share a name or a uid;
- nothing escapes c.run (a crash, or the clock's LivelockError);
- after healing, the Deployment converges (every pod Ready, from the last template, kubectl's
  READY n/n) within CONVERGE_WITHIN virtual seconds;
- the same seed gives the same trace (checked by running a seed twice).

    python -m benchmarks.soak 1000        # seeds 0..999: seed, violations, seconds per seed
    python -m benchmarks.soak 20 --from 500
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.sim import Timer

Object = dict[str, Any]

WARM_UP = 15.0          # virtual seconds before the first fault
FAULT_WINDOW = 60.0     # ... during which faults start
CONVERGE_WITHIN = 600.0  # the bound on convergence after healing (image pull back-off: 300 s)
CHECK_EVERY = 2.0
RELIST_WITHIN = 10.0    # a reflector's relist after a watch ends with 410 (with back-off)
CM = "system:kube-controller-manager"
USERS = [None, "system:kube-scheduler", CM, "system:node:node-1"]


@dataclass
class Outcome:
    seed: int
    plan: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    converged_after: float | None = None
    trace_digest: str = ""
    seconds: float = 0.0  # wall clock, for the table only


def _deployment(replicas: int, surge: int | str, unavailable: int | str) -> Object:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                         "maxSurge": surge, "maxUnavailable": unavailable}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


def _resolve(value: int | str, replicas: int, round_up: bool) -> int:
    if isinstance(value, int):
        return value
    fraction = int(value.rstrip("%")) * replicas / 100
    return math.ceil(fraction) if round_up else math.floor(fraction)


def _active(pod: Object) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _ready(pod: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


class _Soak:
    def __init__(self, seed: int) -> None:
        self.rand = random.Random(seed)
        self.outcome = Outcome(seed)
        self.nodes = self.rand.choice([2, 3])
        self.c = Cluster(nodes=self.nodes, seed=seed)
        self.replicas = self.rand.choice([2, 3, 4])
        self.surge: int | str = self.rand.choice([1, 0, "25%", 2])
        self.unavailable: int | str = self.rand.choice([0, 1, "25%"]) if self.surge != 0 else 1
        self.image = "nginx:1.25"
        # Upstream's own bug, faithfully kept: with maxSurge 0, a scale that lands between the
        # old ReplicaSet's scale-down and the new one's scale-up leaves a stale desired-replicas
        # annotation, isScalingEvent stays true, and the rollout never goes on
        # (kubernetes/kubernetes#102551, fix proposed in #138036). No scales for those seeds.
        self.scales = _resolve(self.surge, self.replicas, True) > 0
        self.pending: list[Timer] = []  # faults and their ends, cancelled when all heals
        self.blind: list[tuple[float, float]] = []  # while the controller manager lost events

    # ------------------------------------------------------------------ the schedule

    def _at(self, when: float, label: str, action: Callable[[], Any]) -> None:
        """Run a fault at `when`. A fault that cannot apply to the cluster as it is then (no
        pod to crash) is skipped: that is the scenario's business, not a violation."""
        def run() -> None:
            with contextlib.suppress(ValueError, ApiError):
                action()
        self.pending.append(self.c.clock.call_at(when, run))
        self.outcome.plan.append(f"{when:.1f} {label}")

    def schedule(self, start: float) -> float:
        c, rand, faults = self.c, self.rand, self.c.faults
        end = start + FAULT_WINDOW  # all heals then, or when the last dead node revives
        t = start
        while t < start + FAULT_WINDOW:
            kind = rand.choice(["crash", "kill", "partition", "drop", "delay", "duplicate",
                                "reorder", "compact", "break", "slow", "registry", "container"])
            user = rand.choice(USERS)
            node = f"node-{rand.randrange(1, self.nodes + 1)}"
            lasts = rand.uniform(1.0, 15.0)
            if kind == "crash":
                who = rand.choice(["scheduler", "controller-manager"])
                self._at(t, f"crash {who}", lambda who=who: faults.crash(who))
                self._at(t + lasts, f"restart {who}", lambda who=who: faults.restart(who))
            elif kind == "kill":
                # Half of the dead nodes stay dead past node-monitor-grace-period (50 s):
                # Unknown, their pods not Ready, a NoExecute taint through the rate limiter.
                if rand.random() < 0.5:
                    lasts = rand.uniform(55.0, 150.0)
                self._at(t, f"kill_node {node}", lambda node=node: faults.kill_node(node))
                self._at(t + lasts, f"revive_node {node}", lambda node=node: faults.revive_node(node))
                end = max(end, t + lasts)
            elif kind == "partition":
                self._at(t, f"partition {node}", lambda node=node: faults.partition(node))
                self._at(t + lasts, f"heal {node}", lambda node=node: faults.heal(node))
            elif kind in ("drop", "delay", "duplicate", "reorder"):
                amount = rand.choice([0.2, 0.5, 1.0]) if kind in ("drop", "duplicate") else \
                    rand.uniform(0.1, 3.0)
                fault = getattr(faults, f"{kind}_watch_events")
                self._at(t, f"{kind}_watch_events {amount:.2f} {user}",
                         lambda fault=fault, amount=amount, user=user: fault(amount, user))
                if rand.random() < 0.7:  # else it lasts until everything heals
                    self._at(t + lasts, "heal_watch_events", faults.heal_watch_events)
                else:
                    lasts = 2 * FAULT_WINDOW + 150.0  # past any end below
                if kind == "drop" and user in (None, CM):
                    # Until its informers relisted after the heal, the controller manager acts
                    # on what it saw: the surge bound cannot hold on a view with holes in it.
                    self.blind.append((t, t + lasts + RELIST_WITHIN))
            elif kind == "compact":
                self._at(t, "compact", faults.compact)
            elif kind == "break":
                self._at(t, "break_watches", faults.break_watches)
            elif kind == "slow":
                latency = rand.uniform(0.05, 1.0)
                self._at(t, f"slow_store {latency:.2f}", lambda latency=latency: faults.slow_store(latency))
                self._at(t + lasts, "slow_store 0", lambda: faults.slow_store(0))
            elif kind == "registry":
                mode = rand.choice(["unauthorized", "notfound", "slow", "flaky"])
                self._at(t, f"break_registry {mode}", lambda mode=mode: faults.break_registry(None, mode))
                self._at(t + lasts, "fix_registry", faults.fix_registry)
            else:
                pick = rand.random()
                self._at(t, "crash_container", lambda pick=pick: self._crash_a_container(pick))
            t += rand.uniform(0.5, 6.0)
        # The Deployment changes under the faults: a rollout, and a scale.
        self.image = rand.choice(["nginx:1.26", "nginx:1.27"])
        new_replicas = rand.choice([self.replicas - 1, self.replicas + 1, self.replicas + 2])
        self._at(start + rand.uniform(0, FAULT_WINDOW - 5), f"rollout {self.image}",
                 lambda: c.client.patch("deployments", "web", {"spec": {"template": {"spec": {
                     "containers": [{"name": "app", "image": self.image}]}}}},
                     patch_type="strategic"))
        if self.scales:
            self._at(start + rand.uniform(0, FAULT_WINDOW - 5), f"scale {new_replicas}",
                     lambda: c.kubectl(f"scale deployment/web --replicas={new_replicas}"))
        return end

    def _crash_a_container(self, pick: float) -> None:
        running = sorted(p["metadata"]["name"] for p in self.c.get("pods")
                         if (p.get("status") or {}).get("phase") == "Running" and _active(p))
        if running:
            self.c.faults.crash_container(running[int(pick * len(running))])

    def heal_everything(self) -> None:
        faults = self.c.faults
        for timer in self.pending:
            timer.cancel()  # the ends not reached yet: healing ends them all now
        self.blind = [(start, min(end, self.c.clock.now + RELIST_WITHIN)) for start, end in self.blind]
        faults.heal_watch_events()
        faults.slow_store(0)
        faults.fix_registry()
        faults.heal()
        for node in self.c.node_names:
            if f"kubelet/{node}" not in self.c.components:
                faults.revive_node(node)
        for component in ("scheduler", "controller-manager"):
            if component not in self.c.components:
                faults.restart(component)

    # ------------------------------------------------------------------ the invariants

    def check(self, final: bool = False) -> None:
        c, seen = self.c, self.outcome.violations
        now = c.clock.now
        nodes = {n["metadata"]["name"] for n in c.get("nodes", namespace=None)}
        pods = c.get("pods")
        deployment = c.get("deployments", "web")
        rss = [rs for rs in c.get("replicasets")
               if any(r.get("uid") == deployment["metadata"]["uid"]
                      for r in rs["metadata"].get("ownerReferences") or ())]
        names = [p["metadata"]["name"] for p in pods]
        uids = [p["metadata"]["uid"] for p in pods]
        if len(set(names)) != len(names) or len(set(uids)) != len(uids):
            seen.append(f"t={now:.1f}: duplicate pod names or uids")
        for pod in pods:
            node = pod["spec"].get("nodeName")
            if node and node not in nodes:
                seen.append(f"t={now:.1f}: pod {pod['metadata']['name']} on missing node {node}")
            refs = pod["metadata"].get("ownerReferences") or []
            if sum(1 for r in refs if r.get("controller")) > 1 or \
                    any(not all(r.get(k) for k in ("apiVersion", "kind", "name", "uid")) for r in refs):
                seen.append(f"t={now:.1f}: pod {pod['metadata']['name']} has bad ownerReferences {refs}")
        owned = {rs["metadata"]["uid"]: rs for rs in rss}
        ours = [p for p in pods if any(r.get("uid") in owned and r.get("controller")
                                       for r in p["metadata"].get("ownerReferences") or ())]
        spec = deployment["spec"]
        observed = (deployment.get("status") or {}).get("observedGeneration") == \
            deployment["metadata"].get("generation") and all(
                (rs.get("status") or {}).get("observedGeneration") == rs["metadata"].get("generation")
                for rs in rss)
        if observed and not any(start <= now <= end for start, end in self.blind):
            bound = spec["replicas"] + _resolve(self.surge, spec["replicas"], True)
            active = sum(1 for p in ours if _active(p))
            if active > bound:
                seen.append(f"t={now:.1f}: {active} active pods > {spec['replicas']} + maxSurge")
        if final:
            for pod in pods:
                for ref in pod["metadata"].get("ownerReferences") or ():
                    if ref.get("controller") and ref.get("uid") not in owned:
                        seen.append(f"end: pod {pod['metadata']['name']} controlled by a "
                                    f"{ref.get('kind')} {ref.get('name')} that is gone")

    def _checking(self) -> None:
        if len(self.outcome.violations) < 20:
            self.check()
        self.c.clock.call_later(CHECK_EVERY, self._checking, background=True)

    def converged(self) -> bool:
        c = self.c
        deployment = c.get("deployments", "web")
        status, replicas = deployment.get("status") or {}, deployment["spec"]["replicas"]
        pods = [p for p in c.get("pods") if _active(p)]
        return status.get("observedGeneration") == deployment["metadata"].get("generation") and \
            all(status.get(f) == replicas for f in ("replicas", "updatedReplicas", "readyReplicas",
                                                     "availableReplicas")) and \
            len(pods) == replicas and all(_ready(p) for p in pods) and \
            all(p["spec"]["containers"][0]["image"] == self.image for p in pods)

    # ------------------------------------------------------------------ the story

    def run(self) -> Outcome:
        c = self.c
        try:
            c.apply(_deployment(self.replicas, self.surge, self.unavailable))
            c.run(WARM_UP)
            self._checking()
            healed_at = self.schedule(c.clock.now)
            c.run(healed_at - c.clock.now)
            self.heal_everything()
            self.outcome.plan.append(f"{c.clock.now:.1f} heal everything")
            if self.scales and self.rand.random() < 0.5:  # a scale after healing takes effect
                replicas = self.rand.choice([1, 2, 3, 4, 5])
                self.outcome.plan.append(f"{c.clock.now:.1f} scale {replicas}")
                out = c.kubectl(f"scale deployment/web --replicas={replicas}")
                if c.get("deployments", "web")["spec"]["replicas"] != replicas:
                    self.outcome.violations.append(f"kubectl scale after healing: {out}")
            healed = c.clock.now
            while not self.converged() and c.clock.now - healed < CONVERGE_WITHIN:
                c.run(1.0)  # a look per virtual second: run_until would look after every step
            if self.converged():
                self.outcome.converged_after = c.clock.now - healed
            else:
                self.outcome.violations.append(
                    f"not converged {CONVERGE_WITHIN:.0f} s after healing: "
                    f"{c.kubectl('get deploy').strip().splitlines()[-1]}")
            self.check(final=True)
        except Exception as err:  # the invariant: nothing escapes c.run
            self.outcome.violations.append(f"t={c.clock.now:.1f}: {type(err).__name__}: {err}")
        self.outcome.trace_digest = hashlib.sha256(c.trace.text().encode()).hexdigest()
        return self.outcome


def scenario(seed: int) -> Outcome:
    """One seed's story and what went wrong in it (nothing, we hope)."""
    start = time.perf_counter()
    outcome = _Soak(seed).run()
    outcome.seconds = time.perf_counter() - start
    return outcome


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv and argv[0].isdigit() else 1000
    first = int(argv[argv.index("--from") + 1]) if "--from" in argv else 0
    print(f"{'seed':>6}  {'violations':>10}  {'converged':>9}  {'seconds':>7}  first violation")
    bad = 0
    total = time.perf_counter()
    for seed in range(first, first + count):
        outcome = scenario(seed)
        if seed % 10 == 0 and scenario(seed).trace_digest != outcome.trace_digest:
            outcome.violations.append("the same seed gave another trace")
        bad += bool(outcome.violations)
        after = "-" if outcome.converged_after is None else f"{outcome.converged_after:.0f}s"
        print(f"{seed:>6}  {len(outcome.violations):>10}  {after:>9}  {outcome.seconds:>7.2f}  "
              f"{outcome.violations[0] if outcome.violations else ''}", flush=True)
    print(f"{count} seeds, {bad} with violations, {time.perf_counter() - total:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
