"""Checks for notebook 03's exercises: the workqueue (3.1) and a reflector (3.2).

3.1's queue is swapped in for kubelab's inside a real controller loop
(kubelab.client.controller_loop, with two workers and a sync that takes time), fed by a shared
informer; 3.2's reflector keeps a store in step with a real API server while watches break,
the server restarts and the store is compacted.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from kubelab.api.meta import namespace_key
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.client.workqueue import RateLimitingQueue
from kubelab.grading.checks.common import configmap
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.grading.shared import share
from kubelab.sim.clock import Clock

__all__: list[str] = []


def _expect_get(ctx: CheckContext, queue: Any, expected: tuple[Any, bool], when: str) -> None:
    got = queue.get()
    got = tuple(got) if isinstance(got, (list, tuple)) else got
    ctx.expect_equal(got, expected, f"get() {when}", unit="(item, shutting_down) =")


@check("3.1", points=2, hint="Keep a `dirty` set: adding an item that is already waiting does "
       "nothing; get() hands items out in the order they were first added.")
def dedupes_waiting_items(ctx: CheckContext) -> None:
    q = ctx.learner()
    for item in ("a", "b", "a", "a"):
        q.add(item)
    ctx.expect_equal(len(q), 2, "len() after add a, b, a, a", unit="queued item(s)")
    _expect_get(ctx, q, ("a", False), "after add a, b, a, a")
    _expect_get(ctx, q, ("b", False), "second")
    _expect_get(ctx, q, (None, False), "with nothing waiting (Go would block here)")


@check("3.1", points=3, hint="Keep a `processing` set: an item added while a worker holds it waits "
       "in `dirty` and goes to the back of the queue when that worker calls done().")
def one_worker_per_item(ctx: CheckContext) -> None:
    q = ctx.learner()
    q.add("a")
    _expect_get(ctx, q, ("a", False), "after add a")
    q.add("b")
    q.add("a")
    q.add("c")
    ctx.expect_equal(len(q), 2, "len() while a is being processed and was added again (b and c wait; "
                     "a may not be handed to a second worker)", unit="queued item(s)")
    _expect_get(ctx, q, ("b", False), "while a is processed")
    q.done("a")
    ctx.expect_equal(len(q), 2, "len() after done(a): a queued again behind c", unit="queued item(s)")
    _expect_get(ctx, q, ("c", False), "after done(a)")
    _expect_get(ctx, q, ("a", False), "after c")
    for item in ("a", "b", "c"):
        q.done(item)
    ctx.expect_equal(len(q), 0, "len() once everything is done", unit="queued item(s)")


@check("3.1", points=1, hint="After shut_down(), add() is ignored and get() drains what is queued, "
       "then answers (None, True).")
def shut_down_drains_then_stops(ctx: CheckContext) -> None:
    q = ctx.learner()
    q.add("a")
    q.add("b")
    q.shut_down()
    q.add("c")
    ctx.expect_equal(bool(q.shutting_down()), True, "shutting_down() after shut_down()",
                     unit="shutting_down() =")
    _expect_get(ctx, q, ("a", False), "after shut_down (queued items still drain)")
    _expect_get(ctx, q, ("b", False), "second")
    _expect_get(ctx, q, (None, True), "once drained: the worker must stop")


class LearnerQueue(RateLimitingQueue[str]):
    """kubelab's RateLimitingQueue with the learner's queue as its heart (add/get/done/len),
    and a guard that notices a key handed to two workers at once."""

    def __init__(self, clock: Clock, learner: Any) -> None:
        super().__init__(clock, name="learner")
        self._learner = learner
        self.holding: set[Hashable] = set()
        self.double_handouts: list[Hashable] = []

    def add(self, item: str) -> None:
        if self.shutting_down():
            return
        self._learner.add(item)
        self.adds += 1
        self._signal()

    def __len__(self) -> int:
        return len(self._learner)

    def get(self) -> tuple[str | None, bool]:
        answer = self._learner.get()
        item, shutdown = answer[0], bool(answer[1])
        if item is not None:
            self.gets += 1
            if item in self.holding:
                self.double_handouts.append(item)
            self.holding.add(item)
        return item, shutdown

    def done(self, item: str) -> None:
        self.holding.discard(item)
        self._learner.done(item)
        self.dones += 1
        if len(self) > 0:
            self._signal()

    def shut_down(self) -> None:
        self._learner.shut_down()
        super().shut_down()

    def _wake_up(self) -> None:
        self._wake = None
        if len(self) > 0 or self.shutting_down():
            for callback in list(self._ready_callbacks):
                callback()


@check("3.1", points=4, seeds=(1, 2), hint="A controller relies on all three promises: no key twice "
       "in the queue, never two workers on one key, and a key added during its sync is synced again.")
def drives_a_controller(ctx: CheckContext) -> None:
    c = ctx.cluster(nodes=0, components=[])
    names = [f"cm-{i}" for i in range(5)]
    for name in names:
        c.client.create(configmap(name, {"v": "0"}))
    factory = SharedInformerFactory(c.client, c.clock, rand=c.rand, name="grader")
    informer = factory.informer_for("configmaps")
    seen: dict[str, str] = {}
    syncs: dict[str, int] = {}

    def sync(key: str) -> None:
        syncs[key] = syncs.get(key, 0) + 1
        _namespace, _, _name = key.partition("/")
        obj, exists = informer.indexer.get_by_key(key)
        seen[key] = obj["data"]["v"] if exists else "<deleted>"

    queue = LearnerQueue(c.clock, ctx.learner())
    controller = Controller("grader-controller", sync, c.clock, workers=2, cost=0.5, queue=queue)
    informer.add_event_handler(controller.handler())
    factory.start()
    controller.run()
    for round_ in range(1, 6):  # bursts of updates, some landing while a key is being synced
        for name in names:
            c.client.patch("configmaps", name, {"data": {"v": str(round_)}})
        c.run(0.3 if round_ % 2 else 0.1)
    c.run(10)
    if queue.double_handouts:
        ctx.fail("a key was handed to a second worker while the first still held it",
                 expected="one worker per key", got=f"{queue.double_handouts[0]} handed out twice")
    final = {namespace_key(cm): cm["data"]["v"] for cm in c.get("configmaps")
             if cm["metadata"]["name"] in names}
    ctx.expect_equal(seen, final, "what the last sync of each key saw (a key added while it was "
                     "being synced must be synced again)", unit="data.v per key, as last synced =")
    busiest = max(syncs.values())
    if busiest > 8:
        ctx.fail("bursts of updates were not deduplicated", expected="at most 8 syncs per key for "
                 "5 bursts", got=f"{busiest} syncs of one key")


# ---------------------------------------------------------------- 3.2 Reflector


class ClientView:
    """The cluster's client as the reflector sees it, counting LISTs and WATCHes."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.lists = 0
        self.watch_versions: list[str] = []

    def list(self, resource: str, namespace: str = "", **kwargs: Any) -> Any:
        self.lists += 1
        return self._client.list(resource, namespace, **kwargs)

    def watch(self, resource: str, on_event: Any, namespace: str = "", **kwargs: Any) -> Any:
        self.watch_versions.append(str(kwargs.get("resource_version", "")))
        return self._client.watch(resource, on_event, namespace, **kwargs)


