"""What every workload controller shares: pod readiness, expectations, slow start, pod control.

Follows kubernetes/kubernetes pkg/controller/controller_utils.go (ControllerExpectations,
UIDTrackingControllerExpectations, FilterActivePods, RealPodControl, GetPodFromTemplate,
the pod-controller-UID index) and pkg/api/v1/pod/util.go (IsPodReady, IsPodAvailable).
The deletion ranking (ActivePodsWithRanks) lives in pod_ranking.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import get_controller_of_no_copy, parse_time
from kubelab.client.client import Client
from kubelab.client.events import NORMAL, WARNING, EventRecorder
from kubelab.client.indexer import Indexer
from kubelab.client.shared_informer import SharedIndexInformer
from kubelab.sim.clock import Clock

__all__ = [
    "BURST_REPLICAS",
    "CONTROLLER_UID_INDEX",
    "EXPECTATIONS_TIMEOUT",
    "ORPHAN_POD_INDEX_KEY",
    "POD_CONTROLLER_UID_INDEX",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "ControllerExpectations",
    "PodControl",
    "UIDTrackingControllerExpectations",
    "add_indexer_once",
    "controller_uid_index_func",
    "filter_active_pods",
    "filter_pods_by_owner",
    "get_pod_ready_condition",
    "has_namespace_terminating_cause",
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "new_controller_ref",
    "pod_controller_uid_index_func",
    "seconds",
    "slow_start_batch",
]

# replicas. It resumes normal action after observing the watch events for them."
BURST_REPLICAS = 500
# controller_utils.go: a controller whose watch events never come wakes up after this long.
EXPECTATIONS_TIMEOUT = 5 * 60.0
# controller_utils.go: batches of creates start at 1 and double (1, 2, 4, ...).
SLOW_START_INITIAL_BATCH_SIZE = 1
# controller_utils.go (PodControllerUIDIndex): pods by the uid of their controller, and
# orphans under "_ORPHAN_POD/<namespace>", so a ReplicaSet finds its pods without a scan.
POD_CONTROLLER_UID_INDEX = "podControllerUID"
CONTROLLER_UID_INDEX = "controllerUID"  # ReplicaSets by the uid of their owner (a Deployment)
ORPHAN_POD_INDEX_KEY = "_ORPHAN_POD"


@functools.lru_cache(maxsize=65536)
def seconds(timestamp: str) -> float:
    """Virtual seconds of an RFC 3339 timestamp (cached: the same stamps recur constantly)."""
    return parse_time(timestamp)


# ---------------------------------------------------------------- pods (pkg/api/v1/pod/util.go)


def get_pod_ready_condition(pod: Object) -> Object | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return condition  # type: ignore[no-any-return]
    return None


def is_pod_ready(pod: Object) -> bool:
    condition = get_pod_ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def is_pod_available(pod: Object, min_ready_seconds: int, now: float) -> bool:
    """IsPodAvailable: Ready, and Ready for longer than minReadySeconds (strictly before now)."""
    condition = get_pod_ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return False
    if not min_ready_seconds:
        return True
    since = condition.get("lastTransitionTime")
    return bool(since) and seconds(since) + min_ready_seconds < now


def is_pod_active(pod: Object) -> bool:
    """IsPodActive: not Succeeded, not Failed, not being deleted."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def filter_active_pods(pods: list[Object]) -> list[Object]:
    return [pod for pod in pods if is_pod_active(pod)]


def pod_controller_uid_index_func(pod: Any) -> list[str]:
    """The index function behind filter_pods_by_owner."""
    ref = get_controller_of_no_copy(pod)
    if ref is not None:
        return [str(ref.get("uid", ""))]
    return [f"{ORPHAN_POD_INDEX_KEY}/{pod['metadata'].get('namespace', '')}"]


def add_indexer_once(informer: SharedIndexInformer, name: str, fn: Callable[[Any], list[str]]) -> Indexer:
    """AddIndexers, tolerating a sibling controller that added the same index to the shared
    informer already (upstream does this with a check for the index name, too)."""
    if name not in informer.indexer.get_indexers():
        informer.indexer.add_indexers({name: fn})
    return informer.indexer


def controller_uid_index_func(obj: Any) -> list[str]:
    """ControllerUIDIndex: objects by the uid of their controller (none for orphans)."""
    ref = get_controller_of_no_copy(obj)
    return [str(ref.get("uid", ""))] if ref is not None else []


def filter_pods_by_owner(indexer: Indexer, owner: Object, include_orphans: bool = True) -> list[Object]:
    """FilterPodsByOwner: the pods `owner` controls, plus (optionally) the orphans of its
    namespace that it might adopt. Upstream lists every pod of the namespace before 1.29."""
    meta = owner["metadata"]
    pods = indexer.by_index(POD_CONTROLLER_UID_INDEX, meta["uid"])
    if include_orphans:
        pods = pods + indexer.by_index(POD_CONTROLLER_UID_INDEX,
                                       f"{ORPHAN_POD_INDEX_KEY}/{meta.get('namespace', '')}")
    return pods


def new_controller_ref(owner: Object) -> Object:
    """metav1.NewControllerRef: controller and blockOwnerDeletion are both true."""
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}


def has_namespace_terminating_cause(err: ApiError) -> bool:
    """apierrors.HasStatusCause(err, NamespaceTerminatingCause)."""
    return any(c.get("reason") == "NamespaceTerminating"
               for c in err.details.get("causes") or ())


# ---------------------------------------------------------------- expectations


