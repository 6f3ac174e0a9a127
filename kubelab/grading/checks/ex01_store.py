"""Checks for notebook 01's exercises: compare-and-swap (1.1) and a resumable watch (1.2).

Both run against the etcd of a real simulated Cluster, holding ConfigMaps that the API server
also reads and writes, so "another writer" is the API server acting for another client.

1.2's mirror is looked at between a change and its delivery (the store delivers watch events
in a clock callback, as etcd's watch stream arrives after the write) and while it is stopped:
its items must be the store as of the last revision it heard, read from the store's own
history, so a mirror that reads the store when looked at (by range or through a txn) is seen.
"""

from __future__ import annotations

import json
import random
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.grading.checks.common import StoreView, configmap, count_of
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.grading.remote import GraderError, RemoteError

__all__: list[str] = []  # checks register themselves with @check

PREFIX = "/registry/configmaps/default/"
KEY = PREFIX + "counter"


def increment(value: bytes) -> bytes:
    """The learner's mutate: count + 1 in an encoded ConfigMap."""
    obj = json.loads(value)
    obj["data"]["count"] = str(int(obj["data"]["count"]) + 1)
    return json.dumps(obj, separators=(",", ":")).encode()


class Rival:
    """Another client that updates the same ConfigMap through the API server, right after the
    learner has read it (with probability `chance`, at most `streak` times in a row), or, with
    delete, deletes it once. Its own failure is the grader's (GraderError), never the learner's."""

    def __init__(self, ctx: CheckContext, cluster: Any, chance: float, streak: int = 3,
                 delete: bool = False) -> None:
        self.cluster, self.rand = cluster, random.Random(ctx.seed)
        self.chance, self.streak, self.delete = chance, streak, delete
        self.writes = 0
        self.in_a_row = 0
        self.deleted = False

    def after_read(self, key: str) -> None:
        if key != KEY or self.in_a_row >= self.streak or self.rand.random() >= self.chance:
            self.in_a_row = 0
            return
        self.in_a_row += 1
        try:
            self._write()
        except ApiError as err:
            raise GraderError(f"the simulated rival writer got {err.code} {err.reason}: "
                              f"{err.message}") from None

    def _write(self) -> None:
        if self.delete:
            if not self.deleted:
                self.cluster.client.delete("configmaps", "counter")
                self.deleted = True
            return
        obj = self.cluster.client.get("configmaps", "counter")
        obj["data"]["count"] = str(int(obj["data"]["count"]) + 1)
        self.cluster.client.update(obj)
        self.writes += 1


def _counter(ctx: CheckContext, rival: dict[str, Any] | None = None) -> tuple[Any, StoreView, Rival | None]:
    c = ctx.cluster(nodes=0, components=[])
    c.apply(configmap("counter", {"count": "0"}))
    r = Rival(ctx, c, **rival) if rival is not None else None
    return c, StoreView(c.store, r.after_read if r else None), r


def _count(c: Any) -> int:
    return int(c.get("configmaps", "counter")["data"]["count"])


@check("1.1", points=2, hint="One range, then one txn: compare the mod_revision you read, put the "
       "new value, and return TxnResponse.revision.")
def updates_a_key(ctx: CheckContext) -> None:
    c, store, _ = _counter(ctx)
    revision = ctx.learner(store, KEY, increment)
    ctx.expect_equal(_count(c), 1, "the ConfigMap default/counter was not updated once", unit="data.count =",
                     hint="Write mutate(value) with a txn; check TxnResponse.succeeded.")
    live = int(c.get("configmaps", "counter")["metadata"]["resourceVersion"])
    ctx.expect_equal(revision, live, "cas_update must return the revision of its write "
                     "(the object's new resourceVersion)", unit="revision =")
    ctx.expect_equal(store.puts, 0, "an update must be a guarded txn, never store.put",
                     unit="store.put call(s)")


@check("1.1", points=4, seeds=(1, 2, 3), hint="When TxnResponse.succeeded is False somebody else "
       "wrote first: call mutate on the current value and try again.")
