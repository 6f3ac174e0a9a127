"""DeltaFIFO behaviour, ported from client-go tools/cache/delta_fifo_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.client.delta_fifo import (
    Added,
    Deleted,
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    Deltas,
    FIFOClosedError,
    Replaced,
    RequeueError,
    Sync,
    Updated,
    deletion_handling_meta_namespace_key_func,
)
from kubelab.client.indexer import Indexer, KeyFuncError
from kubelab.sim.clock import Clock


def mk(name: str, val: Any, namespace: str = "") -> dict[str, Any]:
    """A Kubernetes-shaped object; `val` plays the part of upstream's testFifoObject.val."""
    meta: dict[str, Any] = {"name": name, "resourceVersion": str(val)}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"val": val}}


def val(obj: Any) -> Any:
    return obj["data"]["val"]


class Literal:
    """upstream's literalListerGetter: known objects that never change."""

    def __init__(self, *objs: dict[str, Any]) -> None:
        self.objs = objs

    def list_keys(self) -> list[str]:
        return [o["metadata"]["name"] for o in self.objs]

    def get_by_key(self, key: str) -> tuple[Any, bool]:
        for o in self.objs:
            if o["metadata"]["name"] == key:
                return o, True
        return None, False


def pop(f: DeltaFIFO) -> Deltas:
    deltas = f.pop(lambda d, initial: None)
    assert deltas is not None
    return deltas


def pop_newest(f: DeltaFIFO) -> Any:
    newest = pop(f).newest()
    assert newest is not None
    return newest.object


def D(t: Any, obj: Any) -> Delta:
    return Delta(t, obj)


def tomb(key: str, obj: Any) -> DeletedFinalStateUnknown:
    return DeletedFinalStateUnknown(key, obj)


def test_basic_fifo_order_per_key() -> None:
    f = DeltaFIFO()
    for i in range(50):
        f.add(mk(f"a{i}", i + 1))
        f.add(mk(f"b{i}", i + 1))
    assert [val(pop_newest(f)) for _ in range(4)] == [1, 1, 2, 2]
    assert len(f) == 96


def test_detect_line_jumpers() -> None:
    f = DeltaFIFO()
    f.add(mk("foo", 10))
    f.add(mk("bar", 1))
    f.add(mk("foo", 11))
    f.add(mk("foo", 13))
    f.add(mk("zab", 30))
    assert val(pop_newest(f)) == 13
    f.add(mk("foo", 14))  # foo must not jump back in line
    assert [val(pop_newest(f)) for _ in range(3)] == [1, 30, 14]


def test_add_update_delete_accumulate() -> None:
    f = DeltaFIFO()
    f.add(mk("foo", 10))
    f.update(mk("foo", 12))
    f.delete(mk("foo", 15))
    assert f.list_keys() == ["foo"]
    deltas, exists = f.get_by_key("foo")
    assert exists
    assert deltas == [D(Added, mk("foo", 10)), D(Updated, mk("foo", 12)),
                      D(Deleted, mk("foo", 15))]
    assert val(pop_newest(f)) == 15
    assert f.get_by_key("foo") == (None, False)
    assert f.pop(lambda d, initial: None) is None  # Go would block here


def test_enqueueing_no_lister() -> None:
    f = DeltaFIFO()
    f.add(mk("foo", 10))
    f.update(mk("bar", 15))
    f.add(mk("qux", 17))
    f.delete(mk("qux", 18))
    f.delete(mk("baz", 20))  # baz is unknown: nothing to report
    assert [val(pop_newest(f)) for _ in range(3)] == [10, 15, 18]
    assert len(f) == 0


def test_enqueueing_with_lister() -> None:
    f = DeltaFIFO(known_objects=Literal(mk("foo", 5), mk("bar", 6), mk("baz", 7)))
    f.add(mk("foo", 10))
    f.update(mk("bar", 15))
    f.delete(mk("baz", 20))  # baz is known: the deletion is reported
    assert [val(pop_newest(f)) for _ in range(3)] == [10, 15, 20]
    assert len(f) == 0


def test_delete_existing_non_propagated() -> None:
    f = DeltaFIFO(known_objects=Literal())
    f.add(mk("foo", 5))
    f.delete(mk("foo", 6))
    deltas, _ = f.get_by_key("foo")
    assert deltas is not None and [d.type for d in deltas] == [Added, Deleted]


