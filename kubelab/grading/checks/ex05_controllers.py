"""Checks for notebook 05's exercises: the ReplicaSet reconcile (5.1) and one rolling-update
step (5.2).

5.1: the controller-manager is replaced (Cluster(replace=...)) by kubelab's own, minus its
ReplicaSet controller, plus a controller loop whose sync_handler is the learner's function; it
must converge while watch events are dropped, history is compacted and the manager crashes.
5.2: the Deployment controller's rollout step is the learner's inside a running cluster, and
each decision is compared with rolling.go's (kubelab.controllers.deployment.rolling).
"""

from __future__ import annotations

import copy
from typing import Any

from kubelab.api import Object
from kubelab.api.meta import get_controller_of
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers import ControllerManager
from kubelab.controllers.deployment import rolling
from kubelab.grading.checks.common import patched
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check

__all__: list[str] = []

# learner's step replaces only the decision, everything around it stays the controller's.
_uses: dict[str, Any] = vars(rolling)
replicas_of = _uses["replicas_of"]
filter_active_replica_sets = _uses["filter_active_replica_sets"]
sort_by_creation_timestamp = _uses["sort_by_creation_timestamp"]

MANAGER = "system:kube-controller-manager"


class LearnerReplicaSetController:
    """A controller loop around the learner's sync: RS events and the events of pods it
    controls enqueue the ReplicaSet's key; the learner's function does the rest."""

    NAME = "replicaset-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, sync: Any) -> None:
        rs_informer, pod_informer = informers.informer_for("replicasets"), informers.informer_for("pods")
        rs_lister, pod_lister = rs_informer.lister, pod_informer.lister
        self.controller = Controller(self.NAME, lambda key: sync(key, ctx.client, rs_lister, pod_lister),
                                     ctx.clock, trace=ctx.trace)
        rs_informer.add_event_handler(self.controller.handler())
        pod_informer.add_event_handler(ResourceEventHandler(self._pod, self._pod_update, self._pod))

    def _pod_update(self, old: Any, new: Any) -> None:
        self._pod(old)  # a pod that changed owner wakes both ReplicaSets
        self._pod(new)

    def _pod(self, obj: Any) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = get_controller_of(pod) if isinstance(pod, dict) else None
        if ref is not None and ref.get("kind") == "ReplicaSet":
            self.controller.queue.add(f"{pod['metadata'].get('namespace', 'default')}/{ref.get('name')}")

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()


def _manager_with(sync: Any) -> Any:
    def build(ctx: ComponentContext) -> ControllerManager:
        manager = ControllerManager(ctx, ["*", f"-{LearnerReplicaSetController.NAME}"])
        manager.controllers[LearnerReplicaSetController.NAME] = LearnerReplicaSetController(
            ctx, manager.informers, sync)
        return manager
    return build


def replica_set(name: str, replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, "tier": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}


def _owned(c: Any, name: str) -> list[dict[str, Any]]:
    rs = c.get("replicasets", name)
    return [p for p in c.get("pods") if not p["metadata"].get("deletionTimestamp")
            and (get_controller_of(p) or {}).get("uid") == rs["metadata"]["uid"]]


def _expect_pods(ctx: CheckContext, c: Any, name: str, count: int, when: str) -> None:
    pods = _owned(c, name)
    if len(pods) != count:
        ctx.fail(f"ReplicaSet {name} does not control {count} active pods {when}",
                 expected=f"{count} pods with an ownerReference (controller: true) to it",
                 got=f"{len(pods)}: {', '.join(sorted(p['metadata']['name'] for p in pods)) or 'none'}")


def _cluster(ctx: CheckContext) -> Any:
    return ctx.cluster(nodes=0, components=["controller-manager"],
                       replace={"controller-manager": _manager_with(ctx.learner)})


@check("5.1", points=3, hint="Create len(spec.replicas) - len(active pods it controls) pods from "
       "spec.template, with generateName '<rs>-' and an ownerReference (controller: true).")