def survives_conflicting_writers(ctx: CheckContext) -> None:
    c, store, rival = _counter(ctx, {"chance": 0.5})
    assert rival is not None
    revisions = [ctx.learner(store, KEY, increment) for _ in range(12)]
    expected = 12 + rival.writes
    got = _count(c)
    if got != expected:
        ctx.fail(f"{expected - got} update(s) were lost while another client wrote the same "
                 "ConfigMap", expected=f"data.count = {expected} (12 yours + {rival.writes} theirs)",
                 got=f"data.count = {got}")
    for rev in revisions:
        kvs = c.store.range(KEY, revision=rev).kvs
        if not kvs or kvs[0].mod_revision != rev:
            ctx.fail("cas_update returned a revision at which it did not write the key",
                     expected="TxnResponse.revision of the successful txn", got=f"revision {rev}")


@check("1.1", points=2, seeds=(1, 2), hint="A txn's failure branch can read: RangeRequest(key) "
       "there returns the current value, so a retry needs no second range.")
def one_request_per_attempt(ctx: CheckContext) -> None:
    _c, store, _rival = _counter(ctx, {"chance": 0.6})
    calls = 8
    for _ in range(calls):
        ctx.learner(store, KEY, increment)
    attempts = calls + store.failed_txns
    ctx.expect_equal(store.ranges, calls, "every retry should reuse the value the failed txn "
                     "returned instead of reading again", unit="store.range call(s)")
    ctx.expect_equal(store.txns, attempts, "one txn per attempt", unit="store.txn call(s)")
    ctx.expect_equal(store.puts, 0, "an update must be a guarded txn, never store.put",
                     unit="store.put call(s)")


@check("1.1", points=2, hint='If the key is gone raise LookupError (e.g. key "..." not found) and '
       "write nothing: an update never creates.")
def missing_key_is_not_created(ctx: CheckContext) -> None:
    c, store, _ = _counter(ctx, {"chance": 1.0, "streak": 1, "delete": True})
    try:
        ctx.learner(store, KEY, increment)
    except RemoteError as err:
        if err.type_name not in ("LookupError", "KeyError"):
            raise
    else:
        ctx.fail("another client deleted the key between your read and your write, and "
                 "cas_update did not notice", expected="LookupError", got="it returned normally")
    if c.store.range(KEY).kvs:
        ctx.fail("cas_update recreated a deleted key", expected=f'no key "{KEY}"',
                 got=f"configmaps/counter with data.count = {count_of(c.store.range(KEY).kvs[0].value)}")
    try:
        ctx.learner(StoreView(c.store), PREFIX + "never-existed", increment)
    except RemoteError as err:
        if err.type_name not in ("LookupError", "KeyError"):
            raise
        return
    ctx.fail("cas_update on a key that does not exist must raise LookupError",
             expected="LookupError", got="it returned normally")


# ---------------------------------------------------------------- 1.2 PrefixMirror


def _mirror_scene(ctx: CheckContext) -> tuple[Any, StoreView, Any]:
    c = ctx.cluster(nodes=0, components=[])
    c.apply([configmap("a", {"v": "1"}), configmap("b", {"v": "1"}),
             {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "outside"},
              "data": {"k": "dg=="}}])
    store = StoreView(c.store)
    mirror = ctx.learner(store, PREFIX)
    return c, store, mirror


def _change(c: Any, *steps: str) -> None:
    """'+x' creates ConfigMap x, '~x' updates it, '-x' deletes it, through the API server."""
    for step in steps:
        op, name = step[0], step[1:]
        if op == "+":
            c.client.create(configmap(name, {"v": "1"}))
        elif op == "~":
            c.client.patch("configmaps", name, {"data": {"v": str(c.clock.now)}})
        else:
            c.client.delete("configmaps", name)


def _expect_mirrored(ctx: CheckContext, c: Any, mirror: Any, when: str, revision: int = 0,
                     what: str = "") -> None:
    """items must equal the store under PREFIX as of `revision` (0: now). The store's history
    is the answer: what the mirror has heard, not what a table says."""
    truth = {kv.key: kv.value for kv in c.store.range(PREFIX, prefix=True, revision=revision).kvs}
    items = mirror.items
    if not isinstance(items, dict) or items != truth:
        mine = items if isinstance(items, dict) else {}
        stale = sorted(set(mine) - set(truth))
        missing = sorted(set(truth) - set(mine))
        old = sorted(k for k in set(mine) & set(truth) if mine[k] != truth[k])
        ctx.fail(what or f"items differ from the store under {PREFIX} {when}",
                 expected=f"{len(truth)} keys: {', '.join(k[len(PREFIX):] for k in sorted(truth))}"
                 + (f" (the store at revision {revision})" if revision else ""),
                 got=f"missing {missing or 'none'}, stale {stale or 'none'}, outdated {old or 'none'}")


