"""A seeded fault-schedule soak (issues 15 and 28): one scenario generator, used by the test in
`make test` (tests/test_soak.py, three seeds of each family) and by `make soak SEEDS=1000` (this
module, which checks of every seed what the test checks: no violation, convergence, traffic, and
for every tenth seed and the first of each family the same trace twice).

Each seed draws a cluster family:
- "single": today's cluster, one API server, scheduler and controller manager, one store;
- "ha": a kubeadm HA control plane, 3 API servers behind the load balancer, 2 schedulers and
  2 controller managers electing their leaders through Leases (kubelab/cluster/replicas.py);
- "raft": one of each, on a simulated etcd of 3 or 5 Raft members (kubelab/store/raft/).
It runs a Deployment (a readiness probe, a preStop hook) behind a Service, sends the Service
traffic from every node in turn (kubelab/cluster/traffic.py), and for a while breaks everything
kubelab can break: components crash, nodes die or are cut off, watch events are dropped,
delayed, duplicated and reordered, the store is compacted and slowed, the registry fails,
containers crash; in "ha" leaders crash, API servers crash or answer late; in "raft" members
crash or are partitioned away, the leader crashes, the quorum is lost and comes back. Meanwhile
the Deployment rolls out a new image and is scaled. Then every fault heals, the Deployment
converges, and it rolls out once more with no fault at all. While it runs, and after, the
invariants hold:

- no pod is bound to a node that does not exist;
- at most replicas + maxSurge active pods whenever both controllers have seen the current spec
  (every observedGeneration matches its generation), except while the controller manager is
  losing watch events and until it relisted (kubelab loses them silently, see WatchFaults);
- every ownerReference is well formed, at most one of them a controller, and at the end each
  pod's controller is a live ReplicaSet of the Deployment;
- no two pods share a name or a uid;
- nothing escapes c.run (a crash, or the clock's LivelockError);
- after healing, the Deployment converges (every pod Ready, from the last template, kubectl's
  READY n/n) within CONVERGE_WITHIN virtual seconds, and a rollout the API server acknowledged
  is in that template (an acknowledged write is never lost);
- leaders: at no check (every CHECK_EVERY virtual seconds) do two replicas of the scheduler,
  or of the controller manager, believe they lead (their elector's `leading`: what makes them
  act; tests/test_ha_invariants.py checks every write against the terms); after healing, within
  LEADER_WITHIN, exactly one replica of each leads, and in "ha" it is the one the Lease's
  holderIdentity names (`c.leader`);
- Raft's safety, on the members' real state (kubelab/store/raft/invariants.py), at every check:
  one leader per term, a leader holds every committed entry, no two members commit different
  entries at one index; at the end also log matching; and after healing, within
  LEADER_WITHIN, one leader that every member follows, at one term, every member with the
  same commit index and the same data (nothing committed was lost on any of them);
- the Service: requests may fail only while a fault on the data path is on, or within SETTLE
  seconds after it ended (REWATCH more after one that ended watches, see below). After
  healing, the Service answers from every node within SERVICE_WITHIN, and the last rolling
  update (no fault at all) drops no request.
- the same seed gives the same trace (checked by running a seed twice).

Which faults touch the data path, and so may drop a request. A request goes from a node's
iptables rules (written by that node's kube-proxy from the EndpointSlices) to a pod's container.
During a rolling update the readiness probe keeps a new pod out of the rules until it answers,
and the preStop sleep (PRE_STOP seconds) keeps a deleted pod answering while the news of its
deletion travels: ReplicaSet controller -> API server -> store -> EndpointSlice controller (in
the controller manager) -> API server -> store -> every kube-proxy -> the rules. A fault that
stops or slows any link of that chain for longer than the preStop sleep may drop requests
even in a careful rolling update, and so is on the data path:
- a node's death (its pods and its rules are gone) and its partition (its kube-proxy no
  longer hears of endpoint changes), a container crash (it answers nothing until its
  readiness probe fails and the news reaches the rules);
- a controller manager's crash, and its leader's (the EndpointSlice controller stops; a
  follower takes over only when the Lease expired, 15 s or more later);
- watch faults aimed at everyone or at the controller manager (kube-proxy and the EndpointSlice
  controller hear late, or not at all until they relist), cut watches and a compaction (every
  watcher relists, with back-off), a slow store;
- in "ha": an API server's crash or slowness (the watches on it end; writes through it wait);
- in "raft": every member fault (a leader's crash, a partition or a lost quorum stop the writes
  that carry the endpoint changes until a leader is elected again).
Off the data path, and so never allowed to drop a request: the scheduler's crash and its
leader's (no new pod is placed; the old ones serve on), the registry's failures (a new pod is
never Ready, so never in the rules; maxUnavailable keeps the old ones), watch faults aimed at
the scheduler or at a kubelet (a kubelet that hears of a deletion late stops its pod late), the
rollout and the scales themselves, and any rolling update with a readiness probe and a preStop
hook while nothing on the data path is broken. The rule is only as strong as the strategy: a
rollout that may take every pod down at once (replicas - maxUnavailable < 1) drops requests by
design, so the soak never scales below 2 replicas.

How long after a data-path fault a request may still fail: SETTLE (30 s: a revived node's
pods start again, a restarted controller manager relists, a new leader takes over), and
REWATCH (60 s) more after a fault that ends watches. That one is kubelab's: its reflector waits
its backoff before watching again after a watch the server closed, where client-go's watches
again at once (reflector.go watch(): handleWatch returned nil), and after a run of failures
that backoff is 30 s, doubled by jitter; a kube-proxy can so stay deaf for a minute after
a partition healed. The rollout with no fault starts only once every kube-proxy watches again.
The traffic goes to the Service's ClusterIP, as from a client that resolved the name: kubelab's
DNS reads the API at each lookup, where CoreDNS answers from its watch cache, also while etcd
has no quorum. In "ha", the watch faults act on the watches the first API server serves (Faults keeps one
watch interceptor, on c.apiserver); the other two servers' watches are untouched.

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
from kubelab.cluster.replicas import replica_names
from kubelab.cluster.traffic import Traffic
from kubelab.sim import Timer
from kubelab.store.errors import UnavailableError
from kubelab.store.raft import EtcdCluster
from kubelab.store.raft.raft import LEADER
from kubelab.store.raft.rules import DEFAULT_RULES, Rules

Object = dict[str, Any]

FAMILIES = ("single", "ha", "raft")
NODES = [2, 3]          # how many nodes a seed may draw
HA = {"apiserver": 3, "scheduler": 2, "controller-manager": 2}
ELECTED = ("scheduler", "controller-manager")
WARM_UP = 15.0          # virtual seconds before the first fault
FAULT_WINDOW = 45.0     # ... during which faults start (60 before issue 28: a smaller scenario per seed)
CONVERGE_WITHIN = 600.0  # the bound on convergence after healing (image pull back-off: 300 s)
LEADER_WITHIN = 60.0    # one leader per component after healing (lease 15 s + retries)
SERVICE_WITHIN = 60.0   # the Service answers from every node (first, and after healing)
WATCHING_WITHIN = 90.0  # every kube-proxy watches again (a reflector's backoff: up to 60 s)
SETTLE = 30.0           # a data-path fault's failed requests may trail its end by this much
REWATCH = 60.0          # ... and by this much more if it ended watches (a reflector's backoff)
# The faults that end watches: a partition cuts its node's, a heal of lost or reordered events
# answers 410, a compaction too, an API server's crash ends the watches it served, and etcd
# without a quorum may make a watch cache start over (which ends its watches).
WATCH_ENDING = {"partition", "drop", "reorder", "compact", "break", "apiserver", "member",
                "etcd_partition", "etcd_leader", "quorum"}
CHECK_EVERY = 2.0
LOOK_EVERY = 2.0        # how often a wait after healing looks again
RELIST_WITHIN = 10.0    # a reflector's relist after a watch ends with 410 (with back-off)
RATE = 1.0              # requests per virtual second to the Service
PRE_STOP = 5            # the preStop sleep, seconds
PROBE = True            # the readiness probe
PROBE_PERIOD = 1        # ... its periodSeconds
LEADERS_PER_COMPONENT = 1
RAFT_RULES: Rules = DEFAULT_RULES  # how every etcd member votes and commits
CM = "system:kube-controller-manager"
USERS = [None, "system:kube-scheduler", CM, "system:node:node-1"]


@dataclass
class Outcome:
    seed: int
    family: str = ""
    plan: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    converged_after: float | None = None
    requests: int = 0
    failed: int = 0    # requests that failed (inside a data-path fault's window: allowed)
    trace_digest: str = ""
    seconds: float = 0.0  # wall clock, for the table only


def family_of(seed: int) -> str:
    """The cluster family a seed draws (the first draw of its random generator)."""
    return random.Random(seed).choice(FAMILIES)


def _deployment(replicas: int, surge: int | str, unavailable: int | str) -> Object:
    labels = {"app": "web"}
    container: Object = {"name": "app", "image": "nginx:1.25",
                         "ports": [{"containerPort": 8080, "name": "http"}]}
    if PROBE:
        container["readinessProbe"] = {"httpGet": {"path": "/", "port": 8080}, "periodSeconds": PROBE_PERIOD}
    if PRE_STOP:
        container["lifecycle"] = {"preStop": {"sleep": {"seconds": PRE_STOP}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                         "maxSurge": surge, "maxUnavailable": unavailable}},
                     "template": {"metadata": {"labels": labels,
                                               "annotations": {"kubelab.dev/behavior": "startup=2"}},
                                  "spec": {"containers": [container]}}}}


def _service() -> Object:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"},
                     "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}


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


def _image(deployment: Object) -> str:
    return str(deployment["spec"]["template"]["spec"]["containers"][0]["image"])


class _Soak:
    def __init__(self, seed: int) -> None:
        self.rand = random.Random(seed)
        self.family = self.rand.choice(FAMILIES)
        self.outcome = Outcome(seed, self.family)
        self.nodes = self.rand.choice(NODES)
        if self.family == "ha":
            self.c = Cluster(nodes=self.nodes, seed=seed, replicas=HA)
        elif self.family == "raft":
            self.c = Cluster(nodes=self.nodes, seed=seed, etcd_members=self.rand.choice([3, 3, 5]))
            self._etcd().set_rules(RAFT_RULES)
        else:
            self.c = Cluster(nodes=self.nodes, seed=seed)
        self.replicas = self.rand.choice([2, 3, 4])
        self.surge: int | str = self.rand.choice([1, 0, "25%", 2])
        self.unavailable: int | str = self.rand.choice([0, 1, "25%"]) if self.surge != 0 else 1
        self.acked_image: str | None = None  # the rollout under faults, once the API acknowledged it
        # Upstream's own bug, faithfully kept: with maxSurge 0, a scale that lands between the
        # old ReplicaSet's scale-down and the new one's scale-up leaves a stale desired-replicas
        # annotation, isScalingEvent stays true, and the rollout never goes on
        # (kubernetes/kubernetes#102551, fix proposed in #138036). No scales for those seeds.
        self.scales = _resolve(self.surge, self.replicas, True) > 0
        self.pending: list[Timer] = []  # faults and their ends, cancelled when all heals
        self.blind: list[tuple[float, float]] = []  # while the controller manager lost events
        self.data_path: list[tuple[float, float, float]] = []  # (start, end, trail) of each
        # fault on the data path: requests may fail from start to end + trail + SETTLE
        self.traffic: Traffic | None = None
        self.quiet_from = math.inf  # the last rolling update, with no fault, starts here
        self.raft_seen = 0  # Raft violations reported so far

    def _etcd(self) -> EtcdCluster:
        etcd = self.c.etcd
        assert isinstance(etcd, EtcdCluster)
        return etcd

    # ------------------------------------------------------------------ the schedule

    def _at(self, when: float, label: str, action: Callable[[], Any]) -> None:
        """Run a fault at `when`. A fault that cannot apply to the cluster as it is then (no
        pod to crash; a compaction etcd cannot commit without a quorum, which etcdctl would
        see time out too) is skipped: that is the scenario's business, not a violation."""
        def run() -> None:
            with contextlib.suppress(ValueError, ApiError, UnavailableError):
                action()
        self.pending.append(self.c.clock.call_at(when, run))
        self.outcome.plan.append(f"{when:.1f} {label}")

    def _kinds(self) -> list[str]:
        kinds = ["crash", "kill", "partition", "drop", "delay", "duplicate", "reorder", "compact",
                 "break", "slow", "registry", "container"]
        if self.family == "ha":
            kinds += ["crash_leader", "crash_leader", "apiserver", "slow_apiserver"]
        elif self.family == "raft":
            kinds += ["member", "etcd_partition", "etcd_leader", "quorum"]
        return kinds

    def schedule(self, start: float) -> float:
        c, rand, faults = self.c, self.rand, self.c.faults
        end = start + FAULT_WINDOW  # all heals then, or when the last dead node revives
        t = start
        kinds = self._kinds()
        while t < start + FAULT_WINDOW:
            kind = rand.choice(kinds)
            user = rand.choice(USERS)
            node = f"node-{rand.randrange(1, self.nodes + 1)}"
            lasts = rand.uniform(1.0, 15.0)
            on_path = True  # does it touch the Service's data path? (the module docstring)
            if kind == "crash":
                component = rand.choice(ELECTED)
                who = rand.choice(replica_names(component, c.replicas.get(component, 1)))
                on_path = component == "controller-manager"
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
                on_path = user in (None, CM)
            elif kind == "compact":
                self._at(t, "compact", faults.compact)
                lasts = 0.0
            elif kind == "break":
                self._at(t, "break_watches", faults.break_watches)
                lasts = 0.0
            elif kind == "slow":
                latency = rand.uniform(0.05, 1.0)
                self._at(t, f"slow_store {latency:.2f}", lambda latency=latency: faults.slow_store(latency))
                self._at(t + lasts, "slow_store 0", lambda: faults.slow_store(0))
            elif kind == "registry":
                mode = rand.choice(["unauthorized", "notfound", "slow", "flaky"])
                self._at(t, f"break_registry {mode}", lambda mode=mode: faults.break_registry(None, mode))
                self._at(t + lasts, "fix_registry", faults.fix_registry)
                on_path = False
            elif kind == "container":
                pick = rand.random()
                self._at(t, "crash_container", lambda pick=pick: self._crash_a_container(pick))
                lasts = 0.0
            elif kind in ("crash_leader", "apiserver", "slow_apiserver"):
                on_path = self._schedule_ha(kind, t, lasts)
            else:
                self._schedule_raft(kind, t, lasts)
            if on_path:
                self.data_path.append((t, t + lasts, REWATCH if kind in WATCH_ENDING else 0.0))
            t += rand.uniform(0.5, 6.0)
        # The Deployment changes under the faults: a rollout, and a scale.
        image = rand.choice(["nginx:1.26", "nginx:1.27"])
        new_replicas = max(2, rand.choice([self.replicas - 1, self.replicas + 1, self.replicas + 2]))

        def rollout() -> None:
            c.client.patch("deployments", "web", {"spec": {"template": {"spec": {
                "containers": [{"name": "app", "image": image}]}}}}, patch_type="strategic")
            self.acked_image = image  # the API server said yes: it must not be lost

        self._at(start + rand.uniform(0, FAULT_WINDOW - 5), f"rollout {image}", rollout)
        if self.scales:
            self._at(start + rand.uniform(0, FAULT_WINDOW - 5), f"scale {new_replicas}",
                     lambda: c.kubectl(f"scale deployment/web --replicas={new_replicas}"))
        return end

    def _schedule_ha(self, kind: str, t: float, lasts: float) -> bool:
        """Schedule one fault of the replicated control plane; True if it is on the data path."""
        c, rand, faults = self.c, self.rand, self.c.faults
        if kind == "crash_leader":
            component = rand.choice(ELECTED)
            crashed: list[str] = []
            self._at(t, f"crash_leader {component}",
                     lambda: crashed.append(faults.crash_leader(component)))

            def restart() -> None:
                for replica in crashed:
                    faults.restart(replica)
            self._at(t + lasts, f"restart the {component} leader that crashed", restart)
            return component == "controller-manager"
        server = rand.choice([s.name for s in c.apiservers])
        if kind == "apiserver":
            def crash() -> None:
                if sum(s.running for s in c.apiservers) <= 1:
                    raise ValueError("the last API server running stays up")
                faults.crash(server)
            self._at(t, f"crash {server}", crash)
            self._at(t + lasts, f"restart {server}", lambda: faults.restart(server))
        else:
            seconds = rand.uniform(0.5, 8.0)
            self._at(t, f"slow_apiserver {seconds:.2f} {server}",
                     lambda: faults.slow_apiserver(seconds, server))
            self._at(t + lasts, f"slow_apiserver 0 {server}", lambda: faults.slow_apiserver(0, server))
        return True

    def _schedule_raft(self, kind: str, t: float, lasts: float) -> None:
        """Schedule one fault of the etcd members (all on the data path: no write, no news)."""
        rand, faults = self.rand, self.c.faults
        members = list(self._etcd().members)
        crashed: list[str] = []
        if kind == "member":
            member = rand.choice(members)
            self._at(t, f"crash_etcd_member {member}", lambda: faults.crash_etcd_member(member))
            self._at(t + lasts, f"restart_etcd_member {member}",
                     lambda: faults.restart_etcd_member(member))
            return
        if kind == "etcd_partition":
            cut = rand.sample(members, rand.randint(1, len(members) - 1))
            self._at(t, f"partition_etcd {','.join(cut)}", lambda: faults.partition_etcd(*cut))
            self._at(t + lasts, "heal_etcd", faults.heal_etcd)
            return
        if kind == "etcd_leader":
            self._at(t, "crash_etcd_leader", lambda: crashed.append(faults.crash_etcd_leader()))
        else:
            self._at(t, "lose_etcd_quorum", lambda: crashed.extend(faults.lose_etcd_quorum()))
        self._at(t + lasts, "restart the etcd members that crashed", lambda: self._restart(crashed))

    def _restart(self, members: list[str]) -> None:
        for member in members:
            with contextlib.suppress(ValueError):  # restarted already by another fault's end
                self.c.faults.restart_etcd_member(member)

    def _crash_a_container(self, pick: float) -> None:
        running = sorted(p["metadata"]["name"] for p in self.c.get("pods")
                         if (p.get("status") or {}).get("phase") == "Running" and _active(p))
        if running:
            self.c.faults.crash_container(running[int(pick * len(running))])

    def heal_everything(self) -> None:
        c, faults = self.c, self.c.faults
        now = c.clock.now
        for timer in self.pending:
            timer.cancel()  # the ends not reached yet: healing ends them all now
        self.blind = [(start, min(end, now + RELIST_WITHIN)) for start, end in self.blind]
        self.data_path = [(start, min(end, now), trail) for start, end, trail in self.data_path]
        faults.heal_watch_events()
        faults.slow_store(0)
        faults.fix_registry()
        faults.heal()
        for node in c.node_names:
            if f"kubelet/{node}" not in c.components:
                faults.revive_node(node)
        for server in c.apiservers:
            if server.response_delay:
                faults.slow_apiserver(0, server.name)
            if not server.running:
                faults.restart(server.name)
        for component in ELECTED:
            for replica in replica_names(component, c.replicas.get(component, 1)):
                if replica not in c.components or getattr(c.components[replica], "exited", False):
                    faults.restart(replica)
        if self.family == "raft":
            etcd = self._etcd()
            faults.heal_etcd()
            for name, member in etcd.members.items():
                if not member.up:
                    faults.restart_etcd_member(name)

    # ------------------------------------------------------------------ the invariants

    def check(self, final: bool = False) -> None:
        c, seen = self.c, self.outcome.violations
        now = c.clock.now
        for component in ELECTED:
            leading = self.leading(component)
            if len(leading) > 1:
                seen.append(f"t={now:.1f}: {len(leading)} replicas of {component} lead at once: "
                            f"{', '.join(leading)}")
        if self.family == "raft":
            raft = self._etcd().checker.violations
            seen.extend(f"t={now:.1f}: {v}" for v in raft[self.raft_seen:])
            self.raft_seen = len(raft)
        try:
            self.check_objects(final)
        except ApiError as err:
            if final or err.code < 500:  # 5xx or no answer: the store or the servers are down
                raise

    def check_objects(self, final: bool) -> None:
        """The invariants on the API's objects."""
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
            all(p["spec"]["containers"][0]["image"] == _image(deployment) for p in pods)

    def leading(self, component: str) -> list[str]:
        """The replicas of component that believe they lead: their elector says so (a replica
        without leader election leads while it runs)."""
        out = []
        for replica in replica_names(component, self.c.replicas.get(component, 1)):
            running = self.c.components.get(replica)
            if running is None or getattr(running, "exited", False):
                continue
            elector = getattr(running, "elector", None)
            if elector.leading if elector is not None else True:
                out.append(replica)
        return out

    def leader_problems(self) -> list[str]:
        """What keeps each component from having exactly one leader, the Lease's holder."""
        problems = []
        for component in ELECTED:
            leading = self.leading(component)
            if len(leading) != LEADERS_PER_COMPONENT:
                problems.append(f"{len(leading)} replicas of {component} lead "
                                f"({', '.join(leading) or 'none'})")
            elif self.c.replicas.get(component, 1) > 1 and self.c.leader(component) != leading[0]:
                problems.append(f"{leading[0]} leads {component} but the Lease names "
                                f"{self.c.leader(component)}")
        return problems

    def raft_problems(self) -> list[str]:
        """What keeps the etcd members from one leader they all follow, with the same data."""
        etcd = self._etcd()
        rows = etcd.status()
        leaders = [r.name for r in rows if r.role == LEADER]
        problems = []
        if len(leaders) != 1:
            problems.append(f"etcd members lead: {', '.join(leaders) or 'none'}")
        elif any(r.leader != leaders[0] or r.term != rows[0].term for r in rows):
            problems.append("etcd members disagree on the leader or the term: " +
                            ", ".join(f"{r.name} {r.role} term {r.term} follows {r.leader}" for r in rows))
        elif len({r.commit for r in rows}) != 1 or len({r.applied for r in rows}) != 1:
            problems.append("etcd members at different commit indexes: " +
                            ", ".join(f"{r.name} {r.commit}/{r.applied}" for r in rows))
        elif len({tuple(m.store.range("", "\0").kvs) for m in etcd.members.values()}) != 1:
            problems.append("etcd members hold different data at one commit index")
        return problems

    def service_answers(self) -> bool:
        """A request to the Service from every node reaches a pod that answers."""
        ip = self.c.get("services", "web")["spec"]["clusterIP"]
        return all(self.c.route(f"{ip}:80", from_node=node).ok for node in self.c.node_names)

    def proxies_watching(self) -> bool:
        """Does every kube-proxy watch Services and EndpointSlices? After a run of failures
        kubelab's reflector backs off before it watches again, also after a watch the server
        merely closed (upstream's watches again at once): up to a minute of stale rules."""
        for node in self.c.node_names:
            proxy = self.c.components.get(f"kube-proxy/{node}")
            if proxy is None or any(informer.reflector._watch is None
                                    for informer in (proxy.services, proxy.slices)):
                return False
        return True

    def _wait(self, done: Callable[[], bool], within: float) -> bool:
        """Run until done() holds (False: not within `within` virtual seconds); an API that
        cannot answer yet (a quorum coming back) means not yet."""
        start = self.c.clock.now
        while True:
            try:
                if done():
                    return True
            except ApiError as err:
                if err.code < 500:
                    raise
            if self.c.clock.now - start >= within:
                return False
            self.c.run(LOOK_EVERY)  # run_until would look after every step: too dear

    def dropped_requests(self) -> None:
        """Failed requests outside every data-path fault's window, and in the last rollout."""
        assert self.traffic is not None
        failed = [r for r in self.traffic.results if not r.ok]
        self.outcome.requests, self.outcome.failed = len(self.traffic.results), len(failed)
        quiet = [r for r in failed if r.time >= self.quiet_from]
        stray = [r for r in failed if r.time < self.quiet_from and not any(
            start <= r.time <= end + trail + SETTLE for start, end, trail in self.data_path)]
        for what, bad in (("during the rolling update after healing", quiet),
                          ("while no fault was on the data path", stray)):
            if bad:
                first = bad[0]
                self.outcome.violations.append(
                    f"{len(bad)} request(s) dropped {what}, the first at t={first.time:.1f} from "
                    f"{first.node} to {first.pod or first.destination or 'nothing'}: {first.reason}")

    # ------------------------------------------------------------------ the story

    def run(self) -> Outcome:
        c, seen = self.c, self.outcome.violations
        try:
            c.apply(_deployment(self.replicas, self.surge, self.unavailable))
            c.apply(_service())
            c.run(WARM_UP)
            if not self._wait(self.service_answers, SERVICE_WITHIN):
                seen.append(f"the Service does not answer {SERVICE_WITHIN:.0f} s after it was made")
            # To the ClusterIP, as a client that resolved the name: kubelab's DNS reads the API
            # at each lookup, where CoreDNS answers from its watch cache through a lost quorum.
            self.traffic = c.traffic(f"{c.get('services', 'web')['spec']['clusterIP']}:80", rate=RATE)
            self._checking()
            healed_at = self.schedule(c.clock.now)
            c.run(healed_at - c.clock.now)
            self.heal_everything()
            self.outcome.plan.append(f"{c.clock.now:.1f} heal everything")
            if self.family == "raft" and not self._wait(lambda: not self.raft_problems(),
                                                        LEADER_WITHIN):
                seen.extend(f"{LEADER_WITHIN:.0f} s after healing: {p}" for p in self.raft_problems())
            if self.scales and self.rand.random() < 0.5:  # a scale after healing takes effect
                replicas = self.rand.choice([2, 3, 4, 5])
                self.outcome.plan.append(f"{c.clock.now:.1f} scale {replicas}")
                out = c.kubectl(f"scale deployment/web --replicas={replicas}")
                if c.get("deployments", "web")["spec"]["replicas"] != replicas:
                    seen.append(f"kubectl scale after healing: {out}")
            healed = c.clock.now
            if self._wait(self.converged, CONVERGE_WITHIN):
                self.outcome.converged_after = c.clock.now - healed
            else:
                seen.append(f"not converged {CONVERGE_WITHIN:.0f} s after healing: "
                            f"{c.kubectl('get deploy').strip().splitlines()[-1]}")
            image = _image(c.get("deployments", "web"))
            if self.acked_image is not None and image != self.acked_image:
                seen.append(f"the acknowledged rollout to {self.acked_image} is lost: the "
                            f"Deployment runs {image}")
            if not self._wait(lambda: not self.leader_problems(), LEADER_WITHIN):
                seen.extend(f"{LEADER_WITHIN:.0f} s after convergence: {p}" for p in self.leader_problems())
            if self.family == "raft":
                if not self._wait(lambda: not self.raft_problems(), LEADER_WITHIN):
                    seen.extend(f"{LEADER_WITHIN:.0f} s after convergence: {p}" for p in self.raft_problems())
                seen.extend(f"end: {v}" for v in self._etcd().violations()[self.raft_seen:])
                self.raft_seen = len(self._etcd().checker.violations)
            if not self._wait(self.service_answers, SERVICE_WITHIN):
                seen.append(f"the Service does not answer from every node {SERVICE_WITHIN:.0f} s "
                            "after convergence")
            if not self._wait(self.proxies_watching, WATCHING_WITHIN):
                seen.append(f"a kube-proxy does not watch {WATCHING_WITHIN:.0f} s after convergence")
            # The last rolling update, with no fault at all: it must drop nothing.
            self.quiet_from = c.clock.now
            self.outcome.plan.append(f"{c.clock.now:.1f} rollout nginx:1.28 (no fault)")
            c.client.patch("deployments", "web", {"spec": {"template": {"spec": {
                "containers": [{"name": "app", "image": "nginx:1.28"}]}}}}, patch_type="strategic")
            if not self._wait(lambda: self.converged() and len(c.get("pods")) ==
                              c.get("deployments", "web")["spec"]["replicas"], CONVERGE_WITHIN):
                seen.append("the rollout after healing did not converge: "
                            f"{c.kubectl('get deploy').strip().splitlines()[-1]}")
            self.traffic.stop()
            self.dropped_requests()
            self.check(final=True)
        except Exception as err:  # the invariant: nothing escapes c.run
            seen.append(f"t={c.clock.now:.1f}: {type(err).__name__}: {err}")
        story = c.trace.text() + "".join(
            f"{r.time:.3f} {r.node} {r.pod} {r.ok} {r.reason}\n"
            for r in (self.traffic.results if self.traffic else ()))
        self.outcome.trace_digest = hashlib.sha256(story.encode()).hexdigest()
        return self.outcome


