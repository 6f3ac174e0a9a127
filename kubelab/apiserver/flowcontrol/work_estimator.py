"""How much work a request is: the seats it holds, and (kubelab's cost model) for how long.

Seats follow k8s.io/apiserver pkg/util/flowcontrol/request/ (Kubernetes 1.34):

- width.go: a list uses the list estimator, a create/update/patch/delete the mutating one,
  anything else (get, watch) one seat.
- list_work_estimator.go with SizeBasedListCostEstimate (on by default in 1.34): the memory a
  list loads at once, objects x their average size, one seat per 100,000 bytes; a list served
  from the watch cache counts at most 1,000,000 bytes; a list naming one object (metadata.name)
  loads one. At most MaximumListSeatsLimit (100) and the level's max seats.
- mutating_work_estimator.go: a write with at least 10 interested watchers holds
  ceil(watchers / 10) seats (at most 10 and the level's max seats) for a final phase of
  5 ms x that many seats, reshaped to the seats given: the watch events it fans out.
  watch_tracker.go counts the watchers of the resource that watch all of it, its namespace,
  or (metadata.name) the object itself; a pod watch by spec.nodeName is indexed and not
  counted. kubelab recounts when the number of the resource's watchers changes.
- The object counts come from an object count tracker, as upstream's storage stats, polled
  every --etcd-count-metric-poll-period (1 minute; ObjectCountTracker.period) of virtual
  time per resource: a list right after many creates is still priced at the old count.

kubelab's service-time model (upstream measures real time; kubelab has none): a request holds
its seats for

    BASE_SECONDS (1 ms) + PER_OBJECT_SECONDS (10 us) x objects it processes
        + the store latency the request waited (a slow disk, faults.slow_store)

followed by the final phase above. The objects a list processes are the items it returned
(the seats, as upstream, are priced before it runs, from the polled count: a kubelet's list of
its own pods from the spec.nodeName index is wide but short); other requests process one.
Every figure is virtual and deterministic: the same requests give the same seat-seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubelab.api.request import Request
from kubelab.apiserver.storage.delegator import should_delegate_list
from kubelab.apiserver.storage.selection import ListOptions, Predicate
from kubelab.apiserver.storage.watch_cache import Cacher

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["BASE_SECONDS", "PER_OBJECT_SECONDS", "ObjectCountTracker", "WorkEstimate",
           "estimate_work"]

MINIMUM_SEATS = 1
MAXIMUM_LIST_SEATS_LIMIT = 100        # 10 without SizeBasedListCostEstimate
MAXIMUM_MUTATING_SEATS_LIMIT = 10
BYTES_PER_SEAT = 100_000
CACHE_WITH_STREAMING_MAX_MEMORY = 1_000_000
MAX_OBJECT_SIZE = 1_500_000
WATCHES_PER_SEAT = 10
EVENT_ADDITIONAL_SECONDS = 0.005
STATS_REFRESH_SECONDS = 60.0

BASE_SECONDS = 0.001
PER_OBJECT_SECONDS = 0.00001
MUTATING = frozenset({"create", "update", "patch", "delete"})


@dataclass(frozen=True, slots=True)
class WorkEstimate:
    initial_seats: int = MINIMUM_SEATS
    final_seats: int = 0
    additional_latency: float = 0.0  # seconds the final seats are held after the request
    objects: int = 0                 # objects the request processes (kubelab's cost model)

    @property
    def max_seats(self) -> int:
        return max(self.initial_seats, self.final_seats)


class ObjectCountTracker:
    """Objects and their average size per resource, as the storage layer reports them."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.period = STATS_REFRESH_SECONDS  # --etcd-count-metric-poll-period
        self._stats: dict[str, tuple[float, int, int]] = {}  # prefix -> (when, count, avg size)
        # resource -> (its cacher, watchers counted, watchers by (namespace, name))
        self._watches: dict[str, tuple[Cacher, int, dict[tuple[str, str], int]]] = {}

    def stats(self, prefix: str) -> tuple[int, int]:
        now = self.server.clock.now
        seen = self._stats.get(prefix)
        if seen is None or now - seen[0] >= self.period:
            kvs = self.server.store.range(prefix, prefix=True).kvs
            size = sum(len(kv.value) for kv in kvs) // len(kvs) if kvs else 0
            seen = self._stats[prefix] = (now, len(kvs), size)
        return seen[1], seen[2]


    def interested_watch_count(self, cacher: Cacher, namespace: str, name: str) -> int:
        """watchTracker.GetInterestedWatchCount for a write of namespace/name."""
        total = len(cacher.watchers) + sum(len(w) for w in cacher.by_trigger.values())
        seen = self._watches.get(cacher.resource)
        if seen is None or seen[0] is not cacher or seen[1] != total:
            counts: dict[tuple[str, str], int] = {}
            for watcher in cacher.open_watchers():
                selected = _selected(watcher.info.field_selector)
                if cacher.resource == "pods" and selected.get("spec.nodeName"):
                    continue  # indexed by spec.nodeName: not counted
                key = (watcher.info.namespace, selected.get("metadata.name", ""))
                counts[key] = counts.get(key, 0) + 1
            seen = self._watches[cacher.resource] = (cacher, total, counts)
        counts = seen[2]
        result = counts.get(("", ""), 0)
        if namespace:
            result += counts.get((namespace, ""), 0)
        if name:
            result += counts.get((namespace, name), 0)
        return result