def test_consecutive_deletes_are_deduped() -> None:
    f = DeltaFIFO(known_objects=Literal(mk("foo", 5)))
    f.delete(mk("foo", 6))
    f.delete(mk("foo", 7))  # the older real deletion is kept
    assert pop(f) == [D(Deleted, mk("foo", 6))]
    # A real deletion beats a tombstone; a newer tombstone replaces an older one.
    f.add(mk("bar", 1))
    f.replace([], "1")
    f.replace([], "2")
    assert pop(f) == [D(Added, mk("bar", 1)), D(Deleted, tomb("bar", mk("bar", 1)))]


def test_replace_with_delete_delta_in() -> None:
    # Kubernetes issue 83810: a Replace after a Delete must still announce the new object.
    old, new = mk("foo", 1), mk("foo", 2)
    f = DeltaFIFO(known_objects=Literal(old), emit_delta_type_replaced=False)
    f.delete(old)
    f.replace([new], "")
    assert pop(f) == [D(Deleted, old), D(Sync, new)]


@pytest.mark.parametrize("known", [True, False], ids=["with-known-objects", "without"])
@pytest.mark.parametrize(
    ("operations", "expected"),
    [
        pytest.param(
            lambda f, obj, v2: (f.add(obj), f.replace([], "0")),
            lambda obj, v2: [D(Added, obj), D(Deleted, tomb("foo", obj))],
            id="added-then-deleted-on-replace",
        ),
        pytest.param(
            lambda f, obj, v2: (f.add(obj), f.replace([obj], "0"), f.replace([], "0")),
            lambda obj, v2: [D(Added, obj), D(Replaced, obj), D(Deleted, tomb("foo", obj))],
            id="replaced-object-single-delete",
        ),
        pytest.param(
            lambda f, obj, v2: (f.add(obj), f.delete(obj), f.replace([], "0")),
            lambda obj, v2: [D(Added, obj), D(Deleted, obj)],
            id="deleted-object-single-delete",
        ),
        pytest.param(
            lambda f, obj, v2: (f.add(obj), f.replace([], "0"), f.replace([], "1")),
            lambda obj, v2: [D(Added, obj), D(Deleted, tomb("foo", obj))],
            id="single-delete-on-multiple-replaces",
        ),
        pytest.param(
            lambda f, obj, v2: (f.add(obj), f.delete(obj), f.add(v2), f.replace([], "0")),
            lambda obj, v2: [D(Added, obj), D(Deleted, obj), D(Added, v2),
                             D(Deleted, tomb("foo", v2))],
            id="added-deleted-added-then-deleted",
        ),
    ],
)
def test_replace_makes_deletions_for_objects_only_in_queue(
    known: bool, operations: Any, expected: Any
) -> None:
    obj, v2 = mk("foo", 2), mk("foo", 3)
    f = DeltaFIFO(known_objects=Literal() if known else None)
    operations(f, obj, v2)
    assert pop(f) == expected(obj, v2)
    assert len(f) == 0


def test_replace_makes_deletions_sync_mode() -> None:
    known = Literal(mk("foo", 5), mk("bar", 6), mk("baz", 7))

    # A pre-existing Delete.
    f = DeltaFIFO(known_objects=known, emit_delta_type_replaced=False)
    f.delete(mk("baz", 10))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [D(Deleted, mk("baz", 10))],
        [D(Sync, mk("foo", 5))],
        [D(Deleted, tomb("bar", mk("bar", 6)))],  # only the cache knew bar: cached state
    ]

    # A pre-existing Add: the tombstone carries the newest queued object.
    f = DeltaFIFO(known_objects=known, emit_delta_type_replaced=False)
    f.add(mk("baz", 10))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [D(Added, mk("baz", 10)), D(Deleted, tomb("baz", mk("baz", 10)))],
        [D(Sync, mk("foo", 5))],
        [D(Deleted, tomb("bar", mk("bar", 6)))],
    ]

    # Deleted and recreated in the queue, then deleted by a Replace.
    f = DeltaFIFO(known_objects=known, emit_delta_type_replaced=False)
    f.delete(mk("bar", 6))
    f.add(mk("bar", 100))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [D(Deleted, mk("bar", 6)), D(Added, mk("bar", 100)),
         D(Deleted, tomb("bar", mk("bar", 100)))],
        [D(Sync, mk("foo", 5))],
        [D(Deleted, tomb("baz", mk("baz", 7)))],
    ]

    # Synced first: the delete uses the latest version.
    f = DeltaFIFO(known_objects=known, emit_delta_type_replaced=False)
    f.replace([mk("bar", 100), mk("foo", 5)], "0")
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [D(Sync, mk("bar", 100)), D(Deleted, tomb("bar", mk("bar", 100)))],
        [D(Sync, mk("foo", 5)), D(Sync, mk("foo", 5))],
        [D(Deleted, tomb("baz", mk("baz", 7)))],
    ]

    # Without known objects only queued keys can be tombstoned.
    f = DeltaFIFO(emit_delta_type_replaced=False)
    f.add(mk("baz", 10))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(2)] == [
        [D(Added, mk("baz", 10)), D(Deleted, tomb("baz", mk("baz", 10)))],
        [D(Sync, mk("foo", 5))],
    ]


