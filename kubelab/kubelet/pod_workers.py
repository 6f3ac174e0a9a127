"""Pod workers: one worker per pod, at most one sync of a pod at a time.

Follows pkg/kubelet/pod_workers.go. Anything that concerns a pod (the API changed it, one of its
containers exited, a probe result changed) asks its worker to sync. If the worker is busy the
request is remembered and the pod is synced again right after (updates coalesce). When a sync
ends the pod is queued again (completeWork):
- after syncFrequency (1 min) if it went well: a level-triggered safety net;
- when the back-off window it reported closes (a CrashLoopBackOff says when it may restart),
  but never later than syncFrequency;
- after backOffPeriod (10 s) for any other error (ErrImagePull, ...).
Two simplifications: upstream adds up to 50 % jitter to these delays so that pods do not retry
in lockstep; we add none, so timelines are exact. And upstream treats ImagePullBackOff like any
error (a sync every 10 s, each emitting a BackOff event that client-go's spam filter mostly
drops); we wake such a pod when its pull back-off window closes, which pulls at the same times.
Queue timers are background work: a pod waiting out a back-off is not "busy" for
Clock.run_until_idle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubelab.sim.clock import Clock, Timer
from kubelab.sim.tasks import Step, Task
from kubelab.sim.trace import Trace

__all__ = ["PodWorkers", "SyncResult"]


@dataclass(frozen=True)
class SyncResult:
    error: str = ""                # "" when the sync went well
    retry_at: float | None = None  # a back-off window that closes then (virtual time)
    finished: bool = False         # the pod is done with: no more resyncs


@dataclass
class _Worker:
    working: bool = False
    pending: bool = False
    timer: Timer | None = None
    syncs: int = 0


class PodWorkers:
    def __init__(self, clock: Clock, sync: Callable[[str], Step], *, alive: Callable[[], bool],
                 resync_interval: float = 60.0, backoff_period: float = 10.0,
                 trace: Trace | None = None, name: str = "kubelet") -> None:
        self.clock, self.sync, self.alive = clock, sync, alive
        self.resync_interval, self.backoff_period = resync_interval, backoff_period
        self.trace, self.name = trace, name
        self._workers: dict[str, _Worker] = {}
        self.syncs = 0

    def update_pod(self, uid: str) -> None:
        """Sync this pod now, or right after the sync in progress."""
        if not self.alive():
            return
        worker = self._workers.setdefault(uid, _Worker())
        if worker.working:
            worker.pending = True
            return
        self._start(uid, worker)

    def forget(self, uid: str) -> None:
        worker = self._workers.pop(uid, None)
        if worker is not None and worker.timer is not None:
            worker.timer.cancel()

    def known(self) -> set[str]:
        return set(self._workers)

    def stop(self) -> None:
        for uid in list(self._workers):
            self.forget(uid)

    def _start(self, uid: str, worker: _Worker) -> None:
        if worker.timer is not None:
            worker.timer.cancel()
            worker.timer = None
        worker.working, worker.pending = True, False
        worker.syncs += 1
        self.syncs += 1
        Task(self.clock, self.sync(uid), alive=self.alive,
             on_done=lambda result, error: self._complete(uid, worker, result, error))

    def _complete(self, uid: str, worker: _Worker, result: object, error: BaseException | None) -> None:
        worker.working = False
        if self._workers.get(uid) is not worker or not self.alive():
            return  # forgotten meanwhile
        if error is not None and self.trace is not None:
            self.trace.record(self.name, "sync-error", uid, error=f"{type(error).__name__}: {error}")
        outcome = result if isinstance(result, SyncResult) else SyncResult(error="sync failed")
        if worker.pending:
            self._start(uid, worker)
            return
        if outcome.finished:
            return
        if not outcome.error:
            delay = self.resync_interval
        elif outcome.retry_at is not None:
            delay = min(max(outcome.retry_at - self.clock.now, 0.0), self.resync_interval)
        else:
            delay = self.backoff_period
        worker.timer = self.clock.call_later(delay, self.update_pod, uid, background=True)