def scenario(seed: int) -> Outcome:
    """One seed's story and what went wrong in it (nothing, we hope)."""
    start = time.perf_counter()
    outcome = _Soak(seed).run()
    outcome.seconds = time.perf_counter() - start
    return outcome


# The first seed of each family, replayed as tests/test_soak.py replays it.
REPLAYED_IN_SOAK = frozenset({family_of(s): s for s in reversed(range(100))}.values())


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv and argv[0].isdigit() else 1000
    first = int(argv[argv.index("--from") + 1]) if "--from" in argv else 0
    print(f"{'seed':>6}  {'family':>6}  {'violations':>10}  {'converged':>9}  {'failed':>9}  "
          f"{'seconds':>7}  first violation")
    bad = 0
    total = time.perf_counter()
    for seed in range(first, first + count):
        outcome = scenario(seed)
        if (seed % 10 == 0 or seed in REPLAYED_IN_SOAK) and \
                scenario(seed).trace_digest != outcome.trace_digest:
            outcome.violations.append("the same seed gave another trace")
        if outcome.converged_after is None and not outcome.violations:
            outcome.violations.append("it never converged")
        if outcome.requests == 0:
            outcome.violations.append("the Service had no traffic")
        bad += bool(outcome.violations)
        after = "-" if outcome.converged_after is None else f"{outcome.converged_after:.0f}s"
        failed = f"{outcome.failed}/{outcome.requests}"
        print(f"{seed:>6}  {outcome.family:>6}  {len(outcome.violations):>10}  {after:>9}  "
              f"{failed:>9}  {outcome.seconds:>7.2f}  "
              f"{outcome.violations[0] if outcome.violations else ''}", flush=True)
    print(f"{count} seeds, {bad} with violations, {time.perf_counter() - total:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