def test_replace_makes_deletions_replaced() -> None:
    f = DeltaFIFO(known_objects=Literal(mk("foo", 5), mk("bar", 6), mk("baz", 7)))
    f.delete(mk("baz", 10))
    f.replace([mk("foo", 6)], "0")
    assert [pop(f) for _ in range(3)] == [
        [D(Deleted, mk("baz", 10))],
        [D(Replaced, mk("foo", 6))],
        [D(Deleted, tomb("bar", mk("bar", 6)))],
    ]


def test_replace_with_a_real_informer_cache() -> None:
    cache = Indexer()
    for obj in [mk("a", 1, "default"), mk("b", 1, "default")]:
        cache.add(obj)
    f = DeltaFIFO(known_objects=cache)
    f.replace([mk("a", 2, "default")], "10")
    assert [pop(f) for _ in range(2)] == [
        [D(Replaced, mk("a", 2, "default"))],
        [D(Deleted, tomb("default/b", mk("b", 1, "default")))],
    ]


def test_resync() -> None:
    f = DeltaFIFO(known_objects=Literal(mk("foo", 5)))
    f.resync()
    assert pop(f) == [D(Sync, mk("foo", 5))]


def test_resync_non_existing() -> None:
    f = DeltaFIFO(known_objects=Literal(mk("foo", 5)))
    f.delete(mk("foo", 10))
    f.resync()  # foo has a pending delta: no Sync
    assert pop(f) == [D(Deleted, mk("foo", 10))]


def test_update_resync_race() -> None:
    f = DeltaFIFO(known_objects=Literal(mk("foo", 5)))
    f.update(mk("foo", 6))
    f.resync()
    assert pop(f) == [D(Updated, mk("foo", 6))]


def test_resync_without_known_objects_does_nothing() -> None:
    f = DeltaFIFO()
    f.resync()
    assert len(f) == 0


def test_requeue_on_pop() -> None:
    f = DeltaFIFO()
    f.add(mk("foo", 10))

    def requeue(deltas: Deltas, initial: bool) -> None:
        raise RequeueError()

    f.pop(requeue)
    assert f.get_by_key("foo")[1]

    def requeue_with_error(deltas: Deltas, initial: bool) -> None:
        raise RequeueError(RuntimeError("test error"))

    with pytest.raises(RuntimeError, match="test error"):
        f.pop(requeue_with_error)
    assert f.get_by_key("foo")[1]

    def fail(deltas: Deltas, initial: bool) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        f.pop(fail)  # any other error: the deltas are gone
    assert f.get_by_key("foo") == (None, False)


def test_requeued_key_goes_to_the_back() -> None:
    f = DeltaFIFO()
    f.add(mk("a", 1))
    f.add(mk("b", 1))

    def requeue(deltas: Deltas, initial: bool) -> None:
        raise RequeueError()

    f.pop(requeue)
    assert f.list_keys() == ["b", "a"]


def test_has_synced_after_initial_list_is_popped() -> None:
    f = DeltaFIFO(known_objects=Literal(mk("foo", 5), mk("bar", 6), mk("baz", 7)),
                  emit_delta_type_replaced=False)
    f.replace([mk("foo", 5)], "0")
    expected = [
        [D(Sync, mk("foo", 5))],
        [D(Deleted, tomb("bar", mk("bar", 6)))],
        [D(Deleted, tomb("baz", mk("baz", 7)))],
    ]
    seen: list[tuple[Deltas, bool]] = []
    for want in expected:
        assert not f.has_synced()
        f.pop(lambda d, initial: seen.append((d, initial)))
        assert seen[-1] == (want, True)
    assert f.has_synced()


