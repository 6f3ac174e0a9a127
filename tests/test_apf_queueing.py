"""The queueing model: fair queuing keeps a flood to its share, 429s with Retry-After, time-outs,
and a flood cannot starve node heartbeats (kubelet lease renewals stay on node-high)."""

from __future__ import annotations

from collections import Counter

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.flowcontrol import QueuedRequest, QueueSet, hash_flow_id
from kubelab.apiserver.flowcontrol.work_estimator import WorkEstimate
from kubelab.sim import Clock


def _drive(qs: QueueSet, clock: Clock, flows: dict[str, tuple[int, float]], seconds: float,
           service: float = 0.01) -> list[QueuedRequest]:
    """Each flow sends `n` requests every `every` seconds; each holds one seat for `service`."""
    sent: list[QueuedRequest] = []

    def send(flow: str, n: int, every: float) -> None:
        for _ in range(n):
            req = QueuedRequest(flow, WorkEstimate(), clock.now)
            if qs.start_request(req, hash_flow_id("fs", flow)):
                qs.set_service(req, service)
            sent.append(req)
        if clock.now + every < seconds:
            clock.call_later(every, send, flow, n, every)

    for flow, (n, every) in flows.items():
        clock.call_later(0, send, flow, n, every)
    clock.run(until=seconds + 20)
    return sent


def test_fair_queuing_keeps_a_flood_to_what_the_others_leave() -> None:
    clock = Clock()
    qs = QueueSet(clock, "t", concurrency_limit=4, queues=16, hand_size=2, queue_length_limit=10)
    flows = {"flood": (10, 0.001), "b": (1, 0.02), "c": (1, 0.02), "d": (1, 0.02)}
    sent = _drive(qs, clock, flows, seconds=1.0)
    done = Counter(r.flow for r in sent if r.finished is not None)
    rejected = Counter(r.flow for r in sent if r.outcome)
    # b, c and d ask for 0.5 seat-seconds each of 4: all of it is served, none refused ...
    assert all(rejected[f] == 0 and done[f] == 50 for f in "bcd")
    # ... and they barely wait, while the flood's requests queue and are refused.
    waits = [r.wait for r in sent if r.flow != "flood" and r.wait is not None]
    assert max(waits) <= 0.02
    assert rejected["flood"] > 9000 and qs.rejected["queue-full"] == rejected["flood"]
    # in that second the flood gets the rest of the seats: 4 seat-seconds less the others' 1.5
    flood_first_second = sum(1 for r in sent if r.flow == "flood" and r.dispatched is not None
                             and r.dispatched < 1.0)
    assert 2.3 <= flood_first_second * 0.01 <= 2.5 + 0.04
    assert qs.seats_in_use == 0 and qs.requests_waiting == 0 and qs.requests_executing == 0


def test_without_queues_a_level_rejects_what_does_not_fit() -> None:
    clock = Clock()
    qs = QueueSet(clock, "catch-all", concurrency_limit=3)
    results = []
    for _ in range(5):
        req = QueuedRequest("x", WorkEstimate(), 0.0)
        results.append(qs.start_request(req, 0))
        qs.set_service(req, 1.0)
    assert results == [True, True, True, False, False]
    assert qs.rejected == {"concurrency-limit": 2}
    wide = QueuedRequest("x", WorkEstimate(initial_seats=7), 0.0)
    assert not qs.start_request(wide, 0)     # 3 seats busy: a 7-seat request waits for none
    clock.run(until=2.0)
    assert qs.start_request(wide, 0)         # idle: a request wider than the level runs alone


def test_a_request_waiting_past_its_limit_leaves_the_queue() -> None:
    clock = Clock()
    qs = QueueSet(clock, "t", concurrency_limit=1, queues=4, hand_size=1, queue_length_limit=5,
                  wait_limit=15.0)
    first, second = QueuedRequest("a", WorkEstimate(), 0.0), QueuedRequest("a", WorkEstimate(), 0.0)
    assert qs.start_request(first, 1) and qs.start_request(second, 1)
    qs.set_service(first, 20.0)
    qs.set_service(second, 1.0)
    clock.run(until=16.0)
    assert second.outcome == "time-out" and second.dispatched is None
    assert qs.rejected == {"time-out": 1} and qs.requests_waiting == 0


