"""The EventRecorder's correlator: aggregation of similar events, counting of identical ones,
the spam filter (client-go tools/record/events_cache.go; the cases of events_cache_test.go
TestEventAggregatorByReasonFunc, TestEventAggregatorByReasonMessageFunc, TestEventCorrelator)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.client.events import (
    EventRecorder,
    event_aggregator_by_reason_func,
    event_aggregator_by_reason_message_func,
    get_event_key,
)


def pod(name: str = "my-pod") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}}


def event(reason: str, message: str, name: str = "pod1") -> dict[str, Any]:
    return {"involvedObject": {"kind": "Pod", "name": name, "namespace": "other", "uid": "C934D34AFB20242",
                               "apiVersion": "version"},
            "reason": reason, "message": message, "type": "Normal",
            "source": {"component": "kubelet", "host": "kublet.node1"}}


def test_events_that_differ_only_by_message_share_an_aggregate_key() -> None:
    aggregate1, local1 = event_aggregator_by_reason_func(event("end-of-world", "it was fun"))
    aggregate2, local2 = event_aggregator_by_reason_func(event("end-of-world", "it was awful"))
    aggregate3, _ = event_aggregator_by_reason_func(event("nevermind", "it was a bug"))
    assert aggregate1 == aggregate2 and local1 != local2 and aggregate1 != aggregate3
    assert get_event_key(event("end-of-world", "it was fun")) != get_event_key(event("end-of-world", "x"))


def test_the_aggregate_message_has_upstreams_prefix() -> None:
    assert event_aggregator_by_reason_message_func(event("end-of-world", "it was fun")) == \
        "(combined from similar events): it was fun"


def _similar(n: int) -> list[tuple[str, str, str]]:
    """makeSimilarEvents: the same event, each with its own message."""
    return [("my-pod", "similar", f"similar message-{i}-similar message") for i in range(n)]


# TestEventCorrelator: (previous events, new event, seconds between events,
# expected (message, count) of the event the new one was written as, or None when filtered).
SIMILAR = ("my-pod", "similar", "similar message")
AGGREGATE = "(combined from similar events): similar message"
CASES = {
    "create-a-single-event": ([], ("my-pod", "first", "i am first"), 5, ("i am first", 1)),
    "the-same-event-should-just-count": ([("my-pod", "duplicate", "me again")],
                                         ("my-pod", "duplicate", "me again"), 5, ("me again", 2)),
    "the-same-event-should-just-count-even-if-more-than-aggregate": (
        [("my-pod", "duplicate", "me again")] * 10, ("my-pod", "duplicate", "me again"), 30,
        ("me again", 11)),
    "the-same-event-is-spam-if-happens-too-frequently": (
        [("my-pod", "duplicate", "me again")] * 26, ("my-pod", "duplicate", "me again"), 1, None),
    "create-many-unique-events": ([(f"pod-{i}", f"reason-{i}", f"message-{i}") for i in range(30)],
                                  ("my-pod", "unique", "snowflake"), 5, ("snowflake", 1)),
    "similar-events-should-aggregate-event": (_similar(9), SIMILAR, 5, (AGGREGATE, 1)),
    "similar-events-many-times-should-count-the-aggregate": (_similar(10), SIMILAR, 5, (AGGREGATE, 2)),
    # upstream's IntervalClock moves on at every read of the clock, so 600 s per event is more
    # than 600 s between two of them; here the clock moves once per event
    "similar-events-whose-interval-is-greater-than-aggregate-interval-do-not-aggregate": (
        _similar(9), SIMILAR, 601, ("similar message", 1)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_event_correlator(case: str) -> None:
    previous, new, interval, expected = CASES[case]
    c = Cluster(nodes=1, components=[])
    recorder = EventRecorder(c.client, "kubelet", c.clock, host="kublet.node1")
    for name, reason, message in [*previous, new]:
        c.run(interval)
        recorder.event(pod(name), "Normal", reason, message)
    written = [e for e in c.events() if e["involvedObject"]["name"] == new[0] and e["reason"] == new[1]]
    if expected is None:
        assert recorder.filtered == 2 and [e["count"] for e in written] == [25]
        return
    last = max(written, key=lambda e: (e["lastTimestamp"], e["metadata"]["name"]))
    assert (last["message"], last["count"]) == expected
    if expected[1] > 1:
        assert last["firstTimestamp"] != last["lastTimestamp"]


def test_an_aggregate_event_says_its_latest_message() -> None:
    c = Cluster(nodes=1, components=[])
    recorder = EventRecorder(c.client, "kubelet", c.clock)
    for _, reason, message in _similar(12):
        c.run(1)
        recorder.event(pod(), "Warning", reason, message)
    messages = sorted((e["count"], e["message"]) for e in c.events())
    # nine written as they are, then one aggregate counted three times
    assert len(messages) == 10 and messages[-1] == (
        3, "(combined from similar events): similar message-11-similar message")