def _selected(field_selector: str) -> dict[str, str]:
    """The field=value (or field==value) terms of a field selector."""
    terms = {}
    for term in field_selector.split(","):
        if "!=" not in term and "=" in term:
            key, _, value = term.partition("==" if "==" in term else "=")
            terms[key.strip()] = value.strip()
    return terms


def _list_from_storage(r: Request) -> bool:
    """delegator.ShouldDelegateListMeta: the request's resourceVersion, limit and continue
    token, asked of the delegator (1.34: consistent lists come from the watch cache)."""
    pred = Predicate("", None, None, limit=max(r.limit, 0), continue_token=r.continue_token)
    return should_delegate_list(ListOptions(r.resource_version, pred)).should_delegate


def estimate_list(r: Request, count: int, avg_size: int, max_seats: int) -> WorkEstimate:
    """seatsBasedOnObjectSize."""
    max_seats = MAXIMUM_LIST_SEATS_LIMIT if not max_seats else min(max_seats, MAXIMUM_LIST_SEATS_LIMIT)
    if avg_size <= 0 and count:
        avg_size = MAX_OBJECT_SIZE
    limited = min(r.limit, count) if r.limit > 0 else count
    from_cache = not _list_from_storage(r)
    if r.field_selector.startswith("metadata.name=") and "," not in r.field_selector:
        loaded = 1                       # matchesSingle
    elif from_cache:
        loaded = limited
    elif r.field_selector or r.label_selector:
        loaded = max(limited, count // 2)
    else:
        loaded = limited
    memory = loaded * avg_size
    if from_cache:
        memory = min(memory, CACHE_WITH_STREAMING_MAX_MEMORY)
    seats = math.ceil(memory / BYTES_PER_SEAT)
    return WorkEstimate(min(max(seats, MINIMUM_SEATS), max_seats), objects=loaded)


def estimate_mutating(r: Request, watch_count: int, max_seats: int) -> WorkEstimate:
    """mutatingWorkEstimator.estimate."""
    max_seats = MAXIMUM_MUTATING_SEATS_LIMIT if not max_seats else \
        min(max_seats, MAXIMUM_MUTATING_SEATS_LIMIT)
    if r.resource == "serviceaccounts" and r.subresource == "token":
        return WorkEstimate(objects=1)
    final, latency = 0, 0.0
    if watch_count >= WATCHES_PER_SEAT:
        final = math.ceil(watch_count / WATCHES_PER_SEAT)
        final_work = final * EVENT_ADDITIONAL_SECONDS   # seat-seconds
        final = min(final, max_seats)
        latency = final_work / final                    # DurationPerSeat
    return WorkEstimate(1, final, latency, objects=1)


def estimate_work(server: APIServer, tracker: ObjectCountTracker, r: Request, prefix: str,
                  group: str, max_seats: int) -> WorkEstimate:
    """workEstimator.estimate: by verb."""
    if r.verb == "list":
        count, size = tracker.stats(prefix)
        return estimate_list(r, count, size, max_seats)
    if r.verb in MUTATING:
        cacher = server.served.cachers.get((group, r.resource))
        watchers = 0 if cacher is None else \
            tracker.interested_watch_count(cacher, r.namespace, r.name)
        return estimate_mutating(r, watchers, max_seats)
    return WorkEstimate(objects=1)


def service_seconds(estimate: WorkEstimate, store_latency: float) -> float:
    """kubelab's cost model: how long a request holds its seats before its final phase."""
    return BASE_SECONDS + PER_OBJECT_SECONDS * estimate.objects + store_latency
