"""Exercises for notebook 10 · Scale: watch fan-out, relist storms, priority and fairness.

10.1: one piece of API Priority and Fairness: the queues of one priority level. The grader
replays seeded mixes of requests through yours, one flow flooding while others send a few, on a
simulated clock, and checks what kube-apiserver's queue set promises: a flood fills only the
queues of its own hand and gets 429s, the others are served as they ask, in seats that never
exceed the level's limit.

10.2: the horizontal pod autoscaler's replica calculation. The grader compares yours with
upstream's test tables and seeded cases, then runs it inside the HPA controller of a cluster
under load.

    kubelab grade 10.1
    from kubelab.grading import grade; grade("10.2")

Do not import kubelab.apiserver.flowcontrol or kubelab.controllers.podautoscaler here: writing
them is the exercise.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kubelab.api.quantity import parse_quantity

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


def calculate_replicas(current_replicas: int, target_utilization: int, pods: list[dict[str, Any]],
                       metrics: dict[str, int], tolerance: float = 0.1) -> tuple[int, int]:
    """Exercise 10.2: The HPA replica calculation.

    Notebook 10_scale, section "Autoscaling: metrics-server and the HPA". Medium, 10 points.

    How many replicas a CPU utilization target asks for (pkg/controller/podautoscaler/
    replica_calculator.go GetResourceReplicas). `pods` are the pods the target's selector
    matches (Pod objects as dicts); `metrics` maps a pod's name to its CPU usage in millicores
    (what metrics-server reported; a pod may have none); `target_utilization` is the target in
    percent of the pods' CPU requests. Return (replicas, utilization in whole percent).

    - Group the pods, asking in this order. Ignored: being deleted (metadata.deletionTimestamp)
      or phase Failed. Unready: phase Pending. Missing: no metric. Unready too: a Ready
      condition that is not "True", or none. The rest are ready. Only ready pods' metrics
      count (drop the others').
    - A pod's request is the sum of its containers' resources.requests.cpu, in millicores; a
      container without one: raise ValueError("missing request for cpu in container <name> of
      Pod <pod>").
    - Utilization = (sum of the ready pods' usage x 100) // (sum of their requests): whole
      percent, truncated. Ratio = utilization / target_utilization. No ready pod with a metric:
      raise ValueError("did not receive metrics for targeted pods (pods might be unready)").
    - No unready pod on a scale-up (ratio > 1) and no missing pod: if abs(1 - ratio) <=
      tolerance return current_replicas, else ceil(ratio x ready pods).
    - Otherwise redo the ratio with the pods you could not see: missing pods use 100% of their
      request on a scale-down (ratio < 1), 0 on a scale-up; on a scale-up unready pods use 0.
      If the new ratio is within the tolerance, or is on the other side of 1 than the first,
      return current_replicas. Else new = ceil(new ratio x pods counted); if that moves the
      other way than the new ratio says (below current on a scale-up, above on a scale-down),
      return current_replicas; else new.

    The utilization returned is always the first one, from the ready pods.
    """
    ### BEGIN SOLUTION
    ready, unready, missing = 0, set(), set()
    usage = dict(metrics)
    for pod in pods:  # groupPods, in its order
        name, status = pod["metadata"]["name"], pod.get("status") or {}
        ready_condition = next((c for c in status.get("conditions") or []
                                if c.get("type") == "Ready"), None)
        if pod["metadata"].get("deletionTimestamp") or status.get("phase") == "Failed":
            usage.pop(name, None)
        elif status.get("phase") == "Pending":
            unready.add(name)
        elif name not in usage:
            missing.add(name)
        elif ready_condition is None or ready_condition.get("status") != "True":
            unready.add(name)
        else:
            ready += 1
    for name in unready:
        usage.pop(name, None)
    requests: dict[str, int] = {}
    for pod in pods:
        total = 0
        for c in (pod.get("spec") or {}).get("containers") or []:
            request = ((c.get("resources") or {}).get("requests") or {}).get("cpu")
            if request is None:
                raise ValueError(f"missing request for cpu in container {c.get('name')} of Pod "
                                 f"{pod['metadata']['name']}")
            total += parse_quantity(request).milli_value()
        requests[pod["metadata"]["name"]] = total

    def utilization_of(values: dict[str, int]) -> int:
        used = sum(v for n, v in values.items() if n in requests)
        asked = sum(requests[n] for n in values if n in requests)
        if not asked:
            raise ValueError("no metrics returned matched known pods")
        return used * 100 // asked

    if not usage:
        raise ValueError("did not receive metrics for targeted pods (pods might be unready)")
    utilization = utilization_of(usage)
    ratio = utilization / target_utilization
    if not (unready and ratio > 1.0) and not missing:
        if abs(1.0 - ratio) <= tolerance:
            return current_replicas, utilization
        return math.ceil(ratio * ready), utilization
    for name in missing:
        if ratio < 1.0:
            usage[name] = requests[name]
        elif ratio > 1.0:
            usage[name] = 0
    if unready and ratio > 1.0:
        for name in unready:
            usage[name] = 0
    new_ratio = utilization_of(usage) / target_utilization
    if abs(1.0 - new_ratio) <= tolerance or ratio < 1.0 < new_ratio or ratio > 1.0 > new_ratio:
        return current_replicas, utilization
    new = math.ceil(new_ratio * len(usage))
    if (new_ratio < 1.0 and new > current_replicas) or (new_ratio > 1.0 and new < current_replicas):
        return current_replicas, utilization
    return new, utilization
    ### END SOLUTION
