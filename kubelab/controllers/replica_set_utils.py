"""ReplicaSet status (kubernetes/kubernetes pkg/controller/replicaset/replica_set_utils.go).

status.replicas counts the active pods the ReplicaSet owns; fullyLabeledReplicas those whose
labels include all of the template's; readyReplicas those Ready; availableReplicas those Ready
for at least minReadySeconds. observedGeneration says which spec these numbers answer.

PodVerdicts is ours, not upstream's: what each pod counts for, remembered between syncs.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kubelab.api.errors import ApiError
from kubelab.api.labels import Selector, selector_from_set
from kubelab.api.meta import deep_copy, get_controller_of_no_copy, rfc3339
from kubelab.client.client import Client
from kubelab.controllers.controller_utils import is_pod_active, is_pod_available, is_pod_ready

__all__ = ["PodVerdict", "PodVerdicts", "calculate_status", "update_replica_set_status"]

Object = dict[str, Any]


class PodVerdict(NamedTuple):
    active: bool   # IsPodActive: FilterActivePods keeps it
    claimed: bool  # controlled by the ReplicaSet and matching its selector: ClaimPods keeps it as is
    labeled: bool  # has every label of the ReplicaSet's template (fullyLabeledReplicas)
    ready: bool    # IsPodReady


class PodVerdicts:
    """What each pod of one ReplicaSet counts for in a sync, remembered per pod object.

    A ReplicaSet syncs whenever one of its pods changes, and each sync looks at every one of
    its pods: active? still ours and matching? fully labelled? Ready? Go answers that for 1,000
    pods in microseconds; Python, once per pod becoming Ready, 30,000 times, takes minutes.
    A pod's resourceVersion changes with every change to it, so the answers for one version
    of a pod hold while the ReplicaSet's uid, selector and template labels do: a sync examines
    only the pods that changed since the last one. Availability is not remembered: with
    minReadySeconds it depends on the time."""

    def __init__(self) -> None:
        self._basis: tuple[Any, ...] | None = None
        # pod uid -> (its resourceVersion, the verdict). Not the pod itself: a ReplicaSet that
        # does not sync for a while must not keep the old versions of its pods alive.
        self._verdicts: dict[str, tuple[str, PodVerdict]] = {}
        # The last refresh's active pods, with how many are fully labelled and which Ready:
        # when all of them are claimed, calculate_status counts that very list.
        self._tally: tuple[list[Object], int, list[Object]] | None = None

    def refresh(self, rs: Object, selector: Selector, pods: list[Object]) -> tuple[list[Object], bool]:
        """Judge the pods not seen before and forget those not in `pods`. Returns the active
        ones (FilterActivePods) and whether every one of them is claimed already (ours and
        matching: ClaimPods would keep them all and change nothing). One pass, one lookup
        per pod: this loop runs 1,000 times per sync."""
        labels = ((rs["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        uid = rs["metadata"]["uid"]
        basis = (uid, selector, labels)
        if basis != self._basis:
            self._basis, self._verdicts = basis, {}
        old: dict[str, tuple[str, PodVerdict]] = self._verdicts
        new: dict[str, tuple[str, PodVerdict]] = {}
        template_selector = selector_from_set(labels)
        active: list[Object] = []
        ready: list[Object] = []
        all_claimed, labeled = True, 0
        for pod in pods:
            meta = pod["metadata"]
            entry = old.get(meta["uid"])
            if entry is None or entry[0] != meta["resourceVersion"]:
                entry = (meta["resourceVersion"], self._judge(pod, uid, selector, template_selector))
            new[meta["uid"]] = entry
            is_active, claimed, is_labeled, is_ready = entry[1]
            if is_active:
                active.append(pod)
                all_claimed = all_claimed and claimed
                labeled += is_labeled
                if is_ready:
                    ready.append(pod)
        self._verdicts, self._tally = new, (active, labeled, ready)
        return active, all_claimed

    @staticmethod
    def _judge(pod: Object, uid: str, selector: Selector, template_selector: Selector) -> PodVerdict:
        labels = pod["metadata"].get("labels") or {}
        ref = get_controller_of_no_copy(pod)
        return PodVerdict(active=is_pod_active(pod),
                          claimed=ref is not None and ref.get("uid") == uid and selector.matches(labels),
                          labeled=template_selector.matches(labels), ready=is_pod_ready(pod))

    def __getitem__(self, pod: Object) -> PodVerdict:
        """The verdict on a pod given to the last refresh (KeyError for any other)."""
        meta = pod["metadata"]
        rv, verdict = self._verdicts[meta["uid"]]
        if rv != meta["resourceVersion"]:
            raise KeyError(f"{meta['uid']} at resourceVersion {meta['resourceVersion']}")
        return verdict

    def tally(self, pods: list[Object]) -> tuple[int, list[Object]]:
        """How many of pods are fully labelled, and which are Ready."""
        # The refresh's tally serves this sync's status once, then goes: kept, it would hold
        # this version of every pod alive until the ReplicaSet's next sync.
        last, self._tally = self._tally, None
        if last is not None and pods is last[0]:
            return last[1], last[2]
        ready = [pod for pod in pods if self[pod].ready]
        return sum(self[pod].labeled for pod in pods), ready


def calculate_status(rs: Object, pods: list[Object], verdicts: PodVerdicts,
                     manage_error: ApiError | None, now: float) -> Object:
    """calculateStatus: counts over the claimed active pods, and the ReplicaFailure condition.
    `verdicts` knows every pod in `pods` (PodVerdicts.refresh)."""
    status = deep_copy(rs.get("status") or {})
    min_ready = int(rs["spec"].get("minReadySeconds") or 0)
    labeled, ready_pods = verdicts.tally(pods)
    ready = len(ready_pods)
    available = sum(is_pod_available(pod, min_ready, now) for pod in ready_pods) if min_ready else ready
    conditions = [c for c in status.get("conditions") or () if c.get("type") != "ReplicaFailure"]
    failure = next((c for c in status.get("conditions") or () if c.get("type") == "ReplicaFailure"),
                   None)
    if manage_error is not None:
        if failure is None:
            diff = len(pods) - int(rs["spec"].get("replicas", 1))
            reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
            failure = {"type": "ReplicaFailure", "status": "True", "lastTransitionTime": rfc3339(now),
                       "reason": reason, "message": manage_error.message}
        conditions.append(failure)
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    status.update(replicas=len(pods), fullyLabeledReplicas=labeled, readyReplicas=ready,
                  availableReplicas=available)
    return status


def update_replica_set_status(client: Client, rs: Object, status: Object) -> Object:
    """updateReplicaSetStatus: nothing to write in the steady state; otherwise one update,
    and on failure one fresh GET and one retry (statusUpdateRetries = 1)."""
    old = rs.get("status") or {}
    generation = rs["metadata"].get("generation", 0)
    fields = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
    if all(old.get(f, 0) == status.get(f, 0) for f in fields) and \
            old.get("observedGeneration") == generation and \
            old.get("conditions") == status.get("conditions"):
        return rs
    status["observedGeneration"] = generation
    current = deep_copy(rs)
    for attempt in range(2):
        current["status"] = status
        try:
            return client.update_status(current)
        except ApiError:
            if attempt == 1:
                raise
            meta = rs["metadata"]
            current = client.get("replicasets", meta["name"], meta.get("namespace", "default"))
    return rs  # unreachable: the loop returns or raises
