"""The store against a reference model, under random operation sequences (hypothesis).

The model is deliberately naive: a dict for the current state, a full copy of it for every
revision, and the list of every change. Whatever the sequence of puts, deletes, txns,
compactions, disk latency, clock steps and snapshot restores, the store must answer reads at the
current and every non-compacted past revision exactly as the model does, and a watcher must see
exactly the model's changes (no loss, no duplicate, in revision order).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kubelab.sim import Clock
from kubelab.store import (
    CompactedError,
    Compare,
    DeleteRequest,
    FutureRevisionError,
    InvalidArgumentError,
    KeyValue,
    Op,
    PutRequest,
    RangeRequest,
    RangeResponse,
    Store,
    WatchResponse,
)

KEYS = ["/a", "/a/b", "/a/c", "/b", "/b/a", "/c"]
VALUES = [b"", b"x", b"y"]
SELECTORS = [("/a", False), ("/a", True), ("/a/", True), ("/b", True), ("/", True),
             ("/c", False), ("/b/a", False)]
Row = tuple[bytes, int, int, int]  # value, create_revision, mod_revision, version
Change = tuple[int, str, str, bytes, bytes | None]  # revision, type, key, value, prev value

op_strategy = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(KEYS), st.sampled_from(VALUES)),
    st.tuples(st.just("delete"), st.sampled_from(SELECTORS)),
    st.tuples(st.just("range"), st.sampled_from(SELECTORS)),
)
compare_strategy = st.tuples(
    st.sampled_from(["mod", "create", "version", "value"]), st.sampled_from(KEYS),
    st.sampled_from(["=", "!=", "<", ">"]), st.integers(-1, 4), st.sampled_from(VALUES))


def picks(key: str, selector: tuple[str, bool]) -> bool:
    start, prefix = selector
    return key.startswith(start) if prefix else key == start


def rows(kvs: tuple[KeyValue, ...]) -> list[tuple[str, Row]]:
    return [(kv.key, (kv.value, kv.create_revision, kv.mod_revision, kv.version)) for kv in kvs]


class StoreVsModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.revision = 1
        self.compacted = 0
        self.state: dict[str, Row] = {}
        self.history: dict[int, dict[str, Row]] = {1: {}}
        self.changes: list[Change] = []
        self._attach(Clock(), Store, start_revision=0)

    def _attach(self, clock: Clock, store: Any, start_revision: int) -> None:
        self.clock = clock
        self.store: Store = store if isinstance(store, Store) else store(clock)
        self.seen: list[Change] = []
        self.watch_from = max(start_revision, self.revision + 1 if start_revision == 0 else 0)
        self.prev_unknown_at = self.compacted  # a restored store may not know these prevs
        self.store.watch("/", prefix=True, start_revision=start_revision,
                         callback=self._on_watch, prev_kv=True)

    def _on_watch(self, resp: WatchResponse) -> None:
        assert not resp.canceled
        for e in resp.events:
            prev = e.prev_kv.value if e.prev_kv else None
            self.seen.append((e.kv.mod_revision, e.type, e.kv.key, e.kv.value, prev))

    # -- the model -----------------------------------------------------------------------------

    def _expected_range(self, selector: tuple[str, bool], revision: int) -> list[tuple[str, Row]]:
        state = self.history[revision or self.revision]
        return sorted((k, row) for k, row in state.items() if picks(k, selector))

    def _model_compare(self, target: str, key: str, op: str, operand: int | bytes) -> bool:
        row = self.state.get(key)
        if target == "value":
            if row is None:
                return False
            actual: Any = row[0]
        else:
            actual = 0 if row is None else {"create": row[1], "mod": row[2],
                                            "version": row[3]}[target]
        return bool({"=": actual == operand, "!=": actual != operand,
                     "<": actual < operand, ">": actual > operand}[op])

    def _model_put(self, key: str, value: bytes, revision: int) -> None:
        old = self.state.get(key)
        self.state[key] = ((value, revision, revision, 1) if old is None
                           else (value, old[1], revision, old[3] + 1))
        self.changes.append((revision, "PUT", key, value, old[0] if old else None))

    def _model_delete(self, selector: tuple[str, bool], revision: int) -> int:
        doomed = sorted(k for k in self.state if picks(k, selector))
        for key in doomed:
            self.changes.append((revision, "DELETE", key, b"", self.state.pop(key)[0]))
        return len(doomed)

    def _commit(self, revision: int) -> None:
        self.revision = revision
        self.history[revision] = dict(self.state)

    # -- rules ---------------------------------------------------------------------------------

    @rule(key=st.sampled_from(KEYS), value=st.sampled_from(VALUES))
    def put(self, key: str, value: bytes) -> None:
        assert self.store.put(key, value).revision == self.revision + 1
        self._model_put(key, value, self.revision + 1)
        self._commit(self.revision + 1)

    @rule(selector=st.sampled_from(SELECTORS))
    def delete(self, selector: tuple[str, bool]) -> None:
        resp = self.store.delete_range(selector[0], prefix=selector[1])
        if self._model_delete(selector, self.revision + 1):
            self._commit(self.revision + 1)
        assert resp.revision == self.revision

    @rule(compares=st.lists(compare_strategy, max_size=3),
          success=st.lists(op_strategy, max_size=4), failure=st.lists(op_strategy, max_size=3))
    def txn(self, compares: list[Any], success: list[Any], failure: list[Any]) -> None:
        cmps = [Compare(t, k, o, v if t == "value" else max(0, self.revision - d))
                for t, k, o, d, v in compares]
        to_ops = [self._op(*spec) for spec in success], [self._op(*spec) for spec in failure]
        if not all(self._valid(ops) for ops in (success, failure)):
            try:
                self.store.txn(cmps, *to_ops)
            except InvalidArgumentError:
                return
            raise AssertionError("duplicate keys in a txn branch were accepted")
        resp = self.store.txn(cmps, *to_ops)
        ok = all(self._model_compare(c.target, c.key, c.op, c.value) for c in cmps)
        assert resp.succeeded == ok
        next_rev = self.revision + 1
        wrote = False
        for spec, got in zip(success if ok else failure, resp.responses, strict=True):
            if spec[0] == "put":
                self._model_put(spec[1], spec[2], next_rev)
                wrote = True
            elif spec[0] == "delete":
                wrote = self._model_delete(spec[1], next_rev) > 0 or wrote
            else:
                assert isinstance(got, RangeResponse)
                view = {k: r for k, r in self.state.items() if picks(k, spec[1])}
                assert rows(got.kvs) == sorted(view.items())
        if wrote:
            self._commit(next_rev)
        assert resp.revision == self.revision

    @staticmethod
    def _op(kind: str, *args: Any) -> Op:
        if kind == "put":
            return PutRequest(args[0], args[1])
        if kind == "delete":
            return DeleteRequest(args[0][0], prefix=args[0][1])
        return RangeRequest(args[0][0], prefix=args[0][1])

    @staticmethod
    def _valid(specs: list[Any]) -> bool:
        puts = [s[1] for s in specs if s[0] == "put"]
        deletes = [s[1] for s in specs if s[0] == "delete"]
        return len(puts) == len(set(puts)) and not any(
            picks(key, sel) for key in puts for sel in deletes)

    @rule(data=st.data())
    def compact(self, data: st.DataObject) -> None:
        revision = data.draw(st.integers(0, self.revision + 1))
        if revision <= self.compacted:
            try:
                self.store.compact(revision)
            except CompactedError:
                return
            raise AssertionError("compacting at or below the compaction point was accepted")
        if revision > self.revision:
            try:
                self.store.compact(revision)
            except FutureRevisionError:
                return
            raise AssertionError("compacting a future revision was accepted")
        self.store.compact(revision)
        self.compacted = revision

    @rule(data=st.data(), selector=st.sampled_from(SELECTORS), limit=st.integers(0, 3))
    def range_at(self, data: st.DataObject, selector: tuple[str, bool], limit: int) -> None:
        revision = data.draw(st.integers(0, self.revision + 1))

        def call() -> RangeResponse:
            return self.store.range(selector[0], prefix=selector[1], revision=revision,
                                    limit=limit)

        if revision > self.revision:
            try:
                call()
            except FutureRevisionError:
                return
            raise AssertionError("a read at a future revision was answered")
        if 0 < revision < self.compacted:
            try:
                call()
            except CompactedError:
                return
            raise AssertionError("a read below the compaction point was answered")
        resp = call()
        want = self._expected_range(selector, revision)
        assert resp.count == len(want)
        assert rows(resp.kvs) == (want[:limit] if limit else want)
        assert resp.more == (0 < limit < len(want))

    @rule(latency=st.sampled_from([0.0, 0.0, 0.1, 0.5]))
    def set_latency(self, latency: float) -> None:
        self.store.latency = latency

    @rule(steps=st.integers(1, 3))
    def step_clock(self, steps: int) -> None:
        for _ in range(steps):
            self.clock.step()

    @rule()
    def deliver(self) -> None:
        self.clock.run_until_idle()
        want = [c for c in self.changes if c[0] >= self.watch_from]
        assert [c[0] for c in self.seen] == sorted(c[0] for c in self.seen)  # revision order
        assert self._canonical(self.seen) == self._canonical(want)

    def _canonical(self, changes: list[Change]) -> list[tuple[Any, ...]]:
        """Sorted (a key changes at most once per revision; after a restore the order inside
        one revision is by key), and without the prev values a restored store cannot know."""
        return sorted(c if c[0] > self.prev_unknown_at else c[:4] for c in changes)

    @precondition(lambda self: self.revision > 1)
    @rule()
    def snapshot_and_restore(self) -> None:
        self.deliver()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "etcd.snap"
            self.store.save_snapshot(path)
            clock = Clock()
            restored = Store.restore(path, clock)
        self._attach(clock, restored, start_revision=max(self.compacted, 1))
        clock.run_until_idle()  # let the new watcher replay before anything is compacted

    @invariant()
    def current_state_matches(self) -> None:
        assert self.store.revision == self.revision
        assert self.store.compact_revision == self.compacted
        assert rows(self.store.range("/", prefix=True).kvs) == sorted(self.state.items())

    def teardown(self) -> None:
        self.deliver()


StoreVsModel.TestCase.settings = settings(max_examples=60, stateful_step_count=40,
                                          deadline=None)
TestStoreVsModel = StoreVsModel.TestCase
