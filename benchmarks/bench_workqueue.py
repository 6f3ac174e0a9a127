"""Workqueue throughput: how many keys per second a controller's queue can move."""

from __future__ import annotations

from benchmarks.common import Figure, rate
from kubelab.client.workqueue import Queue, RateLimitingQueue
from kubelab.sim.clock import Clock

N = 200_000


def _add_get_done(n: int) -> None:
    q: Queue[str] = Queue(Clock())
    keys = [f"default/pod-{i}" for i in range(n)]
    for key in keys:
        q.add(key)
    for _ in range(n):
        item, _ = q.get()
        q.done(item)


def _dedupe(n: int) -> None:
    q: Queue[str] = Queue(Clock())
    for _ in range(n):
        q.add("default/web")
    item, _ = q.get()
    q.done(item)


def _add_rate_limited(n: int) -> None:
    clock = Clock()
    q: RateLimitingQueue[str] = RateLimitingQueue(clock)
    keys = [f"default/pod-{i % 1000}" for i in range(n)]
    for key in keys:
        q.add_rate_limited(key)
    clock.run_until_idle(max_steps=2 * n)  # the delayed adds land in the queue


def run() -> list[Figure]:
    return [
        Figure("workqueue add/get/done", rate(N, lambda: _add_get_done(N)), "ops/s"),
        Figure("workqueue dedupe (same key)", rate(N, lambda: _dedupe(N)), "ops/s"),
        Figure("rate limiting queue add_rate_limited",
               rate(N // 4, lambda: _add_rate_limited(N // 4)), "ops/s"),
    ]
