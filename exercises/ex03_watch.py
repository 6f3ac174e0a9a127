# Generated from solutions/ex03_watch.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: 04959e9350d4d7ef
"""Exercises for notebook 03 · Watch: list-watch, informers, the workqueue, the controller loop.

Two pieces of client-go, written by you and run inside real kubelab machinery: the grader
swaps your queue in for kubelab's inside a controller loop (two workers, syncs that take time,
bursts of updates from a shared informer), and runs your reflector against an API server whose
watches break, which restarts, and whose store gets compacted.

    kubelab grade 3                                          # both exercises
    from kubelab.grading import grade; grade("3.1")

Do not import kubelab.client.workqueue or kubelab.client.reflector here: writing them is the
exercise (the grader refuses a file that imports them).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.sim.clock import Clock


class WorkQueue:
    """Exercise 3.1: The workqueue: add, get, done.

    Notebook 03_watch, section "The workqueue". Medium, 10 points.

    client-go's workqueue.Typed (util/workqueue/queue.go), the queue between a controller's
    event handlers and its workers, with its three promises:

    - add(item): the item needs processing. An item already waiting is not queued twice (the
      `dirty` set), so a burst of updates to one object becomes one sync. An item being
      processed is not queued now either: done() will queue it again. After shut_down(),
      add() does nothing.
    - get() -> (item, shutdown): hand out the oldest waiting item, which is now "processing":
      (item, False). Nothing waiting: (None, False) (Go's Get would block; kubelab's workers
      are woken by the clock instead). Shut down and nothing left: (None, True).
    - done(item): the worker is finished with item. If it was added while being processed,
      it goes to the back of the queue now. An item nobody is processing: nothing happens.
    - len(queue): how many items wait (not those being processed).
    - shut_down() and shutting_down().
    """

    def __init__(self) -> None:
        raise NotImplementedError("exercise 3.1: The workqueue: add, get, done")

    def add(self, item: Hashable) -> None:
        raise NotImplementedError("exercise 3.1: The workqueue: add, get, done")

    def get(self) -> tuple[Hashable | None, bool]:
        raise NotImplementedError("exercise 3.1: The workqueue: add, get, done")

    def done(self, item: Hashable) -> None:
        raise NotImplementedError("exercise 3.1: The workqueue: add, get, done")

    def __len__(self) -> int:
        raise NotImplementedError("exercise 3.1: The workqueue: add, get, done")

    def shut_down(self) -> None:
        raise NotImplementedError("exercise 3.1: The workqueue: add, get, done")

    def shutting_down(self) -> bool:
        raise NotImplementedError("exercise 3.1: The workqueue: add, get, done")


class Reflector:
    """Exercise 3.2: A reflector that recovers from 410 Gone.

    Notebook 03_watch, section "List and watch; 410 Gone and relist". Hard, 10 points.

    Keep `store` (a DeltaFIFO in an informer; here anything with replace, add, update and
    delete) in step with the API server's `resource` objects, as client-go's
    tools/cache/reflector.go does with ListAndWatch:

    - run(): LIST (client.list(resource)); store.replace(items, rv) with the list's
      metadata.resourceVersion; remember rv; then WATCH from it:
      client.watch(resource, self.on_event, resource_version=rv, on_close=self.on_close).
    - on_event(event): ADDED -> store.add(obj), MODIFIED -> store.update(obj), DELETED ->
      store.delete(obj), remembering obj's metadata.resourceVersion each time; BOOKMARK ->
      remember its resourceVersion only. ERROR whose Status has code 410 (Expired or Gone:
      the version you asked for was compacted away) -> relist: LIST and WATCH again. Any other
      ERROR -> watch again from the last resourceVersion after one second.
    - on_close(): the server ended the watch (a restart, a broken connection): watch again
      from the last resourceVersion you saw, one second later (clock.call_later(1.0, ...)),
      without listing: the server replays what you missed. If LIST or WATCH raises an
      ApiError (the server is down), try the same again one second later.
    - stop(): stop the watch (the handle client.watch returned has stop()) and every pending
      retry: nothing reaches the store afterwards.
    """

    def __init__(self, client: Client, resource: str, store: Any, clock: Clock) -> None:
        self.client = client
        self.resource = resource
        self.store = store
        self.clock = clock
        self.resource_version = ""   # the last resourceVersion seen
        raise NotImplementedError("exercise 3.2: A reflector that recovers from 410 Gone")

    def run(self) -> None:
        raise NotImplementedError("exercise 3.2: A reflector that recovers from 410 Gone")

    def stop(self) -> None:
        raise NotImplementedError("exercise 3.2: A reflector that recovers from 410 Gone")

    def on_event(self, event: dict[str, Any]) -> None:
        raise NotImplementedError("exercise 3.2: A reflector that recovers from 410 Gone")

    def on_close(self) -> None:
        raise NotImplementedError("exercise 3.2: A reflector that recovers from 410 Gone")
