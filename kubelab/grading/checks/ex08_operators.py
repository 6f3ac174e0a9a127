"""Checks for notebook 08's exercises: a Website reconcile (8.1) and a finalizer for an outside
lock (8.2).

The learner's function is the reconcile of a kubelab.client.operator.Operator that runs as a
component of a full cluster (kubelets run the pods), under its own user, so that watch faults
can hit it alone. Every reconcile is recorded with the requests it sent (RequestLog), which is
what 8.1's efficiency budget counts and what the report shows.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.client.operator import Cache, Operator, Reconciler, ReconcileRecord, Request, Result
from kubelab.cluster import Cluster
from kubelab.cluster.ledger import Ledger, ledger_for
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.grading.shared import share
from kubelab.samples.crds import LEDGER_LOCK_CRD, LOCK_FINALIZER, WEBSITE_CRD, ledger_lock, website

__all__: list[str] = []

share(Cache, ("get", "list"))
share(Ledger, ("acquire_lock", "release_lock"))

USER = "system:serviceaccount:operators:learner-operator"
NAME = "learner-operator"


class _Learner(Reconciler):
    def __init__(self, call: Any) -> None:
        self.call = call

    def reconcile(self, request: Request) -> Result | None:
        self.call(self, request)
        return None


class _Run:
    """A cluster with the learner's operator, and every instance of it (restarts included)."""

    def __init__(self, ctx: CheckContext, crd: Object, resource: str, owns: list[str], call: Any) -> None:
        self.c: Cluster = ctx.cluster(nodes=2)
        self.c.apply(crd)
        self.operators: list[Operator] = []

        def build(cctx: Any) -> Operator:
            op = Operator(cctx, _Learner(call), for_resource=resource, owns=owns)
            self.operators.append(op)
            return op
        self.c.add_component(NAME, build, user=USER, groups=("system:masters",))
        self.c.run(1)

    @property
    def records(self) -> list[ReconcileRecord]:
        return [r for op in self.operators for r in op.records]


# ---------------------------------------------------------------- 8.1 Website


def _website_run(ctx: CheckContext) -> _Run:
    def call(rec: Reconciler, request: Request) -> None:
        ctx.learner(request.namespace, request.name, rec.client, rec.cache, rec.clock.now)
    return _Run(ctx, WEBSITE_CRD, "websites", ["deployments"], call)


