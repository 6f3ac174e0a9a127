"""The TTL-after-finished controller: delete a finished Job ttlSecondsAfterFinished after it
finished (kubernetes/kubernetes pkg/controller/ttlafterfinished/ttlafterfinished_controller.go).

It is its own controller upstream, not part of the Job controller: it only reads a finished
Job's Complete or Failed condition. When the time has come it reads the Job again from the API
server (the cache may be old: someone may have changed the TTL), then deletes it with a
resourceVersion precondition and foreground propagation, so its pods go first.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.controller_utils import seconds

__all__ = ["TTLAfterFinishedController"]


def _finish_time(job: Object) -> float | None:
    """jobFinishTime: when the Complete or Failed condition became True."""
    for condition in (job.get("status") or {}).get("conditions") or ():
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            stamp = condition.get("lastTransitionTime")
            return seconds(stamp) if stamp else None
    return None


def needs_cleanup(job: Object) -> bool:
    """needsCleanup: a TTL is set and the Job has finished."""
    return (job.get("spec") or {}).get("ttlSecondsAfterFinished") is not None and \
        _finish_time(job) is not None


class TTLAfterFinishedController:
    NAME = "ttl-after-finished-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.controller = Controller(self.NAME, self.process_job, ctx.clock, trace=ctx.trace,
                                     workers=5, client=ctx.client, cost=ctx.sync_cost)  # ConcurrentTTLSyncs
        self.queue = self.controller.queue
        informer = informers.informer_for("jobs")
        self.job_indexer = informer.indexer
        informer.add_event_handler(ResourceEventHandler(
            self._add_job, lambda _old, cur: self._add_job(cur), None))

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def _add_job(self, job: Any) -> None:
        if needs_cleanup(job):
            self.controller.enqueue(job)

    def _time_left(self, job: Object) -> float | None:
        """processTTL: None if it must not be deleted (yet: then look again when it expires)."""
        finished = _finish_time(job)
        if finished is None or (job.get("spec") or {}).get("ttlSecondsAfterFinished") is None:
            return None
        return finished + float(job["spec"]["ttlSecondsAfterFinished"]) - self.clock.now

    def process_job(self, key: str) -> None:
        namespace, name = split_key(key)
        job, exists = self.job_indexer.get_by_key(key)
        if not exists or job["metadata"].get("deletionTimestamp") or not needs_cleanup(job):
            return
        left = self._time_left(job)
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        # The TTL has expired in the cache: check the live object before deleting it.
        try:
            fresh = self.client.get("jobs", name, namespace)
        except ApiError as err:
            if err.code == 404:
                return
            raise
        left = self._time_left(fresh)
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        try:
            self.client.delete("jobs", name, namespace, propagation_policy="Foreground",
                               preconditions={"resourceVersion": fresh["metadata"]["resourceVersion"]})
        except ApiError as err:
            if err.code != 404:
                raise
