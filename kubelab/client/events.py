"""EventRecorder: how components tell people what they did, as core/v1 Events.

`kubectl describe pod` ends with these: Scheduled, Pulling, Pulled, Created, Started, BackOff...
Follows client-go tools/record (event.go, events_cache.go): an event names the object it is
about (involvedObject), its reason, message, type (Normal or Warning) and source component.
Before an event is written, EventCorrelate looks at it in three steps, as upstream does:

1. EventAggregator: similar events (same source, involvedObject, type and reason, but
   different messages: EventAggregatorByReasonFunc) are counted; once 10 different messages
   come within 10 minutes of each other, each further one is written as one aggregate event,
   "(combined from similar events): <message>", whose count grows instead.
2. eventLogger: a repeat of the same event (same object, type, reason, message and source)
   within ten minutes is not a new object: the first one's count and lastTimestamp are bumped,
   which is why `kubectl get events` shows "x15 over 3m".
3. EventSourceObjectSpamFilter: at most 25 events in a burst about one object (per source and
   type), then one every five minutes: a pod stuck in ImagePullBackOff for hours does not
   flood the API server with events.

Departures (docs/ARCHITECTURE.md): the spam filter runs first, so an event it drops is not
counted by the two steps after it (upstream counts it, and the next write shows the larger
count); and step 2 starts a new Event for a repeat ten minutes after the first one (upstream's
eventLogger bumps the count for as long as the LRU cache remembers the event).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.api.meta import epoch, micro_time, object_ref, rfc3339
from kubelab.client.client import Client
from kubelab.sim.clock import Clock
from kubelab.sim.trace import Trace

__all__ = ["NORMAL", "WARNING", "EventRecorder", "event_aggregator_by_reason_func",
           "event_aggregator_by_reason_message_func", "get_event_key"]

NORMAL, WARNING = "Normal", "Warning"
AGGREGATE_WINDOW = 600.0  # seconds: events_cache.go's defaultAggregateIntervalInSeconds
SPAM_BURST, SPAM_QPS = 25, 1.0 / 300.0  # events_cache.go's defaultSpamBurst, defaultSpamQPS
# events_cache.go's maxLruCacheEntries: what a recorder remembers (events to aggregate, spam
# buckets) is bounded; the least recently used entry goes first. A ReplicaSet controller that
# creates 30,000 pods says "Created pod: <name>" 30,000 times, each different.
LRU_CACHE_SIZE = 4096
AGGREGATE_MAX_EVENTS = 10  # events_cache.go's defaultAggregateMaxEvents
AGGREGATE_PREFIX = "(combined from similar events): "  # EventAggregatorByReasonMessageFunc


def _lru_get(cache: OrderedDict[Any, Any], key: Any) -> Any:
    value = cache.get(key)
    if value is not None:
        cache.move_to_end(key)
    return value


def _lru_add(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    if len(cache) > LRU_CACHE_SIZE:
        cache.popitem(last=False)


def _involved(event: dict[str, Any]) -> tuple[str, ...]:
    source, ref = event.get("source") or {}, event.get("involvedObject") or {}
    return (source.get("component", ""), source.get("host", ""), ref.get("kind", ""),
            ref.get("namespace", ""), ref.get("name", ""), ref.get("fieldPath", ""), ref.get("uid", ""),
            ref.get("apiVersion", ""))


def get_event_key(event: dict[str, Any]) -> tuple[str, ...]:
    """getEventKey: source, involvedObject, type, reason and message; an identical event has
    the same key, and is counted on the first one."""
    return (*_involved(event), event.get("type", ""), event.get("reason", ""), event.get("message", ""))


def event_aggregator_by_reason_func(event: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """EventAggregatorByReasonFunc: (the aggregate key, the local key). Events that differ only
    in their message share the aggregate key; the message tells them apart."""
    return (*_involved(event), event.get("type", ""), event.get("reason", ""),
            event.get("reportingComponent", ""), event.get("reportingInstance", "")), \
        str(event.get("message", ""))


def event_aggregator_by_reason_message_func(event: dict[str, Any]) -> str:
    """EventAggregatorByReasonMessageFunc: the message of an aggregate event."""
    return AGGREGATE_PREFIX + str(event.get("message", ""))


class EventRecorder:
    def __init__(self, client: Client, component: str, clock: Clock, *, host: str = "",
                 trace: Trace | None = None) -> None:
        self.client, self.component, self.clock, self.host = client, component, clock, host
        self.trace = trace
        self._seen: OrderedDict[tuple[str, ...], tuple[str, str, int, float]] = OrderedDict()
        self._nanos = 0  # the last event name's nanoseconds
        # spam key -> (tokens, at)
        self._buckets: OrderedDict[tuple[str, ...], tuple[float, float]] = OrderedDict()
        # aggregate key -> (the messages seen, the last time one was seen): aggregateRecord
        self._aggregates: OrderedDict[tuple[str, ...], tuple[set[str], float]] = OrderedDict()
        self.filtered = 0  # events dropped by the spam filter

    def _aggregate(self, event: dict[str, Any]) -> tuple[str, tuple[str, ...], bool]:
        """EventAggregate: the message to write, the key its count is kept under (the event's
        own key, or the aggregate key once 10 messages came within 600 s), and which."""
        aggregate_key, local_key = event_aggregator_by_reason_func(event)
        now = self.clock.now
        record: tuple[set[str], float] | None = _lru_get(self._aggregates, aggregate_key)
        if record is None or now - record[1] > AGGREGATE_WINDOW:
            record = (set(), now)  # none yet, or the previous record is too old: a fresh one
        messages = record[0]
        messages.add(local_key)
        _lru_add(self._aggregates, aggregate_key, (messages, now))
        if len(messages) < AGGREGATE_MAX_EVENTS:
            return event["message"], get_event_key(event), False
        messages.discard(min(messages))  # PopAny (any one; the least, to stay deterministic)
        return event_aggregator_by_reason_message_func(event), aggregate_key, True

    def _spam_filtered(self, ref: dict[str, Any], type_: str) -> bool:
        """getSpamKey: source, involved object and type; a token bucket per key."""
        key = (ref["kind"], ref.get("namespace", ""), ref["name"], ref["uid"], type_)
        now = self.clock.now
        tokens, at = _lru_get(self._buckets, key) or (float(SPAM_BURST), now)
        tokens = min(float(SPAM_BURST), tokens + (now - at) * SPAM_QPS)
        if tokens < 1.0:
            _lru_add(self._buckets, key, (tokens, now))
            self.filtered += 1
            return True
        _lru_add(self._buckets, key, (tokens - 1.0, now))
        return False

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        """Record an event about obj. Failures are logged, never raised: like client-go,
        a component does not stop its work because an event could not be written."""
        if type_ not in (NORMAL, WARNING):
            raise ValueError(f"unsupported event type: {type_!r}")
        ref = object_ref(obj)
        if self._spam_filtered(ref, type_):
            return
        namespace = ref.get("namespace") or "default"
        message, key, aggregated = self._aggregate({
            "involvedObject": ref, "reason": reason, "message": message, "type": type_,
            "source": {"component": self.component, "host": self.host},
            "reportingComponent": self.component, "reportingInstance": self.host or self.component})
        now = self.clock.now
        if self.trace is not None:
            self.trace.record(self.component, "event", f"{ref['kind']}/{ref['name']}",
                              type=type_, reason=reason)
        try:
            seen = _lru_get(self._seen, key)
            if seen is not None and now - seen[3] < AGGREGATE_WINDOW:
                name, ns, count, first = seen
                patch: dict[str, Any] = {"count": count + 1, "lastTimestamp": rfc3339(now)}
                if aggregated:
                    patch["message"] = message  # an aggregate says its latest message
                self.client.patch("events", name, patch, ns)
                _lru_add(self._seen, key, (name, ns, count + 1, first))
                return
            # Upstream names an event <object>.<wall-clock nanoseconds>. Virtual time stands
            # still within a step, so two events at one instant would share a name: the
            # nanoseconds only ever grow, and a name already taken moves one on.
            nanos = max(int((now + epoch().timestamp()) * 1e9), self._nanos + 1)
            for _attempt in range(8):
                self._nanos = nanos
                name = f"{ref['name']}.{nanos:x}"
                try:
                    self.client.create({
                        "apiVersion": "v1", "kind": "Event",
                        "metadata": {"name": name, "namespace": namespace},
                        "involvedObject": ref, "reason": reason, "message": message, "type": type_,
                        "source": {"component": self.component,
                                   **({"host": self.host} if self.host else {})},
                        "firstTimestamp": rfc3339(now), "lastTimestamp": rfc3339(now), "count": 1,
                        "eventTime": micro_time(now), "reportingComponent": self.component,
                        "reportingInstance": self.host or self.component,
                    }, namespace)
                    break
                except ApiError as err:
                    if err.code != 409:
                        raise
                    nanos += 1
            _lru_add(self._seen, key, (name, namespace, 1, now))
        except ApiError as err:
            if self.trace is not None:
                self.trace.record(self.component, "event-failed", f"{ref['kind']}/{ref['name']}",
                                  reason=reason, error=err.reason)