def _ready(site: Object) -> Object:
    for condition in (site.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return condition  # type: ignore[no-any-return]
    return {}


def _expect_served(ctx: CheckContext, c: Cluster, name: str, replicas: int, image: str, when: str) -> None:
    site = c.get("websites", name)
    if not c.exists("deployments", name):
        ctx.fail(f"no Deployment {name} {when}", expected=f"Deployment {name}, owned by Website {name}",
                 got="none")
    d = c.get("deployments", name)
    refs = [r for r in d["metadata"].get("ownerReferences") or () if r.get("controller")]
    ctx.expect_equal([(r.get("kind"), r.get("uid")) for r in refs], [("Website", site["metadata"]["uid"])],
                     f"the Deployment's controller {when}", unit="ownerReferences (controller) =")
    got = (d["spec"].get("replicas"), d["spec"]["template"]["spec"]["containers"][0].get("image"))
    ctx.expect_equal(got, (replicas, image), f"the Deployment's spec {when}", unit="(replicas, image) =")
    generation = site["metadata"].get("generation")
    ready = _ready(site)
    ctx.expect_equal((ready.get("status"), ready.get("reason"), ready.get("observedGeneration"),
                      (site.get("status") or {}).get("observedGeneration"),
                      (site.get("status") or {}).get("readyReplicas")),
                     ("True", "Available", generation, generation, replicas),
                     f"the Website's status {when}",
                     unit="(Ready, reason, condition observedGeneration, status.observedGeneration, "
                          "readyReplicas) =")


@check("8.1", points=3, hint="Create the Deployment with set_controller_reference; report Ready from "
       "its status.availableReplicas, with observedGeneration = metadata.generation.")
def creates_an_owned_deployment_and_reports_ready(ctx: CheckContext) -> None:
    run = _website_run(ctx)
    run.c.apply(website("shop", 2))
    run.c.run(30)
    _expect_served(ctx, run.c, "shop", 2, "nginx:1.27", "30 s after the Website was created")
    first = _ready(run.c.get("websites", "shop")).get("lastTransitionTime")
    run.operators[-1].enqueue("default/shop")
    run.c.run(5)
    ctx.expect_equal(_ready(run.c.get("websites", "shop")).get("lastTransitionTime"), first,
                     "Ready's lastTransitionTime after a reconcile that changed nothing (it moves only "
                     "when the status does)", unit="lastTransitionTime =")


@check("8.1", points=2, hint="Read the spec from the cache each time; a 409 Conflict from a stale "
       "cache is fine to raise: the key is retried and the next read is newer.")
def follows_concurrent_spec_edits(ctx: CheckContext) -> None:
    run = _website_run(ctx)
    c = run.c
    c.apply(website("shop", 2))
    c.run(20)
    c.client.patch("websites", "shop", {"spec": {"replicas": 3}})
    c.client.patch("websites", "shop", {"spec": {"image": "nginx:1.28"}})
    c.run(0.3)
    c.client.patch("websites", "shop", {"spec": {"replicas": 1}})
    c.run(40)
    _expect_served(ctx, c, "shop", 1, "nginx:1.28", "after three quick spec edits")


@check("8.1", points=3, seeds=(1, 2), hint="Reconcile from the cache, never from memory or from the "
       "event: after a crash or lost events the next reconcile must still see what is missing.")
def survives_crashes_lost_events_and_a_deleted_child(ctx: CheckContext) -> None:
    run = _website_run(ctx)
    c = run.c
    c.faults.drop_watch_events(0.5, user=USER)
    c.apply(website("shop", 2))
    c.faults.at(c.clock.now + 2, "crash", NAME)
    c.faults.at(c.clock.now + 3, "restart", NAME)
    c.run(15)
    if c.exists("deployments", "shop"):
        c.client.delete("deployments", "shop", propagation_policy="Background")
    c.run(5)
    c.faults.heal_watch_events()
    c.run(60)
    _expect_served(ctx, c, "shop", 2, "nginx:1.27",
                   "after crashes, dropped watch events and a deleted Deployment")


@check("8.1", points=2, hint="Compare before you write: no request when nothing changed, and read "
       "through cache.get instead of listing.")
def stays_within_the_request_budget(ctx: CheckContext) -> None:
    run = _website_run(ctx)
    c = run.c
    c.apply(website("shop", 2))
    c.run(30)
    _expect_served(ctx, c, "shop", 2, "nginx:1.27", "30 s after the Website was created")
    start = len(run.records)
    for _ in range(3):
        run.operators[-1].enqueue("default/shop")
        c.run(2)
    idle = [r for r in run.records[start:] if r.requests]
    if idle:
        ctx.fail("a reconcile with nothing to change sent requests",
                 expected="no request when the Deployment and the status already match",
                 got="; ".join(str(r) for r in idle[:3]))
    lists = [r for r in run.records if any(q.startswith("list") for q in r.requests)]
    if lists:
        ctx.fail("a reconcile listed: the informer's cache has the answer",
                 expected="cache.get / cache.list, no LIST request", got="; ".join(str(r) for r in lists[:3]))


# ---------------------------------------------------------------- 8.2 LedgerLock


def _lock_run(ctx: CheckContext) -> tuple[_Run, Ledger]:
    holder: dict[str, Ledger] = {}

    def call(rec: Reconciler, request: Request) -> None:
        ctx.learner(request.namespace, request.name, rec.client, rec.cache, holder["ledger"])
    run = _Run(ctx, LEDGER_LOCK_CRD, "ledgerlocks", [], call)
    holder["ledger"] = ledger_for(run.c)
    return run, holder["ledger"]


def _expect_once(ctx: CheckContext, ledger: Ledger, books: list[str], when: str) -> None:
    acquired = sorted(b for _, b, _ in ledger.acquired)
    released = sorted(b for _, b, _ in ledger.released)
    ctx.expect_equal((acquired, released, sorted(ledger.locks)), (sorted(books), sorted(books), []),
                     f"the ledger's locks {when}", unit="(books acquired, books released, still held) =")


@check("8.2", points=4, hint="Add the finalizer first; on deletion release the lock, then remove "
       "the finalizer.")
def holds_and_releases_the_lock(ctx: CheckContext) -> None:
    run, ledger = _lock_run(ctx)
    c = run.c
    c.apply(ledger_lock("eod", "equities"))
    c.run(5)
    lock = c.get("ledgerlocks", "eod")
    ctx.expect_equal(lock["metadata"].get("finalizers"), [LOCK_FINALIZER], "the LedgerLock's finalizers",
                     unit="metadata.finalizers =")
    ctx.expect_equal(ledger.holder_of("equities"), lock["metadata"]["uid"], "who holds the book's lock",
                     unit="holder =")
    ctx.expect_equal((lock.get("status") or {}).get("token"), ledger.locks["equities"][1],
                     "status.token", unit="status.token =")
    c.client.delete("ledgerlocks", "eod")
    c.run(5)
    if c.exists("ledgerlocks", "eod"):
        ctx.fail("the LedgerLock was not deleted", expected="gone 5 s after the delete",
                 got=f"finalizers {c.get('ledgerlocks', 'eod')['metadata'].get('finalizers')}")
    _expect_once(ctx, ledger, ["equities"], "after the LedgerLock was deleted")


@check("8.2", points=3, hint="Release before you remove the finalizer: while the ledger is down, the "
       "finalizer must keep the object.")
def waits_for_a_ledger_that_is_down(ctx: CheckContext) -> None:
    run, ledger = _lock_run(ctx)
    c = run.c
    c.apply(ledger_lock("eod", "equities"))
    c.run(5)
    c.faults.ledger_down()
    c.client.delete("ledgerlocks", "eod")
    c.run(60)
    if not c.exists("ledgerlocks", "eod"):
        ctx.fail("the LedgerLock was deleted while the ledger was down", expected="kept by the finalizer "
                 "until the lock is released", got=f"gone; locks still held: {sorted(ledger.locks)}")
    c.faults.ledger_up()
    c.run(1100)  # the back-off may have grown to 1000 s
    if c.exists("ledgerlocks", "eod"):
        ctx.fail("the LedgerLock stayed after the ledger came back", expected="gone",
                 got=f"finalizers {c.get('ledgerlocks', 'eod')['metadata'].get('finalizers')}")
    _expect_once(ctx, ledger, ["equities"], "after the ledger came back")


@check("8.2", points=3, seeds=(1, 2, 3), hint="Decide from the object as the cache shows it now: a "
       "deletionTimestamp means release, never acquire.")
def released_once_when_deletion_and_a_crash_race(ctx: CheckContext) -> None:
    run, ledger = _lock_run(ctx)
    c = run.c
    books = ["equities", "bonds", "fx"]
    for book in books:
        c.apply(ledger_lock(f"lock-{book}", book))
    c.run(5)
    c.faults.drop_watch_events(0.3, user=USER)
    for book in books:
        c.client.delete("ledgerlocks", f"lock-{book}")
    c.faults.crash(NAME)
    c.faults.ledger_down()
    c.run(2)
    c.faults.restart(NAME)
    c.run(3)
    c.faults.ledger_up()
    c.faults.at(c.clock.now + 1, "crash", NAME)
    c.faults.at(c.clock.now + 2, "restart", NAME)
    c.run(10)
    c.faults.heal_watch_events()
    c.run(1100)
    left = [o["metadata"]["name"] for o in c.get("ledgerlocks")]
    ctx.expect_equal(left, [], "LedgerLocks left after deletion, crashes and a ledger outage",
                     unit="LedgerLocks =")
    _expect_once(ctx, ledger, books, "after deletion, crashes and a ledger outage")
