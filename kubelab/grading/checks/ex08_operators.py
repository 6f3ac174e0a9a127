"""Checks for notebook 08's exercises: a Website reconcile (8.1), a finalizer for an outside
lock (8.2) and a validating webhook that survives its own outage (8.3).

The learner's function is the reconcile of a kubelab.client.operator.Operator that runs as a
component of a full cluster (kubelets run the pods), under its own user, so that watch faults
can hit it alone. Every reconcile is recorded with the requests it sent (RequestLog), which is
what 8.1's efficiency budget counts and what the report shows.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
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


# ---------------------------------------------------------------- 8.3 a validating webhook
#
# The learner's webhook runs as the workload of its own image (c.webhook_servers), behind a
# Deployment and a Service in the namespace "webhooks" (labelled kubelab.dev/webhook=exempt),
# and the learner's configuration installs it. Every answer crosses the grader's wire as JSON.

WEBHOOK_IMAGE = "kubelab.dev/image-policy:1"
WEBHOOK_NS, WEBHOOK_SVC, APPS = "webhooks", "image-policy", "apps"
EXEMPT = {"kubelab.dev/webhook": "exempt"}
PINNED = "use a tag other than latest, or a digest"


def _webhook_run(ctx: CheckContext) -> tuple[Cluster, Any]:
    """A cluster with the learner's webhook served, installed by the learner's configuration."""
    webhook = ctx.learner()
    c = ctx.cluster(nodes=2)
    c.webhook_servers.register(WEBHOOK_IMAGE, lambda review: webhook.review(review))
    labels = {"app": WEBHOOK_SVC}
    c.apply([
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WEBHOOK_NS, "labels": EXEMPT}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": APPS}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": WEBHOOK_SVC, "namespace": WEBHOOK_NS},
         "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
             "metadata": {"labels": labels}, "spec": {"containers": [
                 {"name": "webhook", "image": WEBHOOK_IMAGE, "ports": [{"containerPort": 8443}]}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": WEBHOOK_SVC, "namespace": WEBHOOK_NS},
         "spec": {"selector": labels, "ports": [{"port": 443, "targetPort": 8443}]}}])
    c.run(30)
    configuration = webhook.configuration(WEBHOOK_NS, WEBHOOK_SVC)
    try:
        c.client.create(dict(configuration))
    except ApiError as err:
        ctx.fail("the API server refused your ValidatingWebhookConfiguration",
                 expected="201 Created", got=f"{err.code} {err.reason}: {err.message}")
    return c, webhook


def _pod(name: str, image: str, *, init: str | None = None) -> Object:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": image}]}
    if init is not None:
        spec["initContainers"] = [{"name": "setup", "image": init}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": APPS}, "spec": spec}


def _create(c: Cluster, obj: Object) -> str:
    """"201" or "<code> <reason>: <message>", as a client sees the answer."""
    try:
        c.client.create(obj)
    except ApiError as err:
        return f"{err.code} {err.reason}: {err.message}"
    return "201"


def _denied(container: str, image: str) -> str:
    return (f'403 Forbidden: admission webhook "images.kubelab.dev" denied the request: '
            f'container "{container}": image "{image}" is not pinned: {PINNED}')


@check("8.3", points=3, hint="Look at initContainers, then containers; no tag means latest, and a "
       "digest (@sha256:...) is always pinned. Refuse with status code 403.")
def refuses_unpinned_images_in_kube_apiservers_words(ctx: CheckContext) -> None:
    c, _ = _webhook_run(ctx)
    cases = [
        (_pod("pinned", "nginx:1.27"), "201"),
        (_pod("digest", "nginx@sha256:" + "a" * 64), "201"),
        (_pod("registry-port", "registry.local:5000/nginx:1.27"), "201"),
        (_pod("untagged", "nginx"), _denied("app", "nginx")),
        (_pod("latest", "registry.local:5000/nginx:latest"),
         _denied("app", "registry.local:5000/nginx:latest")),
        (_pod("port-only", "registry.local:5000/nginx"), _denied("app", "registry.local:5000/nginx")),
        (_pod("init", "nginx:1.27", init="busybox"), _denied("setup", "busybox")),
    ]
    for obj, expected in cases:
        ctx.expect_equal(_create(c, obj), expected, f"creating pod {obj['metadata']['name']}",
                         unit="the API server answered")


@check("8.3", points=2, hint="Answer with apiVersion admission.k8s.io/v1, kind AdmissionReview and "
       "response.uid = request.uid; the API server refuses any other answer.")
def answers_with_the_requests_uid_on_create_and_update(ctx: CheckContext) -> None:
    c, webhook = _webhook_run(ctx)
    ctx.expect_equal(_create(c, _pod("web", "nginx:1.27")), "201", "creating a pinned pod",
                     unit="the API server answered")
    pod = c.client.get("pods", "web", namespace=APPS)
    pod["spec"]["containers"][0]["image"] = "nginx:latest"
    try:
        c.client.update(pod)
        got = "200"
    except ApiError as err:
        got = f"{err.code} {err.reason}: {err.message}"
    ctx.expect_equal(got, _denied("app", "nginx:latest"), "an update to an unpinned image",
                     unit="the API server answered")
    for uid in ("5a4f6c1e-0000-4000-8000-000000000001", "5a4f6c1e-0000-4000-8000-000000000002"):
        answer = webhook.review({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                 "request": {"uid": uid, "operation": "CREATE",
                                             "object": _pod("x", "nginx:1.27")}})
        got_uid = ((answer or {}).get("response") or {}).get("uid") if isinstance(answer, dict) else None
        ctx.expect_equal(got_uid, uid, "the uid of your answer", unit="response.uid =")


@check("8.3", points=2, hint="timeoutSeconds: 3 and failurePolicy: Fail: a webhook that hangs "
       "refuses each create after 3 s, it never lets one through.")
def a_hung_webhook_fails_closed_within_three_seconds(ctx: CheckContext) -> None:
    c, _ = _webhook_run(ctx)
    c.faults.slow_webhook(WEBHOOK_IMAGE, 20)
    got = _create(c, _pod("while-hung", "nginx"))
    ctx.expect_equal(got.split(": ")[0], "500 InternalError", "creating an unpinned pod while the "
                     "webhook hangs", unit="the API server answered",
                     hint="failurePolicy Fail: a webhook that does not answer must not let it in.")
    if "context deadline exceeded" not in got or "timeout=3s" not in got:
        ctx.fail("the request did not time out after 3 seconds", expected='... "https://image-policy.'
                 'webhooks.svc:443/validate?timeout=3s": context deadline exceeded', got=got)
    ctx.expect_equal(c.apiserver.audit[-1].latency, 3.0, "how long the create waited for the webhook",
                     unit="seconds")


@check("8.3", points=3, hint="A namespaceSelector that leaves out kubelab.dev/webhook=exempt lets the "
       "webhook's own pods be recreated while it is down.")
def recovers_from_its_own_outage(ctx: CheckContext) -> None:
    c, _ = _webhook_run(ctx)
    c.kubectl(f"-n {WEBHOOK_NS} scale deployment {WEBHOOK_SVC} --replicas=0")
    c.run(30)
    got = _create(c, _pod("while-down", "nginx:1.27"))
    no_endpoints = 'no endpoints available for service "image-policy"'
    if not got.startswith("500 InternalError") or no_endpoints not in got:
        ctx.fail("a create during the outage was not refused as failurePolicy Fail refuses it",
                 expected='500 InternalError: ... no endpoints available for service "image-policy"',
                 got=got)
    c.kubectl(f"-n {WEBHOOK_NS} scale deployment {WEBHOOK_SVC} --replicas=2")
    c.run(60)
    running = [p["metadata"]["name"] for p in c.get("pods", namespace=WEBHOOK_NS)
               if (p.get("status") or {}).get("phase") == "Running"]
    ctx.expect_equal(len(running), 2, "the webhook's own pods after it was scaled back up",
                     unit="Running pod(s)", hint="Its namespace is labelled kubelab.dev/webhook=exempt: "
                     "leave such namespaces out, or its pods are refused by itself.")
    ctx.expect_equal(_create(c, _pod("after", "nginx:1.27")), "201", "creating a pinned pod after "
                     "the outage", unit="the API server answered")
    ctx.expect_equal(_create(c, _pod("after-bad", "nginx")).split(": ")[0], "403 Forbidden",
                     "creating an unpinned pod after the outage", unit="the API server answered")
