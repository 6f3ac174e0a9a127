"""The two rotations of the queue set: the round robin over queues that picks the next one to
dispatch from (findDispatchQueueToBoundLocked), and the rotating first look into a flow's hand
(shuffleShardLocked). The first table is upstream's TestFindDispatchQueueLocked
(fairqueuing/queueset/queueset_test.go), ported case by case; the tie cases after it are
kubelab's own (upstream's table has none, and a round robin shows only in ties)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from kubelab.apiserver.flowcontrol import QueuedRequest, QueueSet, hash_flow_id
from kubelab.apiserver.flowcontrol.work_estimator import WorkEstimate
from kubelab.sim import Clock


@dataclass(frozen=True)
class Case:
    name: str
    concurrency_limit: int
    seats_in_use: int
    robin_index: int
    queues: list[tuple[float, int]]   # per queue: nextDispatchR (seat-seconds), head's seats
    attempts: int
    expected_queue: list[int]         # per attempt: the queue found, -1 for none
    expected_robin_index: list[int]   # per attempt: robin_index after it
    before_attempt: Callable[[int, QueueSet], None] | None = None


def _free_one_seat(attempt: int, qs: QueueSet) -> None:
    if attempt == 3:
        qs.seats_in_use = 25


UPSTREAM = [
    Case("width1=1, seats are available, the queue with less virtual start time wins",
         1, 0, -1, [(200, 1), (100, 1)], 1, [1], [1]),
    Case("width1=1, all seats are occupied, no queue is picked",
         1, 1, -1, [(200, 1)], 1, [-1], [0]),
    Case("width1 > 1, seats are available for request with the least finish R, queue is picked",
         50, 25, -1, [(200, 50), (100, 25)], 1, [1], [1]),
    Case("width1 > 1, seats are not available for request with the least finish R, queue is "
         "not picked", 50, 26, -1, [(200, 10), (100, 25)], 3, [-1, -1, -1], [1, 1, 1]),
    Case("width1 > 1, seats become available before 3rd attempt, queue is picked",
         50, 26, -1, [(200, 10), (100, 25)], 3, [-1, -1, 1], [1, 1, 1], _free_one_seat),
]

TIES = [
    Case("equal finish R: the first looked at wins, and the next look starts after it",
         10, 0, -1, [(100, 1), (100, 1), (100, 1)], 4, [0, 1, 2, 0], [0, 1, 2, 0]),
    Case("the walk starts after robin_index, wrapping round", 10, 0, 1,
         [(100, 1), (100, 1), (100, 1)], 2, [2, 0], [2, 0]),
    Case("an empty queue is skipped, and a lower finish R still wins over the rotation",
         10, 0, 0, [(100, 1), (0, 0), (50, 1), (100, 1)], 2, [2, 2], [2, 2]),
    Case("nothing fits: the index has gone round once", 1, 1, 2,
         [(100, 1), (100, 1), (100, 1)], 1, [-1], [2]),
]


def _queue_set(case: Case) -> QueueSet:
    qs = QueueSet(Clock(), "t", case.concurrency_limit, queues=len(case.queues), hand_size=1,
                  queue_length_limit=10)
    qs.robin_index, qs.seats_in_use = case.robin_index, case.seats_in_use
    for queue, (next_dispatch_r, seats) in zip(qs.queues, case.queues, strict=True):
        queue.next_dispatch_r = next_dispatch_r
        if seats:  # 0: no request waiting
            queue.waiting.append(QueuedRequest("f", WorkEstimate(initial_seats=seats), 0.0))
    return qs


@pytest.mark.parametrize("case", UPSTREAM + TIES, ids=lambda c: c.name)
def test_find_dispatch_queue(case: Case) -> None:
    qs = _queue_set(case)
    for i in range(case.attempts):
        if case.before_attempt is not None:
            case.before_attempt(i + 1, qs)
        found = qs.find_dispatch_queue()
        assert (found.index if found is not None else -1) == case.expected_queue[i], i + 1
        assert qs.robin_index == case.expected_robin_index[i], i + 1


def test_shuffle_shard_first_looks_at_the_next_card_of_the_hand_each_time() -> None:
    """shuffleShardLocked: of the hand's queues the one with the least waiting work wins, ties
    going to the first looked at, and where it starts looking (enqueues % handSize) moves on by
    one card at each request: a flow whose queues are all empty spreads over its whole hand."""
    clock = Clock()
    qs = QueueSet(clock, "t", concurrency_limit=100, queues=8, hand_size=3, queue_length_limit=10)
    hash_value = hash_flow_id("global-default", "bob")
    assert qs.dealer is not None
    hand = qs.dealer.deal_into_hand(hash_value)
    assert len(set(hand)) == 3
    queues = []
    for _ in range(7):
        req = QueuedRequest("global-default/bob", WorkEstimate(), clock.now)
        assert qs.start_request(req, hash_value)  # seats free: it runs at once, queues stay empty
        queues.append(req.queue)
    assert queues == [hand[i % 3] for i in range(7)]


def test_shuffle_shard_takes_the_least_waiting_work_whatever_the_offset() -> None:
    clock = Clock()
    qs = QueueSet(clock, "t", concurrency_limit=1, queues=8, hand_size=3, queue_length_limit=10)
    hash_value = hash_flow_id("global-default", "bob")
    assert qs.dealer is not None
    hand = qs.dealer.deal_into_hand(hash_value)
    busy = QueuedRequest("other", WorkEstimate(), clock.now)
    assert qs.start_request(busy, 0) and busy.dispatched is not None  # the one seat is taken
    heavy = QueuedRequest("other", WorkEstimate(initial_seats=1, final_seats=1,
                                                additional_latency=1.0), clock.now)
    light = QueuedRequest("other", WorkEstimate(), clock.now)
    for req, index in ((heavy, hand[0]), (light, hand[1])):
        req.queue = index
        qs.enqueue(req)
    picks = [qs.shuffle_shard(hash_value) for _ in range(3)]
    assert picks == [hand[2]] * 3  # the empty queue, whichever card is looked at first
    qs.queues[hand[2]].waiting_work = 5.0
    assert [qs.shuffle_shard(hash_value) for _ in range(3)] == [hand[1]] * 3