def _flooded(seed: int = 0, seconds: float = 1.5) -> tuple[Cluster, object]:
    c = Cluster(nodes=3, seed=seed)
    c.apiserver.enable_priority_and_fairness(server_concurrency_limit=25)
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "target"}})
    c.run(1)
    flood = c.faults.flood("noisy-tenant", per_second=4000, seconds=seconds, verb="get",
                           resource="configmaps", name="target")
    polite = c.faults.flood("alice", per_second=50, seconds=seconds, verb="get",
                            resource="configmaps", name="target")
    c.run(seconds + 12)  # past the kubelets' next lease renewals
    return c, (flood, polite)


def test_a_flood_cannot_starve_node_heartbeats() -> None:
    c, (flood, polite) = _flooded()
    fc = c.apiserver.flowcontrol
    assert fc is not None
    assert flood.rejected > 500                               # type: ignore[attr-defined]
    assert polite.rejected == 0 and polite.answered == polite.sent  # type: ignore[attr-defined]
    renewals = [r for r in fc.completed if r.what.startswith("update leases/kube-node-lease")]
    assert renewals and all(r.priority_level == "node-high" and not r.outcome for r in renewals)
    assert max(r.wait or 0.0 for r in renewals) < 0.01
    rejected = [a for a in c.apiserver.audit if a.code == 429]
    assert {a.user for a in rejected} == {"noisy-tenant"}
    assert {a.stage for a in rejected} == {"priority-and-fairness"}
    assert all(a.priority_level == "global-default" for a in rejected)
    assert all(lease.get("spec", {}).get("renewTime") for lease in
               c.client.list("leases", "kube-node-lease")["items"])


def test_a_rejection_is_429_with_retry_after_that_grows_while_drops_go_on() -> None:
    c = Cluster(nodes=1)
    c.apiserver.enable_priority_and_fairness(server_concurrency_limit=5)  # global-default: 1 seat
    client = c.client_for("noisy")
    c.faults.flood("noisy", per_second=2000, seconds=3, verb="get", resource="configmaps",
                   name="target")
    c.run(2.8)
    with pytest.raises(ApiError) as err:
        for _ in range(1000):
            client.get("configmaps", "missing")
    assert err.value.code == 429 and err.value.reason == "TooManyRequests"
    assert err.value.message == "Too many requests, please try again later."
    assert err.value.details["retryAfterSeconds"] > 1   # doubled at least once (1, 2, 4, ...)


def test_the_same_seed_gives_the_same_trace_with_priority_and_fairness() -> None:
    one, _ = _flooded(seed=3, seconds=0.5)
    two, _ = _flooded(seed=3, seconds=0.5)
    assert one.trace.text() == two.trace.text()
    fc1, fc2 = one.apiserver.flowcontrol, two.apiserver.flowcontrol
    assert fc1 is not None and fc2 is not None
    assert [(r.flow, r.dispatched, r.finished, r.outcome) for r in fc1.completed] == \
        [(r.flow, r.dispatched, r.finished, r.outcome) for r in fc2.completed]


def test_off_by_default_and_nothing_changes() -> None:
    c = Cluster(nodes=1)
    c.run(1)
    assert c.apiserver.flowcontrol is None
    assert c.client.list("flowschemas")["items"] == []
    assert all(a.flow_schema == "" and "priority-and-fairness" not in a.stages
               for a in c.apiserver.audit)


def test_a_restarted_server_starts_with_empty_queues_and_ensures_its_objects() -> None:
    c = Cluster(nodes=1, apf=True)
    c.run(1)
    c.client.delete("flowschemas", "service-accounts", "")
    c.apiserver.stop()
    c.apiserver.start()
    fc = c.apiserver.flowcontrol
    assert fc is not None and all(r["seatsInUse"] == 0 for r in fc.snapshot())
    assert c.client.get("flowschemas", "service-accounts", "")["metadata"]["name"]
