"""Exercises for notebook 10 · Scale: watch fan-out, relist storms, priority and fairness.

One piece of API Priority and Fairness: the queues of one priority level. The grader replays
seeded mixes of requests through yours, one flow flooding while others send a few, on a
simulated clock, and checks what kube-apiserver's queue set promises: a flood fills only the
queues of its own hand and gets 429s, the others are served as they ask, in seats that never
exceed the level's limit.

    kubelab grade 10.1
    from kubelab.grading import grade; grade("10.1")

Do not import kubelab.apiserver.flowcontrol here: writing it is the exercise.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

SERVICE_ESTIMATE = 0.003  # seconds a seat is expected to be held (queueset.go's 3 ms)


@dataclass
class _Queue:
    waiting: deque[tuple[str, int]] = field(default_factory=deque)  # (request id, seats)
    executing: int = 0
    virtual_start: float = 0.0  # nextDispatchR: the virtual time its next request starts


class FairQueue:
    """Exercise 10.1: A fair queue.

    Notebook 10_scale, section "A noisy tenant and API Priority and Fairness". Hard, 10 points.

    The queues of one priority level (k8s.io/apiserver pkg/util/flowcontrol/fairqueuing/
    queueset/queueset.go, with pkg/util/shufflesharding), for a level with
    `concurrency_limit` seats, `queues` queues, a hand of `hand_size` queues per flow and
    at most `queue_length_limit` requests waiting per queue.

    - deal(hash_value) -> list[int]: the flow's hand, exactly as shufflesharding.go deals it.
      Read hash_value as a number in mixed radix: for i in 0..hand_size-1, its digit in base
      (queues - i) is hash_value % (queues - i), then hash_value //= (queues - i). Each digit
      is a position among the cards not dealt yet: card = digit, then for each digit dealt
      before it (latest first) that is <= card, card += 1.
    - enqueue(request_id, hash_value, seats) -> bool: a request of the flow whose hash this
      is, needing `seats` seats. It joins the queue of the flow's hand with the fewest seats
      waiting (any of them on a tie). Rejected (False, a 429 upstream) only when all seats
      are taken and that queue already holds queue_length_limit requests. A queue that had
      nothing waiting or executing starts at the current virtual time (no credit for idling).
    - dispatch() -> list[str]: start waiting requests while their seats fit, and return their
      ids in the order started. The next to start is the head of the queue whose head would
      finish first in virtual time: virtual_start + seats x SERVICE_ESTIMATE; starting it adds
      that much to the queue's virtual_start. A request wider than the level may start only
      when nothing executes. Stop at the first that does not fit.
    - finish(request_id): the request is done; its seats are free.
    - queue_lengths() -> list[int]: requests waiting in each queue.
    """

    def __init__(self, concurrency_limit: int, queues: int, hand_size: int,
                 queue_length_limit: int) -> None:
        ### BEGIN SOLUTION
        self.concurrency_limit = concurrency_limit
        self.hand_size = hand_size
        self.queue_length_limit = queue_length_limit
        self.queues = [_Queue() for _ in range(queues)]
        self.seats_in_use = 0
        self.executing = 0
        self.virtual_time = 0.0
        self.running: dict[str, tuple[int, int]] = {}  # request id -> (queue, seats)
        ### END SOLUTION

    def deal(self, hash_value: int) -> list[int]:
        ### BEGIN SOLUTION
        deck = len(self.queues)
        digits = []
        for i in range(self.hand_size):
            hash_value, digit = divmod(hash_value, deck - i)
            digits.append(digit)
        hand = []
        for i, card in enumerate(digits):
            for j in range(i, 0, -1):
                if card >= digits[j - 1]:
                    card += 1
            hand.append(card)
        return hand
        ### END SOLUTION

    def enqueue(self, request_id: str, hash_value: int, seats: int) -> bool:
        ### BEGIN SOLUTION
        best = min(self.deal(hash_value),
                   key=lambda i: sum(s for _, s in self.queues[i].waiting))
        queue = self.queues[best]
        if self.seats_in_use >= self.concurrency_limit and \
                len(queue.waiting) >= self.queue_length_limit:
            return False
        if not queue.waiting and not queue.executing:
            queue.virtual_start = max(queue.virtual_start, self.virtual_time)
        queue.waiting.append((request_id, seats))
        return True
        ### END SOLUTION

    def dispatch(self) -> list[str]:
        ### BEGIN SOLUTION
        started = []
        while True:
            candidates = [i for i, q in enumerate(self.queues) if q.waiting]
            if not candidates:
                return started
            best = min(candidates, key=lambda i: self.queues[i].virtual_start
                       + self.queues[i].waiting[0][1] * SERVICE_ESTIMATE)
            queue = self.queues[best]
            request_id, seats = queue.waiting[0]
            fits = self.seats_in_use + seats <= self.concurrency_limit or \
                (seats > self.concurrency_limit and self.executing == 0)
            if not fits:
                return started
            queue.waiting.popleft()
            self.virtual_time = queue.virtual_start
            queue.virtual_start += seats * SERVICE_ESTIMATE
            queue.executing += 1
            self.executing += 1
            self.seats_in_use += seats
            self.running[request_id] = (best, seats)
            started.append(request_id)
        ### END SOLUTION

    def finish(self, request_id: str) -> None:
        ### BEGIN SOLUTION
        queue, seats = self.running.pop(request_id)
        self.queues[queue].executing -= 1
        self.executing -= 1
        self.seats_in_use -= seats
        ### END SOLUTION

    def queue_lengths(self) -> list[int]:
        ### BEGIN SOLUTION
        return [len(q.waiting) for q in self.queues]
        ### END SOLUTION