@pytest.mark.parametrize(
    ("actions", "synced"),
    [
        ([], False),
        ([lambda f: f.add(mk("a", 1))], True),
        ([lambda f: f.replace([], "0")], True),
        ([lambda f: f.replace([mk("a", 1), mk("b", 2)], "0")], False),
        ([lambda f: f.replace([mk("a", 1), mk("b", 2)], "0"), pop], False),
        ([lambda f: f.replace([mk("a", 1), mk("b", 2)], "0"), pop, pop], True),
        # Duplicate keys in one list cannot come from a real API server; one pop syncs.
        ([lambda f: f.replace([mk("a", 1), mk("a", 2)], "0"), pop], True),
    ],
)
def test_has_synced(actions: list[Any], synced: bool) -> None:
    f = DeltaFIFO()
    for action in actions:
        action(f)
    assert f.has_synced() is synced


def test_key_of() -> None:
    f = DeltaFIFO()
    assert f.key_of(mk("A", 1)) == "A"
    assert f.key_of(mk("A", 1, namespace="ns")) == "ns/A"
    assert f.key_of(tomb("B", None)) == "B"
    assert f.key_of(Deltas([D(Added, mk("C", 1))])) == "C"
    assert f.key_of(Deltas([D(Deleted, tomb("D", None))])) == "D"
    with pytest.raises(KeyFuncError, match="0 length Deltas"):
        f.key_of(Deltas())
    with pytest.raises(KeyFuncError, match="object has no meta"):
        f.add({"kind": "Pod"})
    assert len(f) == 0


def test_deletion_handling_key_func() -> None:
    assert deletion_handling_meta_namespace_key_func(tomb("ns/x", None)) == "ns/x"
    assert deletion_handling_meta_namespace_key_func(mk("x", 1, "ns")) == "ns/x"


def test_closed_pop_raises_once_empty() -> None:
    f = DeltaFIFO()
    f.add(mk("a", 1))
    f.close()
    assert f.is_closed()
    assert val(pop_newest(f)) == 1  # what is queued still comes out
    with pytest.raises(FIFOClosedError, match="closed queue"):
        f.pop(lambda d, initial: None)


def test_on_ready_wakes_consumer_through_clock() -> None:
    clock = Clock()
    f = DeltaFIFO(clock=clock)
    popped: list[tuple[float, str]] = []

    def process_loop() -> None:
        while (deltas := f.pop(lambda d, initial: None)) is not None:
            popped.append((clock.now, f.key_of(deltas)))

    f.on_ready(process_loop)
    f.add(mk("a", 1))
    f.update(mk("b", 1))
    assert popped == []
    clock.call_at(2.0, f.add, mk("c", 1))
    clock.run_until_idle()
    assert popped == [(0.0, "a"), (0.0, "b"), (2.0, "c")]


def test_on_ready_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="needs a clock"):
        DeltaFIFO().on_ready(lambda: None)


def test_transformer_sees_each_object_exactly_once() -> None:
    # upstream's TestDeltaFIFO_transformer: adds, an update, a delete and the tombstones two
    # Replaces make; every object in every Delta went through the transformer once.
    seen: list[int] = []

    def xfrm(obj: Any) -> Any:
        seen.append(id(obj))
        obj["data"]["xfrm"] = obj["data"].get("xfrm", 0) + 1
        return obj

    f = DeltaFIFO(transformer=xfrm)
    f.add(mk("foo", 10))
    f.add(mk("bar", 11))
    f.update(mk("foo", 12))
    f.delete(mk("foo", 15))
    f.replace([], "")
    f.add(mk("bar", 16))
    f.replace([], "")
    assert f.list_keys() == ["foo", "bar"]
    objects = []
    for _ in range(2):
        for delta in pop(f):
            obj = delta.object.obj if isinstance(delta.object, DeletedFinalStateUnknown) else delta.object
            objects.append(obj)
            assert obj["data"]["xfrm"] == 1, delta
    assert len(seen) == 5 and len(set(seen)) == 5  # five objects were queued, no tombstone twice
    assert sum(isinstance(o, dict) for o in objects) == len(objects)


def test_transformer_is_not_run_on_resync() -> None:
    cached = mk("foo", 1)
    f = DeltaFIFO(known_objects=Literal(cached), transformer=lambda o: {**o, "changed": True})
    f.resync()
    assert pop(f) == [D(Sync, cached)]  # the cache's object went through it already


def test_transformer_result_is_what_is_queued() -> None:
    f = DeltaFIFO(transformer=lambda o: {**o, "data": {"val": "trimmed"}})
    f.add(mk("foo", 1))
    f.replace([mk("foo", 3), mk("bar", 2)], "")
    assert [val(pop_newest(f)) for _ in range(2)] == ["trimmed", "trimmed"]