class ControllerExpectations:
    """What each controller (by key) still expects to see before it acts again.

    After a ReplicaSet creates 3 pods it expects 3 pod ADDED events. Until its informer has
    delivered them, its cache is behind reality: counting pods there would create 3 more. So
    sync waits until the expectations are met, or for EXPECTATIONS_TIMEOUT if an event was lost.
    """

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._store: dict[str, list[float]] = {}  # key -> [add, del, timestamp]

    def get_expectations(self, key: str) -> tuple[int, int] | None:
        exp = self._store.get(key)
        return None if exp is None else (int(exp[0]), int(exp[1]))

    def satisfied_expectations(self, key: str) -> bool:
        """True when nothing is expected, everything expected was seen, or the wait expired."""
        exp = self._store.get(key)
        if exp is None:
            return True  # never set, or deleted: a new controller syncs at once
        fulfilled = exp[0] <= 0 and exp[1] <= 0
        return fulfilled or self.clock.now - exp[2] > EXPECTATIONS_TIMEOUT

    def set_expectations(self, key: str, add: int, delete: int) -> None:
        self._store[key] = [add, delete, self.clock.now]

    def expect_creations(self, key: str, adds: int) -> None:
        self.set_expectations(key, adds, 0)

    def expect_deletions(self, key: str, dels: int) -> None:
        self.set_expectations(key, 0, dels)

    def lower_expectations(self, key: str, add: int, delete: int) -> None:
        exp = self._store.get(key)
        if exp is not None:
            exp[0] -= add
            exp[1] -= delete

    def creation_observed(self, key: str) -> None:
        self.lower_expectations(key, 1, 0)

    def deletion_observed(self, key: str) -> None:
        self.lower_expectations(key, 0, 1)

    def delete_expectations(self, key: str) -> None:
        self._store.pop(key, None)


class UIDTrackingControllerExpectations(ControllerExpectations):
    """Also remembers *which* pods it deletes, so that a graceful deletion (first an update
    setting deletionTimestamp, later the DELETED event) is counted once, not twice."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self._uids: dict[str, set[str]] = {}

    def expect_deletions_of(self, key: str, pod_keys: list[str]) -> None:
        self._uids[key] = set(pod_keys)
        self.expect_deletions(key, len(pod_keys))

    def deletion_observed_of(self, key: str, pod_key: str) -> None:
        uids = self._uids.get(key)
        if uids is not None and pod_key in uids:
            self.deletion_observed(key)
            uids.discard(pod_key)

    def delete_expectations(self, key: str) -> None:
        super().delete_expectations(key)
        self._uids.pop(key, None)


# ---------------------------------------------------------------- slow start


def slow_start_batch(count: int, initial_batch_size: int,
                     fn: Callable[[], None]) -> tuple[int, ApiError | None]:
    """Call fn `count` times in batches of 1, 2, 4, ... (upstream runs a batch in parallel);
    after a batch with a failure, stop. Returns (successes, first error).

    A namespace over its quota fails the first create, so the controller does not spam the
    API server (and the event stream) with the other 499."""
    remaining, successes = count, 0
    batch = min(remaining, initial_batch_size)
    while batch > 0:
        errors: list[ApiError] = []
        for _ in range(batch):
            try:
                fn()
            except ApiError as err:
                errors.append(err)
        successes += batch - len(errors)
        if errors:
            return successes, errors[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


# ---------------------------------------------------------------- pod control


def _pod_from_template(template: Object, owner: Object, controller_ref: Object) -> Object:
    """GetPodFromTemplate: labels, annotations and finalizers of the template; generateName
    `<owner>-` so the API server adds five random characters.

    Upstream deep-copies the template's spec for every pod. Here the spec is shared with the
    (read-only) cached template: the request is copied on its way into the API server, as
    client-go serializes it, so nothing ever writes to it (and 30,000 pods cost less)."""
    meta = template.get("metadata") or {}
    pod_meta: Object = {"generateName": f"{owner['metadata']['name']}-",
                        "namespace": owner["metadata"].get("namespace", "default"),
                        "ownerReferences": [controller_ref]}
    for field in ("labels", "annotations", "finalizers"):
        if meta.get(field):
            pod_meta[field] = list(meta[field]) if field == "finalizers" else dict(meta[field])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template.get("spec") or {}}


class PodControl:
    """RealPodControl: create and delete pods on behalf of a controller, with its events."""

    def __init__(self, client: Client, recorder: EventRecorder) -> None:
        self.client, self.recorder = client, recorder

    def create_pods(self, namespace: str, template: Object, owner: Object,
                    controller_ref: Object) -> Object:
        pod = _pod_from_template(template, owner, controller_ref)
        if not pod["metadata"].get("labels"):
            raise ApiError(400, "BadRequest", "unable to create pods, no labels")
        try:
            created = self.client.create(pod, namespace)
        except ApiError as err:
            if not has_namespace_terminating_cause(err):  # only if the namespace is not going
                self.recorder.event(owner, WARNING, "FailedCreate", f"Error creating: {err.message}")
            raise
        self.recorder.event(owner, NORMAL, "SuccessfulCreate",
                            f"Created pod: {created['metadata']['name']}")
        return created

    def delete_pod(self, namespace: str, name: str, owner: Object) -> None:
        try:
            self.client.delete("pods", name, namespace)
        except ApiError as err:
            if err.code != 404:  # already gone: nothing to say
                self.recorder.event(owner, WARNING, "FailedDelete", f"Error deleting: {err.message}")
            raise
        self.recorder.event(owner, NORMAL, "SuccessfulDelete", f"Deleted pod: {name}")