def _expect_unheard(ctx: CheckContext, c: Any, mirror: Any, heard: int, when: str) -> None:
    """Changes the watch has not delivered (nothing ran on the clock since, or the mirror is
    stopped) must not show in items: a mirror shows what it heard, as an informer's cache does."""
    _expect_mirrored(ctx, c, mirror, when, heard,
                     f"items changed {when}, before any watch event told the mirror: items must "
                     "come from the watch events, not from reading the store when looked at")


@check("1.2", points=3, hint="List with store.range(prefix, prefix=True), then watch from the "
       "list's revision + 1; apply PUT and DELETE events in order.")
def mirrors_a_prefix(ctx: CheckContext) -> None:
    c, store, mirror = _mirror_scene(ctx)
    mirror.start()
    _expect_mirrored(ctx, c, mirror, "right after start() (the initial list)")
    listed = c.store.revision
    _change(c, "+c", "~a", "-b", "+d", "~d")  # delivered on the clock: not yet
    _expect_unheard(ctx, c, mirror, listed, "as soon as the store changed")
    c.run(1)
    _expect_mirrored(ctx, c, mirror, "after creates, updates and deletes")
    ctx.expect_equal(store.ranges + store.txns, 1, "after the initial list, items must come from "
                     "the watch (a mirror that reads the store when asked is not a mirror)",
                     unit="read(s) of the store (range or txn):")
    if len(store.watch_starts) != 1:
        ctx.fail("start() must open one watch and keep it", expected="1 store.watch call",
                 got=f"{len(store.watch_starts)} store.watch call(s)")
    ctx.expect_equal(mirror.revision, c.store.revision, "revision must be the last revision "
                     "heard (WatchResponse.header_revision)", unit="revision =")


@check("1.2", points=3, seeds=(1, 2), hint="A restart resumes the watch from revision + 1: etcd "
       "replays what happened while you were away, no new list needed.")
def resumes_without_relisting(ctx: CheckContext) -> None:
    c, store, mirror = _mirror_scene(ctx)
    mirror.start()
    _change(c, "+c", "~a")
    c.run(1)
    mirror.stop()
    seen = c.store.revision
    _change(c, "+d", "-a", "~c", "+e")
    c.run(1)
    _expect_unheard(ctx, c, mirror, seen, "while the mirror was stopped")
    mirror.start()
    c.run(1)
    _expect_mirrored(ctx, c, mirror, "after resuming")
    ctx.expect_equal(store.ranges, 1, "resuming must not list again (one range in total)",
                     unit="store.range call(s)")
    resumed = store.watch_starts[-1] if len(store.watch_starts) > 1 else None
    if resumed != seen + 1:
        ctx.fail("the resumed watch must start right after the last revision seen",
                 expected=f"store.watch(..., start_revision={seen + 1})",
                 got="no second watch" if resumed is None else f"start_revision={resumed}")


@check("1.2", points=4, seeds=(1, 2), hint="A canceled WatchResponse with compact_revision set "
       "means the history is gone: list again, replace items, watch from the new revision + 1.")
def relists_after_compaction(ctx: CheckContext) -> None:
    c, store, mirror = _mirror_scene(ctx)
    mirror.start()
    c.run(1)
    mirror.stop()
    seen = c.store.revision
    _change(c, "+c", "-a", "~b", "+d", "-d")
    _expect_unheard(ctx, c, mirror, seen, "while the mirror was stopped")
    c.faults.compact()
    _change(c, "+e")
    mirror.start()
    c.run(1)
    _expect_mirrored(ctx, c, mirror, "after the history was compacted while it was away")
    ctx.expect_equal(store.ranges, 2, "exactly one new list after the compaction",
                     unit="store.range call(s)")
    _change(c, "~e", "-c")
    c.run(1)
    _expect_mirrored(ctx, c, mirror, "after the relist, watching again")

