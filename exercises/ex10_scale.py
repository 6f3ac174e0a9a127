# Generated from solutions/ex10_scale.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: 69866ddb3cd5bb29
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
        raise NotImplementedError("exercise 10.1: A fair queue")

    def deal(self, hash_value: int) -> list[int]:
        raise NotImplementedError("exercise 10.1: A fair queue")

    def enqueue(self, request_id: str, hash_value: int, seats: int) -> bool:
        raise NotImplementedError("exercise 10.1: A fair queue")

    def dispatch(self) -> list[str]:
        raise NotImplementedError("exercise 10.1: A fair queue")

    def finish(self, request_id: str) -> None:
        raise NotImplementedError("exercise 10.1: A fair queue")

    def queue_lengths(self) -> list[int]:
        raise NotImplementedError("exercise 10.1: A fair queue")


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
    raise NotImplementedError("exercise 10.2: The HPA replica calculation")