def creates_pods_for_a_replica_set(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    c.apply(replica_set("web", 3))
    c.run(10)
    _expect_pods(ctx, c, "web", 3, "after it was created")
    for p in _owned(c, "web"):
        ctx.expect_equal(p["metadata"].get("labels"), {"app": "web", "tier": "web"},
                         "a pod's labels (the template's)", unit="metadata.labels =")
        if not p["metadata"]["name"].startswith("web-"):
            ctx.fail("pods are named by generateName", expected="web-<random>", got=p["metadata"]["name"])
    ctx.expect_equal((c.get("replicasets", "web").get("status") or {}).get("replicas"), 3,
                     "status.replicas once the pods exist", unit="status.replicas =")


@check("5.1", points=3, hint="Every sync compares the desired count with the pods the lister shows "
       "now: a deleted pod is replaced, scaling down deletes the surplus.")
def replaces_deleted_pods_and_scales(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    c.apply(replica_set("web", 3))
    c.run(10)
    victim = sorted(p["metadata"]["name"] for p in _owned(c, "web"))[0]
    c.client.delete("pods", victim)
    c.run(10)
    _expect_pods(ctx, c, "web", 3, f"after pod {victim} was deleted")
    c.client.scale("replicasets", "web", 1)
    c.run(10)
    _expect_pods(ctx, c, "web", 1, "after scaling to 1")
    c.client.scale("replicasets", "web", 4)
    c.run(10)
    _expect_pods(ctx, c, "web", 4, "after scaling to 4")
    ctx.expect_equal((c.get("replicasets", "web").get("status") or {}).get("replicas"), 4,
                     "status.replicas after scaling to 4", unit="status.replicas =")


@check("5.1", points=4, seeds=(1, 2), hint="Level-triggered: read the ReplicaSet and its pods from "
       "the listers on every sync and act on the difference; never on what an event said, never "
       "on what you remember doing.")
def converges_despite_lost_events(ctx: CheckContext) -> None:
    c = _cluster(ctx)
    c.apply([replica_set("web", 3), replica_set("api", 2)])
    c.run(10)
    c.faults.drop_watch_events(1.0, user=MANAGER)   # the manager goes deaf...
    for p in _owned(c, "web")[:2]:
        c.client.delete("pods", p["metadata"]["name"])
    c.client.scale("replicasets", "api", 4)
    c.run(5)
    c.faults.heal_watch_events()
    c.faults.compact()                               # ...and can only catch up by relisting
    c.faults.break_watches()
    c.run(20)
    _expect_pods(ctx, c, "web", 3, "after pods were deleted while its watch events were lost")
    _expect_pods(ctx, c, "api", 4, "after it was scaled while its watch events were lost")
    c.faults.crash("controller-manager")             # a crash loses everything in memory
    c.client.scale("replicasets", "web", 2)
    c.faults.restart("controller-manager")
    c.run(20)
    _expect_pods(ctx, c, "web", 2, "after a scale-down while the manager was down")


# ---------------------------------------------------------------- 5.2 rolling-update step


class _Recorder:
    """Stands in for the Deployment controller when rolling.go's own functions compute the
    expected step: it records each scale instead of writing it."""

    def __init__(self) -> None:
        self.client, self.recorder = self, self
        self.scales: dict[str, int] = {}

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.scales[obj["metadata"]["name"]] = int(obj["spec"]["replicas"])
        return obj

    def event(self, *args: Any) -> None:
        pass


def reference_step(d: Object, new_rs: Object, old_rss: list[Object]) -> dict[str, int]:
    """What rolling.go's own functions do with these objects, recorded instead of written."""
    dc: Any = _Recorder()
    d, new_rs, old_rss = copy.deepcopy(d), copy.deepcopy(new_rs), copy.deepcopy(old_rss)
    all_rss: list[Object | None] = [*old_rss, new_rs]
    if not rolling.reconcile_new_replica_set(dc, all_rss, new_rs, d):
        rolling.reconcile_old_replica_sets(dc, all_rss, filter_active_replica_sets(list(old_rss)), new_rs, d)
    return {rs["metadata"]["name"]: dc.scales.get(rs["metadata"]["name"], replicas_of(rs))
            for rs in [new_rs, *old_rss]}


def _d(replicas: int, surge: Any, unavailable: Any) -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": "RollingUpdate", "rollingUpdate": {}}
    if surge is not None:
        strategy["rollingUpdate"]["maxSurge"] = surge
    if unavailable is not None:
        strategy["rollingUpdate"]["maxUnavailable"] = unavailable
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "strategy": strategy,
                     "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}}


def _rs(name: str, replicas: int, available: int, created: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default",
                         "creationTimestamp": f"2025-01-01T00:{created // 60:02d}:{created % 60:02d}Z"},
            "spec": {"replicas": replicas}, "status": {"replicas": replicas, "availableReplicas": available}}


TEN = _d(10, "25%", "25%")
STEP_CASES: list[tuple[str, Object, Object, list[Object]]] = [
    ("10 replicas 25%/25%, rollout starts", TEN, _rs("new", 0, 0, 9), [_rs("old", 10, 10, 1)]),
    ("10 replicas 25%/25%, surge used up", TEN, _rs("new", 3, 0, 9), [_rs("old", 10, 10, 1)]),
    ("10 replicas 25%/25%, new pods available", TEN, _rs("new", 3, 3, 9), [_rs("old", 8, 8, 1)]),
    ("3 replicas maxSurge 1 maxUnavailable 0, start", _d(3, 1, 0), _rs("new", 0, 0, 9),
     [_rs("old", 3, 3, 1)]),
    ("3 replicas 1/0, new pod not available yet", _d(3, 1, 0), _rs("new", 1, 0, 9), [_rs("old", 3, 3, 1)]),
    ("3 replicas 1/0, new pod available", _d(3, 1, 0), _rs("new", 1, 1, 9), [_rs("old", 3, 3, 1)]),
    ("both 0: maxUnavailable becomes 1", _d(2, 0, 0), _rs("new", 0, 0, 9), [_rs("old", 2, 2, 1)]),
    ("5 replicas 30%/30% (surge rounds up, unavailable down)", _d(5, "30%", "30%"), _rs("new", 0, 0, 9),
     [_rs("old", 5, 5, 1)]),
    ("unhealthy old pods go first, oldest ReplicaSet first", _d(6, 2, 2), _rs("new", 4, 2, 9),
     [_rs("old-b", 2, 2, 5), _rs("old-a", 3, 1, 2)]),
    ("8 replicas 25%/25%, two old ReplicaSets", _d(8, "25%", "25%"), _rs("new", 2, 2, 9),
     [_rs("old-b", 4, 4, 5), _rs("old-a", 4, 4, 2)]),
    ("deployment scaled below the new ReplicaSet", _d(3, 1, 1), _rs("new", 5, 5, 9), []),
]


@check("5.2", points=5, hint="Scale the new ReplicaSet up first (up to replicas + maxSurge pods "
       "in total); only if that changed nothing, scale old ones down, unhealthy pods first, never "
       "below replicas - maxUnavailable available pods.")
def matches_rolling_go(ctx: CheckContext) -> None:
    for label, d, new_rs, old_rss in STEP_CASES:
        expected = reference_step(d, new_rs, old_rss)
        got = ctx.learner(d, new_rs, old_rss)
        mine = {**{rs["metadata"]["name"]: replicas_of(rs) for rs in [new_rs, *old_rss]},
                **(got if isinstance(got, dict) else {})}
        if not isinstance(got, dict) or mine != expected:
            ctx.fail(f"case {label!r}", expected=f"spec.replicas per ReplicaSet {expected}",
                     got=f"spec.replicas per ReplicaSet {got!r}")


def _learner_rollout(step: Any, mistakes: list[str]) -> Any:
    def rollout(dc: Any, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> None:
        new_rs, old_rss = _uses["get_all_replica_sets_and_sync_revision"](dc, d, rs_list, True)
        assert new_rs is not None
        active = filter_active_replica_sets(list(old_rss))
        decision = step(copy.deepcopy(d), copy.deepcopy(new_rs), copy.deepcopy(active))
        if not isinstance(decision, dict):
            mistakes.append(f"returned {decision!r}, not a dict of name -> replicas")
            decision = {}
        scaled = False
        for rs in [new_rs, *sort_by_creation_timestamp(active)]:
            target = decision.get(rs["metadata"]["name"], replicas_of(rs))
            if isinstance(target, int) and target != replicas_of(rs):
                scaled = _uses["scale_replica_set_and_record_event"](dc, rs, max(target, 0), d)[0] or scaled
        if not scaled and _uses["deployment_complete"](d, d.get("status") or {}):
            _uses["cleanup_deployment"](dc, old_rss, d)
        _uses["sync_rollout_status"](dc, [*old_rss, new_rs], new_rs, d)
    return rollout


@check("5.2", points=5, seeds=(1, 2), hint="During a rollout the pods never exceed replicas + "
       "maxSurge and available pods never drop below replicas - maxUnavailable.")
def rolls_out_a_deployment(ctx: CheckContext) -> None:
    mistakes: list[str] = []
    with patched(rolling, "rollout_rolling", _learner_rollout(ctx.learner, mistakes)):
        c = ctx.cluster(nodes=2)
        d = _d(4, 1, 1)
        d["spec"]["template"]["spec"]["containers"] = [{"name": "web", "image": "nginx:1.27"}]
        c.apply(d)
        c.run_until(lambda: (c.get("deployments", "web").get("status") or {}).get("availableReplicas") == 4,
                    timeout=120)
        live = c.get("deployments", "web")
        live["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
        generation = c.client.update(live)["metadata"]["generation"]
        worst = {"pods": 0, "available": 4}

        def done() -> bool:
            pods = [p for p in c.get("pods") if not p["metadata"].get("deletionTimestamp")]
            status = c.get("deployments", "web").get("status") or {}
            worst["pods"] = max(worst["pods"], len(pods))
            worst["available"] = min(worst["available"], int(status.get("availableReplicas", 0)))
            return bool(status.get("observedGeneration") == generation and status.get("updatedReplicas") == 4
                        and status.get("availableReplicas") == 4 and status.get("replicas") == 4)
        try:
            c.run_until(done, timeout=300)
        except TimeoutError:
            ctx.fail("the rollout did not complete in 300 virtual seconds", expected="4 updated, "
                     "available replicas", got=c.kubectl("get rs").rstrip())
    if mistakes:
        ctx.fail("the rollout step " + mistakes[0])
    if worst["pods"] > 5:
        ctx.fail("too many pods during the rollout", expected="at most 5 (replicas 4 + maxSurge 1)",
                 got=f"{worst['pods']} pods")
    if worst["available"] < 3:
        ctx.fail("too few available pods during the rollout", expected="at least 3 (replicas 4 - "
                 "maxUnavailable 1)", got=f"{worst['available']} available")
