"""Workqueue behaviour, ported from client-go util/workqueue/*_test.go onto the simulated clock."""

from __future__ import annotations

import pytest

from kubelab.client.workqueue import (
    BucketRateLimiter,
    DelayingQueue,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    Queue,
    RateLimitingQueue,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)
from kubelab.sim.clock import Clock

MS = 0.001


@pytest.fixture
def clock() -> Clock:
    return Clock()


# ---------------------------------------------------------------- queue.go (queue_test.go)


def test_basic_fifo_and_shutdown(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    for key in ["a", "b", "c"]:
        q.add(key)
    got = []
    while True:
        item, shutdown = q.get()
        if item is None:
            assert not shutdown
            break
        got.append(item)
        q.done(item)
    assert got == ["a", "b", "c"]
    q.shut_down()
    assert q.shutting_down()
    assert q.get() == (None, True)


def test_len_dedupes(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    q.add("foo")
    assert len(q) == 1
    q.add("bar")
    assert len(q) == 2
    q.add("foo")  # already waiting: no change
    assert len(q) == 2


def test_reinsert_while_processing(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    q.add("foo")
    item, _ = q.get()
    assert item == "foo"
    q.add("foo")  # added back while processing
    assert len(q) == 0  # not handed out again yet
    assert q.get() == (None, False)
    q.done("foo")
    assert q.get() == ("foo", False)
    q.done("foo")
    assert len(q) == 0


def test_collapse_while_processing_hands_out_once(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    q.add("foo")
    item, _ = q.get()
    q.add("foo")
    q.add("foo")
    # A second worker gets nothing: foo is still being processed by the first.
    assert q.get() == (None, False)
    q.done(item)
    assert q.get() == ("foo", False)
    q.done("foo")
    assert q.get() == (None, False)
    assert len(q) == 0


def test_done_for_an_item_not_processing_changes_nothing(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    q.add("foo")
    q.done("foo")  # misuse: never got
    assert len(q) == 1
    assert q.get() == ("foo", False)
    assert q.get() == (None, False)


def test_add_after_shut_down_is_ignored_and_queued_items_drain(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    q.add("a")
    q.shut_down()
    q.add("b")
    assert q.get() == ("a", False)  # what was queued before shut_down still comes out
    assert q.get() == (None, True)


def test_shut_down_while_processing(clock: Clock) -> None:
    # TestNoQueueDrainageUsingShutDown: shut_down does not wait for workers.
    q: Queue[str] = Queue(clock)
    q.add("foo")
    q.add("bar")
    q.get()
    q.get()
    q.shut_down()
    assert q.get() == (None, True)
    q.add("foo")  # a worker that fails after shutdown cannot requeue
    q.done("foo")
    assert q.get() == (None, True)


def test_shut_down_with_drain_waits_for_done(clock: Clock) -> None:
    # TestQueueDrainageUsingShutDownWithDrain
    q: Queue[str] = Queue(clock)
    q.add("foo")
    q.add("bar")
    first, _ = q.get()
    second, _ = q.get()
    drained: list[float] = []
    q.shut_down_with_drain(lambda: drained.append(clock.now))
    assert q.get() == (None, True)
    q.done(first)
    clock.run_until_idle()
    assert drained == []
    q.done(second)
    clock.run_until_idle()
    assert drained == [0.0]


def test_shut_down_forces_a_draining_queue(clock: Clock) -> None:
    # TestForceQueueShutdownUsingShutDown
    q: Queue[str] = Queue(clock)
    q.add("foo")
    q.get()
    drained: list[bool] = []
    q.shut_down_with_drain(lambda: drained.append(True))
    q.shut_down()
    clock.run_until_idle()
    assert drained == [True]


def test_shut_down_with_drain_with_dirty_item(clock: Clock) -> None:
    # TestQueueDrainageUsingShutDownWithDrainWithDirtyItem
    q: Queue[str] = Queue(clock)
    q.add("foo")
    gotten, _ = q.get()
    q.add("foo")
    drained: list[bool] = []
    q.shut_down_with_drain(lambda: drained.append(True))
    assert q.get() == (None, True)
    q.done(gotten)
    again, shutdown = q.get()  # done put the dirty foo back
    assert (again, shutdown) == ("foo", False)
    clock.run_until_idle()
    assert drained == []
    q.done(again)
    assert q.get() == (None, True)
    clock.run_until_idle()
    assert drained == [True]


def test_shut_down_with_drain_on_idle_queue_is_drained_at_once(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    drained: list[bool] = []
    q.shut_down_with_drain(lambda: drained.append(True))
    clock.run_until_idle()
    assert drained == [True]


def test_burst_to_one_key_becomes_one_get(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    for _ in range(100):
        q.add("default/web")
    assert (q.adds, len(q)) == (1, 1)
    item, _ = q.get()
    q.done(item)
    assert (q.adds, q.gets, q.dones) == (1, 1, 1)


# ---------------------------------------------------------------- on_ready (no goroutines)


def test_on_ready_wakes_once_per_burst_through_the_clock(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    wakes: list[int] = []
    q.on_ready(lambda: wakes.append(len(q)))
    for key in ["a", "b", "c"]:
        q.add(key)
    assert wakes == []  # never called inside add()
    clock.run_until_idle()
    assert wakes == [3]


def test_on_ready_worker_loop(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    processed: list[tuple[float, str]] = []

    def worker() -> None:
        while True:
            item, _ = q.get()
            if item is None:
                return
            processed.append((clock.now, item))
            if item == "requeue-me" and len(processed) == 2:
                q.add("requeue-me")  # added while processing: comes back after done
                q.add("done-next")
            q.done(item)

    q.on_ready(worker)
    q.add("a")
    q.add("requeue-me")
    clock.call_at(5.0, q.add, "b")
    clock.run_until_idle()
    assert processed == [(0.0, "a"), (0.0, "requeue-me"), (0.0, "done-next"),
                         (0.0, "requeue-me"), (5.0, "b")]


def test_on_ready_registered_late_and_on_shutdown(clock: Clock) -> None:
    q: Queue[str] = Queue(clock)
    q.add("a")
    seen: list[tuple[str | None, bool]] = []
    q.on_ready(lambda: seen.append(q.get()))
    clock.run_until_idle()
    assert seen == [("a", False)]
    q.shut_down()
    clock.run_until_idle()
    assert seen[-1] == (None, True)


# ---------------------------------------------------------------- delaying_queue_test.go


def test_delaying_simple(clock: Clock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock)
    q.add_after("foo", 50 * MS)
    assert len(q) == 0
    clock.run(until=60 * MS)
    assert len(q) == 1
    item, _ = q.get()
    q.done(item)
    clock.run(until=10.1)  # step past what would have been client-go's heartbeat
    assert len(q) == 0


def test_delaying_non_positive_duration_adds_now(clock: Clock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock)
    q.add_after("foo", 0)
    q.add_after("bar", -1)
    assert len(q) == 2
    assert q.retries == 2


def test_delaying_dedupe_keeps_earliest(clock: Clock) -> None:
    # TestDeduping
    q: DelayingQueue[str] = DelayingQueue(clock)
    q.add_after("foo", 50 * MS)
    q.add_after("foo", 70 * MS)
    assert len(q) == 0
    clock.run(until=60 * MS)
    assert len(q) == 1
    item, _ = q.get()
    q.done(item)
    clock.run(until=80 * MS)  # past the later add: it was merged, nothing more comes
    assert len(q) == 0

    # This time the earlier one overrides.
    q.add_after("foo", 50 * MS)
    q.add_after("foo", 30 * MS)
    assert len(q) == 0
    clock.run(until=clock.now + 40 * MS)
    assert len(q) == 1
    item, _ = q.get()
    q.done(item)
    clock.run(until=clock.now + 20 * MS)
    assert len(q) == 0


def test_delaying_add_two_fire_early(clock: Clock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock)
    q.add_after("foo", 1.0)
    q.add_after("bar", 50 * MS)
    clock.run(until=60 * MS)
    assert q.get() == ("bar", False)
    q.add_after("baz", 2.0)
    clock.run(until=clock.now + 1.0)
    assert q.get() == ("foo", False)
    clock.run(until=clock.now + 2.0)
    assert q.get() == ("baz", False)


def test_delaying_copy_shifting_orders_by_ready_time(clock: Clock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock)
    q.add_after("foo", 1.0)
    q.add_after("bar", 0.5)
    q.add_after("baz", 0.25)
    clock.run(until=2.0)
    assert [q.get()[0] for _ in range(3)] == ["baz", "bar", "foo"]


def test_delaying_shut_down_drops_waiting_items(clock: Clock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock)
    q.add_after("foo", 1.0)
    q.shut_down()
    q.add_after("bar", 1.0)
    assert clock.pending() == 0
    clock.run(until=2.0)
    assert q.get() == (None, True)
    assert q.retries == 1


# ---------------------------------------------------------------- default_rate_limiters_test.go


def test_item_exponential_failure_rate_limiter() -> None:
    limiter = ItemExponentialFailureRateLimiter(1 * MS, 1.0)
    assert [limiter.when("one") for _ in range(5)] == pytest.approx(
        [1 * MS, 2 * MS, 4 * MS, 8 * MS, 16 * MS])
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == pytest.approx([1 * MS, 2 * MS])
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == pytest.approx(1 * MS)


def test_controller_ladder_5ms_doubling_capped_at_1000s() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    ladder = [limiter.when("key") for _ in range(20)]
    assert ladder[:5] == pytest.approx([0.005, 0.010, 0.020, 0.040, 0.080])
    # 0.005 * 2**17 = 655.36s; the next step would be 1310.72s, so it is capped.
    assert ladder[17] == pytest.approx(655.36)
    assert ladder[18:] == [1000.0, 1000.0]


def test_item_exponential_overflow() -> None:
    limiter = ItemExponentialFailureRateLimiter(1 * MS, 1000.0)
    for _ in range(5):
        limiter.when("one")
    assert limiter.when("one") == pytest.approx(32 * MS)
    for _ in range(1000):
        limiter.when("overflow1")
    assert limiter.when("overflow1") == 1000.0

    limiter = ItemExponentialFailureRateLimiter(60.0, 1000 * 3600.0)
    for _ in range(2):
        limiter.when("two")
    assert limiter.when("two") == 4 * 60.0
    for _ in range(2000):  # past 2.0**1024, where a Python float would overflow
        limiter.when("overflow2")
    assert limiter.when("overflow2") == 1000 * 3600.0


def test_item_fast_slow_rate_limiter() -> None:
    limiter = ItemFastSlowRateLimiter(5 * MS, 10.0, 3)
    assert [limiter.when("one") for _ in range(5)] == [5 * MS] * 3 + [10.0] * 2
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [5 * MS] * 2
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_max_of_rate_limiter() -> None:
    limiter = MaxOfRateLimiter(
        ItemFastSlowRateLimiter(5 * MS, 3.0, 3),
        ItemExponentialFailureRateLimiter(1 * MS, 1.0),
    )
    assert [limiter.when("one") for _ in range(5)] == [5 * MS] * 3 + [3.0] * 2
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [5 * MS] * 2
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_with_max_wait_rate_limiter() -> None:
    limiter = WithMaxWaitRateLimiter(ItemFastSlowRateLimiter(5 * MS, 1000.0, 1), 500.0)
    assert limiter.when("a") == 5 * MS
    assert limiter.when("a") == 500.0


def test_bucket_rate_limiter_burst_then_qps(clock: Clock) -> None:
    limiter = BucketRateLimiter(clock, qps=10, burst=100)
    # The bucket starts full: 100 immediate tokens, then reservations go into debt at 10 qps.
    assert [limiter.when(i) for i in range(100)] == [0.0] * 100
    assert [limiter.when(i) for i in range(100, 103)] == pytest.approx([0.1, 0.2, 0.3])
    assert limiter.num_requeues(1) == 0
    # 1s later 10 tokens have been refilled: the debt of 3 is repaid, 7 remain.
    clock.run(until=1.0)
    assert limiter.tokens() == pytest.approx(7)
    assert [limiter.when("x") for _ in range(8)] == pytest.approx([0.0] * 7 + [0.1])
    # A long quiet spell refills to the burst, never beyond.
    clock.run(until=1000.0)
    assert limiter.tokens() == 100


def test_bucket_rate_limiter_rejects_nonsense(clock: Clock) -> None:
    with pytest.raises(ValueError, match="qps > 0"):
        BucketRateLimiter(clock, qps=0)
    with pytest.raises(ValueError, match="burst >= 1"):
        BucketRateLimiter(clock, qps=1, burst=0)


def test_default_controller_rate_limiter_is_max_of_both(clock: Clock) -> None:
    limiter = default_controller_rate_limiter(clock)
    # Per item: exponential from 5ms.
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    # Overall: after 100 tokens (3 used above) the bucket dominates a fresh key's 5ms.
    for i in range(97):
        limiter.when(f"k{i}")
    assert limiter.when("fresh") == pytest.approx(0.1)
    assert limiter.num_requeues("a") == 3
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


# ---------------------------------------------------------------- rate_limiting_queue_test.go


def test_rate_limiting_queue(clock: Clock) -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(
        clock, ItemExponentialFailureRateLimiter(1 * MS, 1.0))
    q.add_rate_limited("one")
    q.add_rate_limited("one")  # waiting already at 1ms: the earlier time is kept
    assert q.num_requeues("one") == 2
    q.add_rate_limited("two")
    assert q.num_requeues("two") == 1
    clock.run(until=1 * MS)
    assert len(q) == 2
    q.forget("one")
    assert q.num_requeues("one") == 0
    assert q.retries == 3


def test_rate_limited_retries_follow_the_ladder(clock: Clock) -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(clock)  # the default controller limiter
    tries: list[float] = []

    def worker() -> None:
        while True:
            key, _ = q.get()
            if key is None:
                return
            tries.append(round(clock.now, 6))
            if len(tries) < 5:
                q.add_rate_limited(key)  # "sync failed"
            else:
                q.forget(key)
            q.done(key)

    q.on_ready(worker)
    q.add("default/web")
    clock.run_until_idle()
    # 0, then +5ms, +10ms, +20ms, +40ms.
    assert tries == [0.0, 0.005, 0.015, 0.035, 0.075]
    assert q.num_requeues("default/web") == 0
    assert (q.gets, q.dones, q.retries) == (5, 5, 4)
