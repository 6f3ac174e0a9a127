"""Client-side rate limits (kubelab/client/flowcontrol.py) and syncs that take virtual time
(kubelab/client/controller_loop.py): client-go's token bucket, tryThrottleWithInfo's log
text and rule, the worker that stays busy for its cost and its wait, and the Cluster's
per-component settings (issue 29)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.request import Request
from kubelab.client import Client, Controller
from kubelab.client.flowcontrol import ClientConnection, TokenBucketRateLimiter, go_duration
from kubelab.sim import Clock, Trace

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 60
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


class _API:
    """Answers every request with an empty object."""

    def __init__(self) -> None:
        self.sent: list[Request] = []

    def handle(self, request: Request) -> dict[str, Any]:
        self.sent.append(request)
        return {}

    def watch(self, request: Request, on_event: Any, on_close: Any = None) -> Any:
        self.sent.append(request)
        return None


# Go's time_test.go durationTests (all but the int64 maximum, which a float cannot hold).
@pytest.mark.parametrize(("text", "nanoseconds"), [
    ("0s", 0), ("1ns", 1), ("1.1µs", 1100), ("2.2ms", 2_200_000), ("3.3s", 3_300_000_000),
    ("4m5s", 245_000_000_000), ("4m5.001s", 245_001_000_000), ("5h6m7.001s", 18_367_001_000_000),
    ("8m0.000000001s", 480_000_000_001),
])
def test_go_duration_prints_as_time_duration_string(text: str, nanoseconds: int) -> None:
    assert go_duration(nanoseconds / 1e9) == text


def test_the_bucket_starts_full_then_each_token_comes_one_interval_later() -> None:
    clock = Clock()
    limiter = TokenBucketRateLimiter(clock, qps=2, burst=3)
    assert [limiter.wait() for _ in range(6)] == [0, 0, 0, 0.5, 1.0, 1.5]
    clock.run(until=10)  # the debt is paid and the bucket refills to its burst, no further
    assert limiter.tokens() == 3 and limiter.waits == 3 and limiter.waited == 3.0


@pytest.mark.parametrize(("connection", "expected"), [
    (ClientConnection(20, 30), (20, 30)),
    (ClientConnection(0, 0), (5, 10)),    # rest.RESTClientFor: 0 takes DefaultQPS/DefaultBurst
    (ClientConnection(-1, 10), None),     # a qps below 0: no limiter at all
])
def test_client_connection_builds_client_gos_limiter(connection: ClientConnection,
                                                     expected: tuple[int, int] | None) -> None:
    limiter = connection.rate_limiter(Clock())
    assert (None if limiter is None else (limiter.qps, limiter.burst)) == expected


def test_a_wait_over_one_second_is_logged_in_client_gos_words_at_most_once_a_second() -> None:
    clock, api = Clock(), _API()
    trace = Trace(lambda: clock.now)
    client = Client(api, "t", user_agent="kube-controller-manager",
                    rate_limiter=TokenBucketRateLimiter(clock, qps=1, burst=1), trace=trace)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}
    for _ in range(4):   # waits 0, 1 s (not longer than the threshold), 2 s, 3 s
        client.create(pod)
    logged = [r for r in trace if r.verb == "throttled"]
    assert [r.detail["message"] for r in logged] == [
        "Waited for 2s due to client-side throttling, not priority and fairness, request: "
        "POST:https://kube-apiserver:6443/api/v1/namespaces/default/pods"]  # the 3 s one: too soon
    assert len(api.sent) == 4 and client.throttled_until == 3.0  # sent at once, charged later
    clock.run(until=1.5)
    client.list("pods", "default", label_selector="app=web")  # waits 2.5 s; a second has passed
    assert [r for r in trace if r.verb == "throttled"][-1].detail["message"] == (
        "Waited for 2.5s due to client-side throttling, not priority and fairness, request: "
        "GET:https://kube-apiserver:6443/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")


def test_a_client_without_a_limiter_never_waits() -> None:
    client = Client(_API(), "t")
    for _ in range(100):
        client.get("pods", "p")
    assert client.throttled_until == 0 and client.waited == 0


def _controller(cost: float, limiter: TokenBucketRateLimiter | None, clock: Clock
                ) -> tuple[Controller, list[float]]:
    client = Client(_API(), "t", rate_limiter=limiter)
    synced: list[float] = []

    def sync(key: str) -> None:
        synced.append(clock.now)
        for _ in range(3):
            client.get("configmaps", key)

    controller = Controller("c", sync, clock, cost=cost, client=client)
    controller.run()
    return controller, synced


@pytest.mark.parametrize(("cost", "qps", "syncs"), [
    (0.0, None, [0.0, 0.1, 0.2, 0.3, 0.4]),  # free syncs: every event is its own sync
    (0.25, None, [0.0, 0.25, 0.5]),          # busy 0.25 s: events in between coalesce
    (0.0, 10.0, [0.0, 0.2, 0.5]),            # busy while its requests wait for tokens (burst 1)
])
def test_a_busy_worker_coalesces_the_events_that_arrive_meanwhile(
        cost: float, qps: float | None, syncs: list[float]) -> None:
    clock = Clock()
    limiter = TokenBucketRateLimiter(clock, qps, 1) if qps else None
    controller, synced = _controller(cost, limiter, clock)
    for i in range(5):  # the same key changes every 100 ms
        clock.call_at(i * 0.1, controller.queue.add, "cm")
    clock.run(until=5)
    assert [round(t, 6) for t in synced] == syncs


def test_cost_must_be_a_number_of_seconds() -> None:
    with pytest.raises(ValueError, match="cost must be a number of seconds >= 0, got -1"):
        Controller("c", lambda _k: None, Clock(), cost=-1)


def test_each_component_gets_its_component_configs_limit_and_each_controller_its_own() -> None:
    c = Cluster(nodes=1, client_connection={"controller-manager": {"qps": 100, "burst": 200}})
    assert c.components["scheduler"].ctx.client.rate_limiter.qps == 50
    assert c.components["kubelet/node-1"].ctx.client.rate_limiter.burst == 100
    cm = c.components["controller-manager"]
    rs, d = cm["replicaset-controller"], cm["deployment-controller"]
    assert (rs.client.rate_limiter.qps, rs.client.rate_limiter.burst) == (100, 200)
    assert rs.client.rate_limiter is not d.client.rate_limiter  # ClientOrDie: one per controller
    assert rs.controller.cost == 0.005 and rs.controller.workers == 5
    assert cm["garbage-collector-controller"].delete_controller.workers == 20
    assert cm["namespace-controller"].controller.workers == 10


@pytest.mark.parametrize(("arguments", "error", "message"), [
    ({"client_connection": {"etcd": {"qps": 1}}}, ValueError,
     "client_connection: unknown component 'etcd'; known: controller-manager, kube-proxy, kubelet, "
     "scheduler"),
    ({"client_connection": {"scheduler": {"qps": 1, "bust": 2}}}, ValueError,
     "client_connection['scheduler']: unknown field(s) ['bust']; known: qps, burst"),
    ({"client_connection": {"scheduler": 50}}, TypeError,
     "client_connection['scheduler'] must be a ClientConnection or a dict, got int 50"),
    ({"client_connection": {"scheduler": {"qps": "fast"}}}, TypeError,
     "qps must be a number, got str 'fast'"),
    ({"client_connection": {"scheduler": {"burst": -1}}}, ValueError,
     "burst must be an integer >= 0, got -1"),
    ({"sync_cost": -0.1}, ValueError, "sync_cost must be a finite number of seconds >= 0, got -0.1"),
    ({"sync_cost": "5ms"}, TypeError, "sync_cost must be a number of seconds, got str '5ms'"),
])
def test_wrong_limits_and_costs_are_refused_up_front(arguments: dict[str, Any], error: type,
                                                     message: str) -> None:
    with pytest.raises(error) as info:
        Cluster(nodes=0, components=[], **arguments)
    assert str(info.value) == message


def _replica_set_syncs(**arguments: Any) -> tuple[int, list[str]]:
    c = Cluster(nodes=2, hollow=True, **arguments)
    c.apply(DEPLOYMENT)
    c.run(20)
    assert len(c.get("pods")) == 60
    rs = c.components["controller-manager"]["replicaset-controller"].controller
    return rs.syncs, [r.detail["message"] for r in c.trace
                      if r.verb == "throttled" and r.component == "controller-manager"]


def test_throttled_creates_keep_the_replicaset_worker_busy_so_pod_events_coalesce() -> None:
    off = {n: {"qps": -1} for n in ("scheduler", "kubelet", "controller-manager", "kube-proxy")}
    free_syncs, free_log = _replica_set_syncs(client_connection=off, sync_cost=0)
    syncs, log = _replica_set_syncs()
    assert free_log == [] and syncs < free_syncs / 10
    # 60 creates at 20/30: the 51st waits (51 - 30) / 20 s, the first longer than a second.
    # (Before them, the shared informers' LISTs and WATCHes at start wait on the manager's own
    # bucket: those lines are GETs.)
    creates = [line for line in log if "request: POST:" in line]
    assert creates[0] == ("Waited for 1.05s due to client-side throttling, not priority and "
                          "fairness, request: POST:https://kube-apiserver:6443/api/v1/namespaces/"
                          "default/pods")
    assert all("request: GET:" in line for line in log[:log.index(creates[0])])
