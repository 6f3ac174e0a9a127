"""The status manager: the kubelet's latest status of each pod, and getting it to the API server.

Follows pkg/kubelet/status/status_manager.go:
- SetPodStatus keeps the newest status per pod, with lastTransitionTime of each condition moved
  only when its status changes, and startTime fixed the first time;
- a change is written at once; every 10 s syncBatch writes whatever the API server does not show
  (it was down, the node was cut off, a controller changed a condition), so the kubelet catches
  up by itself when the API returns: the data plane never waited for the control plane;
- a static pod's status is written to its mirror pod;
- once a pod being deleted has stopped everything, the status manager writes its final status
  and deletes it with gracePeriodSeconds=0 and a UID precondition: the last step of graceful
  deletion (canBeDeleted).

- what is written keeps the conditions someone else owns (a readiness gate's, DisruptionTarget)
  as the API shows them, and the kubelet's own as the kubelet says (mergePodStatus).

Upstream GETs each pod before patching it; we read the kubelet's informer copy and send a merge
patch of the status, which needs no resourceVersion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.api.validation import left_terminated
from kubelab.client.client import Client
from kubelab.kubelet.status import KUBELET_CONDITIONS
from kubelab.sim.clock import Clock, Timer
from kubelab.sim.trace import Trace

__all__ = ["StatusManager"]

SYNC_PERIOD = 10.0  # status_manager.go syncPeriod


class StatusManager:
    def __init__(self, client: Client, clock: Clock, lookup: Callable[[str], Object | None], *,
                 trace: Trace | None = None, name: str = "kubelet") -> None:
        self.client, self.clock, self.lookup, self.trace, self.name = client, clock, lookup, trace, name
        self.statuses: dict[str, Object] = {}   # pod uid -> the status we want the API to show
        self._pending: set[str] = set()         # uids whose status the API does not have yet
        self._deletable: set[str] = set()       # uids whose containers are all gone
        # uid -> the API's pod object last found showing our status. Informer objects never
        # change, so while the API shows that very object the 10-s check has nothing to do.
        self._shown: dict[str, Object] = {}
        self._timer: Timer | None = None
        self._soon: Timer | None = None
        self.writes = 0

    def start(self) -> None:
        self._timer = self.clock.call_later(SYNC_PERIOD, self._sync_batch, background=True)

    def stop(self) -> None:
        for timer in (self._timer, self._soon):
            if timer is not None:
                timer.cancel()

    # ------------------------------------------------------------------ what the kubelet says

    def get_pod_status(self, uid: str) -> Object | None:
        return self.statuses.get(uid)

    def set_pod_status(self, pod: Object, status: Object) -> None:
        """Take `status` (it becomes ours: build a new one for every call)."""
        uid = pod["metadata"]["uid"]
        old = self.statuses.get(uid) or pod.get("status") or {}
        new = status  # the caller's own, freshly built
        now = rfc3339(self.clock.now)
        old_conditions = {c.get("type"): c for c in old.get("conditions") or []}
        for cond in new.get("conditions") or []:
            before = old_conditions.get(cond["type"])
            if before is not None and before.get("status") == cond.get("status") \
                    and before.get("lastTransitionTime"):
                cond["lastTransitionTime"] = before["lastTransitionTime"]
            else:
                cond.setdefault("lastTransitionTime", now)
            cond.setdefault("lastProbeTime", None)
        new["startTime"] = old.get("startTime") or now
        if self.statuses.get(uid) == new:
            return
        moved = left_terminated(pod.get("spec") or {}, new, old)
        if moved:
            # checkContainerStateTransition: a container that is not to be restarted has
            # (after a reboot, say) started again. Upstream logs "Status update on pod
            # aborted" and keeps the last status; the API server would refuse this one.
            key, i = moved[0]
            self._record("status-aborted", pod["metadata"]["name"],
                         container=old[key][i].get("name"),
                         reason="terminated container attempted illegal transition to "
                                "non-terminated state")
            return
        self.statuses[uid] = new
        self._shown.pop(uid, None)
        self._pending.add(uid)
        self._write_soon()

    def terminated(self, uid: str) -> None:
        """Every container of the pod has stopped: once its status is written, delete it."""
        self._deletable.add(uid)
        self._pending.add(uid)
        self._write_soon()

    def forget(self, uid: str) -> None:
        self.statuses.pop(uid, None)
        self._shown.pop(uid, None)
        self._pending.discard(uid)
        self._deletable.discard(uid)

    # ------------------------------------------------------------------ writing

    def _write_soon(self) -> None:
        if self._soon is None or self._soon.cancelled or self._soon.when < self.clock.now:
            self._soon = self.clock.call_later(0, self._flush)

    def _flush(self) -> None:
        self._soon = None
        for uid in sorted(self._pending):
            self.sync_pod(uid)

    def _sync_batch(self) -> None:
        """syncBatch: write what is pending, and repair what someone else changed (the node
        lifecycle controller marks pods not ready while the node is unreachable)."""
        self._pending.update(self.statuses)
        self._flush()
        self._timer = self.clock.call_later(SYNC_PERIOD, self._sync_batch, background=True)

    def sync_pod(self, uid: str) -> None:
        pod = self.lookup(uid)
        status = self.statuses.get(uid)
        if pod is None or status is None:
            self._pending.discard(uid)   # gone from the API (or nothing to say): nothing to write
            return
        meta = pod["metadata"]
        current = pod.get("status") or {}
        status = merge_pod_status(current, status)
        try:
            if self._shown.get(uid) is not pod:
                if any(current.get(k) != v for k, v in status.items()):
                    self.client.patch("pods", meta["name"], {"status": status},
                                      meta.get("namespace", "default"), subresource="status")
                    self.writes += 1
                else:
                    self._shown[uid] = pod
            if uid in self._deletable and meta.get("deletionTimestamp"):
                self.client.delete("pods", meta["name"], meta.get("namespace", "default"),
                                   grace_period_seconds=0, preconditions={"uid": meta["uid"]})
                self._record("delete", f"pods/{meta.get('namespace', 'default')}/{meta['name']}")
        except ApiError as err:
            if err.code in (404, 409):  # deleted meanwhile, or replaced by a new pod
                self._pending.discard(uid)
            self._record("status-failed", meta["name"], code=err.code, reason=err.reason)
            return
        self._pending.discard(uid)

    def _record(self, verb: str, obj: str, **detail: Any) -> None:
        if self.trace is not None:
            self.trace.record(self.name, verb, obj, **detail)


def merge_pod_status(old: Object, new: Object) -> Object:
    """mergePodStatus: the conditions of `old` (the API's) that the kubelet does not own, then
    the kubelet's own from `new`."""
    conditions = [c for c in old.get("conditions") or [] if c.get("type") not in KUBELET_CONDITIONS]
    conditions += [c for c in new.get("conditions") or [] if c.get("type") in KUBELET_CONDITIONS]
    if conditions == (new.get("conditions") or []):
        return new
    return {**new, "conditions": conditions}
