"""One priority level's queues: shuffle sharding, fair queuing by virtual finish time, seats.

Follows k8s.io/apiserver pkg/util/flowcontrol/fairqueuing/queueset/queueset.go:

- StartRequest: a level without queues dispatches at once if the seats are free, otherwise
  rejects ("concurrency-limit"). A level with queues deals the flow a hand of queues
  (shuffle_shard), picks the one holding the least waiting work, and rejects only if all
  seats are busy and that queue is at queueLengthLimit ("queue-full"); else it enqueues and
  dispatches as much as possible.
- Fair queuing: R(t), the virtual time, advances at min(seats wanted, limit) / active queues
  per second (getVirtualTimeRatioLocked). Each queue has nextDispatchR; the next request to run
  is the head of the queue with the smallest nextDispatchR + the head's work, searched round
  robin; dispatching adds the work to nextDispatchR (3 ms per seat: estimatedServiceDuration),
  and finishing corrects it by the time the request really took.
- A request that waits longer than its wait limit (15 s: a quarter of --request-timeout)
  leaves its queue, rejected ("time-out").

Where kubelab departs (docs/ARCHITECTURE.md section 9): the API server answers every request
at once (its path is synchronous), so this queue set is a model run beside it on the clock. A
request that it admits executes right away; the queue set still queues it, dispatches it when
fair queuing would, and holds its seats for the service time of the cost model
(work_estimator.py). Rejections are real (the caller gets 429); the wait of an admitted
request is measured (QueuedRequest.wait) instead of being imposed on the caller, and a
"time-out" leaves the queue but cannot take back an answer already given.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from kubelab.apiserver.flowcontrol.shufflesharding import Dealer
from kubelab.apiserver.flowcontrol.work_estimator import WorkEstimate
from kubelab.sim import Clock
from kubelab.sim.clock import Timer

__all__ = ["ESTIMATED_SERVICE_SECONDS", "QueueSet", "QueuedRequest"]

ESTIMATED_SERVICE_SECONDS = 0.003  # qs.estimatedServiceDuration


@dataclass(eq=False, slots=True)
class QueuedRequest:
    """One request as the queue set sees it (upstream's request struct), plus what happened."""

    flow: str                     # flow schema name and distinguisher: "global-default/bob"
    estimate: WorkEstimate
    arrival: float
    priority_level: str = ""
    user: str = ""                # who asked, and what (upstream's descr1, descr2)
    what: str = ""                # "list pods"
    arrival_r: float = 0.0
    queue: int | None = None      # its queue; None when dispatched without one
    service: float | None = None  # seconds its seats are held (known once it has run)
    dispatched: float | None = None
    finished: float | None = None
    outcome: str = ""             # "", or why it was rejected: queue-full, concurrency-limit, time-out

    @property
    def work(self) -> float:
        """totalWork: seat-seconds fair queuing charges (3 ms per initial seat + final phase)."""
        e = self.estimate
        return e.initial_seats * ESTIMATED_SERVICE_SECONDS + e.final_seats * e.additional_latency

    @property
    def wait(self) -> float | None:
        return None if self.dispatched is None else self.dispatched - self.arrival


@dataclass(eq=False, slots=True)
class Queue:
    index: int
    waiting: deque[QueuedRequest] = field(default_factory=deque)
    executing: int = 0
    seats_in_use: int = 0
    next_dispatch_r: float = 0.0
    waiting_work: float = 0.0     # requestsWaiting.QueueSum().TotalWorkSum
    waiting_seats: int = 0        # requestsWaiting.QueueSum().MaxSeatsSum


class QueueSet:
    """queues=0: Reject on overload, no queues; exempt=True: never limited (noRestraint)."""

    def __init__(self, clock: Clock, name: str, concurrency_limit: int, queues: int = 0,
                 hand_size: int = 1, queue_length_limit: int = 0, *, exempt: bool = False,
                 wait_limit: float = 15.0,
                 on_done: Callable[[QueuedRequest], None] | None = None) -> None:
        self.clock, self.name, self.exempt = clock, name, exempt
        self.concurrency_limit, self.queue_length_limit = concurrency_limit, queue_length_limit
        self.wait_limit, self.on_done = wait_limit, on_done
        self.dealer = Dealer(queues, hand_size) if queues > 0 else None
        self.queues = [Queue(i) for i in range(queues)]
        self.current_r, self.last_real_time = 0.0, clock.now
        self.robin_index, self.enqueues = -1, 0
        self.seats_in_use = self.requests_executing = self.requests_waiting = 0
        self.seats_waiting = 0
        self.running: dict[QueuedRequest, None] = {}  # executing now, in dispatch order (metrics)
        self.dispatched = 0
        self.rejected: dict[str, int] = {}
        self._events: list[tuple[float, int, str, QueuedRequest]] = []  # (when, seq, what, req)
        self._seq = 0
        self._timer: Timer | None = None

    # ------------------------------------------------------------------ arrival

    def start_request(self, req: QueuedRequest, hash_value: int) -> bool:
        """Admit (queue or dispatch) req, or reject it: False, with req.outcome saying why."""
        self.sync_time()
        req.arrival_r = self.current_r
        if self.dealer is None:
            if not self.exempt and not self.can_accommodate_seats(req.estimate.max_seats):
                return self._reject(req, "concurrency-limit")
            self._execute(req)
            return True
        req.queue = self.shuffle_shard(hash_value)
        queue = self.queues[req.queue]
        if self.seats_in_use >= self.concurrency_limit and \
                len(queue.waiting) >= self.queue_length_limit:
            return self._reject(req, "queue-full")
        self.enqueue(req)
        self.dispatch_as_much_as_possible()
        return True

    def shuffle_shard(self, hash_value: int) -> int:
        """The queue of the flow's hand that holds the least waiting work; ties go to the first
        looked at, and the first looked at rotates from one request to the next."""
        assert self.dealer is not None
        hand = self.dealer.deal_into_hand(hash_value)
        offset = self.enqueues % len(hand)
        self.enqueues += 1
        best, least = -1, float("inf")
        for i in range(len(hand)):
            index = hand[(offset + i) % len(hand)]
            if self.queues[index].waiting_work < least:
                best, least = index, self.queues[index].waiting_work
        return best

    def enqueue(self, req: QueuedRequest) -> None:
        assert req.queue is not None
        queue = self.queues[req.queue]
        if not queue.waiting and not queue.executing:
            queue.next_dispatch_r = self.current_r
        queue.waiting.append(req)
        queue.waiting_work += req.work
        queue.waiting_seats += req.estimate.max_seats
        self.requests_waiting += 1
        self.seats_waiting += req.estimate.max_seats
        self._schedule(req.arrival + self.wait_limit, "time-out", req)

    def _reject(self, req: QueuedRequest, why: str) -> bool:
        req.outcome = why
        self.rejected[why] = self.rejected.get(why, 0) + 1
        return False

    # ------------------------------------------------------------------ dispatch

    def can_accommodate_seats(self, seats: int) -> bool:
        if seats > self.concurrency_limit:  # a request wider than the level runs alone
            return self.requests_executing == 0
        return self.seats_in_use + seats <= self.concurrency_limit

    def dispatch_as_much_as_possible(self) -> None:
        while self.requests_waiting and self.seats_in_use < self.concurrency_limit and \
                self.dispatch():
            pass

    def dispatch(self) -> bool:
        queue = self.find_dispatch_queue()
        if queue is None:
            return False
        req = queue.waiting.popleft()
        queue.waiting_work -= req.work
        queue.waiting_seats -= req.estimate.max_seats
        self.requests_waiting -= 1
        self.seats_waiting -= req.estimate.max_seats
        self._execute(req)
        if queue.waiting and queue.next_dispatch_r < queue.waiting[0].arrival_r:
            queue.next_dispatch_r = queue.waiting[0].arrival_r  # boundNextDispatchLocked
        return True

    def find_dispatch_queue(self) -> Queue | None:
        """findDispatchQueueToBoundLocked: the queue whose head would finish first in virtual
        time, if its seats fit now.

        Every queue is looked at once, round robin: robin_index steps on from the queue chosen
        last, and an empty queue is skipped. Of equal finish times the first looked at wins, and
        the chosen queue is where the next walk starts from, so the others win the next tie."""
        best: Queue | None = None
        best_finish, best_index = float("inf"), -1
        for _ in range(len(self.queues)):
            self.robin_index = (self.robin_index + 1) % len(self.queues)
            queue = self.queues[self.robin_index]
            if queue.waiting:
                finish = queue.next_dispatch_r + queue.waiting[0].work
                if finish < best_finish:
                    best, best_finish, best_index = queue, finish, self.robin_index
        if best is None or not self.can_accommodate_seats(best.waiting[0].estimate.max_seats):
            return None
        self.robin_index = best_index
        return best

    def _execute(self, req: QueuedRequest) -> None:
        req.dispatched = self.clock.now
        seats = req.estimate.max_seats
        self.requests_executing += 1
        self.running[req] = None
        self.seats_in_use += seats
        self.dispatched += 1
        if req.queue is not None:
            queue = self.queues[req.queue]
            queue.executing += 1
            queue.seats_in_use += seats
            queue.next_dispatch_r += req.work
        if req.service is not None:
            self._schedule(req.dispatched + req.service, "finish", req)

    # ------------------------------------------------------------------ completion

    def set_service(self, req: QueuedRequest, seconds: float) -> None:
        """The request ran and the cost model knows how long its seats are held."""
        req.service = seconds
        if req.dispatched is not None and req.outcome == "":
            self._schedule(req.dispatched + seconds, "finish", req)

    def finish_request(self, req: QueuedRequest) -> None:
        self.requests_executing -= 1
        self.running.pop(req, None)
        req.finished = self.clock.now
        if req.queue is not None:
            queue = self.queues[req.queue]
            queue.executing -= 1
            assert req.service is not None
            queue.next_dispatch_r -= req.estimate.initial_seats * (
                ESTIMATED_SERVICE_SECONDS - req.service)
            if queue.waiting and queue.next_dispatch_r < queue.waiting[0].arrival_r:
                queue.next_dispatch_r = queue.waiting[0].arrival_r
        if req.estimate.additional_latency > 0:
            self._schedule(self.clock.now + req.estimate.additional_latency, "release", req)
        else:
            self._release(req)

    def _release(self, req: QueuedRequest) -> None:
        seats = req.estimate.max_seats
        self.seats_in_use -= seats
        if req.queue is not None:
            self.queues[req.queue].seats_in_use -= seats
        if self.on_done is not None:
            self.on_done(req)

    def _time_out(self, req: QueuedRequest) -> None:
        if req.dispatched is not None or req.queue is None:
            return
        queue = self.queues[req.queue]
        queue.waiting.remove(req)
        queue.waiting_work -= req.work
        queue.waiting_seats -= req.estimate.max_seats
        self.requests_waiting -= 1
        self.seats_waiting -= req.estimate.max_seats
        self._reject(req, "time-out")
        if self.on_done is not None:
            self.on_done(req)

    # ------------------------------------------------------------------ virtual time

    def sync_time(self) -> None:
        now = self.clock.now
        self.current_r += self.virtual_time_ratio() * (now - self.last_real_time)
        self.last_real_time = now

    def virtual_time_ratio(self) -> float:
        """getVirtualTimeRatioLocked: min(seats in use and wanted, the limit) / active queues.

        It walks every queue: the seats of all of them count (a queue whose last request is in
        its final phase still holds seats), and a queue is active while it has requests
        waiting or executing."""
        active = wanted = 0
        for queue in self.queues:
            wanted += queue.seats_in_use + queue.waiting_seats
            if queue.waiting or queue.executing:
                active += 1
        if active == 0:
            return 0.0
        return min(wanted, self.concurrency_limit) / active

    # ------------------------------------------------------------------ the clock

    def _schedule(self, when: float, what: str, req: QueuedRequest) -> None:
        self._seq += 1
        heapq.heappush(self._events, (when, self._seq, what, req))
        if self._timer is None or self._timer.when > when:
            if self._timer is not None:
                self._timer.cancel()
            # Background: the model never keeps a cluster busy (run_until_idle ignores it).
            self._timer = self.clock.call_at(when, self._on_timer, background=True)

    def _on_timer(self) -> None:
        self._timer = None
        now = self.clock.now
        while self._events and self._events[0][0] <= now:
            _, _, what, req = heapq.heappop(self._events)
            self.sync_time()
            if what == "finish":
                self.finish_request(req)
            elif what == "release":
                self._release(req)
            else:
                self._time_out(req)
        self.dispatch_as_much_as_possible()
        if self._events and self._timer is None:
            self._timer = self.clock.call_at(self._events[0][0], self._on_timer, background=True)

    def stop(self) -> None:
        """The server went down: forget every request (their connections are gone)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._events.clear()
        self.running.clear()

    def queue_lengths(self) -> list[int]:
        return [len(q.waiting) for q in self.queues]