class RecordingStore:
    """A cache.Store that remembers what the reflector told it."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.replaces: list[str] = []
        self.writes = 0

    def replace(self, objects: list[Any], resource_version: str = "") -> None:
        self.replaces.append(str(resource_version))
        self.items = {namespace_key(o): o for o in objects}
        self.writes += 1

    def add(self, obj: Any) -> None:
        self.items[namespace_key(obj)] = obj
        self.writes += 1

    update = add

    def delete(self, obj: Any) -> None:
        self.items.pop(namespace_key(obj), None)
        self.writes += 1

    def resync(self) -> None:
        pass


share(ClientView, ("list", "watch"))
share(RecordingStore, ("replace", "add", "update", "delete", "resync"))


def _reflector(ctx: CheckContext) -> tuple[Any, ClientView, RecordingStore, Any]:
    c = ctx.cluster(nodes=0, components=[])
    for name in ("a", "b", "c"):
        c.client.create(configmap(name, {"v": "0"}))
    client, store = ClientView(c.client), RecordingStore()
    reflector = ctx.learner(client, "configmaps", store, c.clock)
    return c, client, store, reflector


def _expect_in_step(ctx: CheckContext, c: Any, store: RecordingStore, when: str) -> None:
    truth = {namespace_key(o): o["metadata"]["resourceVersion"] for o in c.get("configmaps", namespace=None)}
    mine = {k: (o.get("metadata") or {}).get("resourceVersion") for k, o in store.items.items()}
    if mine != truth:
        ctx.fail(f"the store is out of step with the API server {when}",
                 expected="key@resourceVersion: " + ", ".join(f"{k}@{v}" for k, v in sorted(truth.items())),
                 got="key@resourceVersion: " + (", ".join(f"{k}@{v}" for k, v in sorted(mine.items()))
                                               or "nothing"))


@check("3.2", points=2, hint="LIST, store.replace(items, rv), then WATCH from the list's "
       "metadata.resourceVersion; ADDED/MODIFIED/DELETED become add/update/delete.")
def lists_then_watches(ctx: CheckContext) -> None:
    c, client, store, reflector = _reflector(ctx)
    reflector.run()
    list_rv = str(c.client.list("configmaps")["metadata"]["resourceVersion"])
    ctx.expect_equal(store.replaces, [list_rv], "store.replace calls (one, with the list's resourceVersion)",
                     unit="resourceVersion of each store.replace =")
    ctx.expect_equal(client.watch_versions, [list_rv], "the watch must start at the list's resourceVersion",
                     unit="resourceVersion of each WATCH =")
    c.client.create(configmap("d", {"v": "0"}))
    c.client.patch("configmaps", "a", {"data": {"v": "1"}})
    c.client.delete("configmaps", "b")
    c.run(1)
    _expect_in_step(ctx, c, store, "after create, update and delete")


@check("3.2", points=3, hint="When the server closes the watch (on_close), watch again from the last "
       "resourceVersion you saw, after a second; no LIST: the server replays what you missed.")
def rewatches_after_a_broken_watch(ctx: CheckContext) -> None:
    c, client, store, reflector = _reflector(ctx)
    reflector.run()
    c.run(1)
    c.faults.break_watches()
    c.client.create(configmap("d", {"v": "0"}))
    c.client.delete("configmaps", "a")
    c.run(5)
    _expect_in_step(ctx, c, store, "after the watch broke and came back")
    ctx.expect_equal(client.lists, 1, "LISTs (a broken watch needs no relist)", unit="LIST(s)")
    if len(client.watch_versions) < 2:
        ctx.fail("the reflector never watched again", expected="a second WATCH",
                 got=f"{len(client.watch_versions)} watch(es)")


@check("3.2", points=4, seeds=(1, 2), hint="An ERROR event with code 410 (Expired/Gone) means that "
       "version was compacted away: LIST again (store.replace drops what was deleted), then WATCH.")
def relists_after_410_gone(ctx: CheckContext) -> None:
    c, client, store, reflector = _reflector(ctx)
    reflector.run()
    c.run(1)
    c.faults.crash("apiserver")  # every watch ends; the restarted server's cache starts empty
    c.faults.restart("apiserver")
    c.client.create(configmap("gone", {"v": "0"}))
    c.client.delete("configmaps", "gone")
    c.client.delete("configmaps", "a")
    c.client.create(configmap("kept", {"v": "0"}))
    c.faults.compact()
    c.run(10)
    _expect_in_step(ctx, c, store, "after 410 Gone")
    ctx.expect_equal(client.lists, 2, "LISTs (exactly one relist after 410)", unit="LIST(s)")
    c.client.patch("configmaps", "kept", {"data": {"v": "1"}})
    c.run(1)
    _expect_in_step(ctx, c, store, "watching again after the relist")


@check("3.2", points=1, hint="stop() stops the watch (handle.stop()) and any pending retry: "
       "nothing reaches the store afterwards.")
def stop_means_stop(ctx: CheckContext) -> None:
    c, client, store, reflector = _reflector(ctx)
    reflector.run()
    c.run(1)
    if not store.replaces or not client.watch_versions:  # stopping is only worth something once running
        ctx.fail("run() did not list and watch before stop() was called",
                 expected="1 store.replace and 1 WATCH",
                 got=f"{len(store.replaces)} store.replace(s) and {len(client.watch_versions)} WATCH(es)")
    reflector.stop()
    writes, watches = store.writes, len(client.watch_versions)
    c.client.create(configmap("late", {"v": "0"}))
    c.faults.break_watches()
    c.run(5)
    ctx.expect_equal(store.writes, writes, "store writes after stop()", unit="store write(s)")
    ctx.expect_equal(len(client.watch_versions), watches, "watches opened after stop()",
                     unit="WATCH(es) opened")
