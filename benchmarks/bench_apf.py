"""API Priority and Fairness: filter decisions per second, and what they cost a request.

The same GETs of one ConfigMap by an ordinary user (global-default, ByUser; RBAC allows it)
with priority and fairness off and on, in one run: the ratio is the filter's cost. Then the
classification alone (FlowSchemas in matching order) and the queue set alone (admit and finish).
"""

from __future__ import annotations

import random

from benchmarks.common import Figure, rate
from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.apiserver.auth.authn import UserInfo
from kubelab.apiserver.flowcontrol import QueuedRequest, QueueSet, hash_flow_id
from kubelab.apiserver.flowcontrol.rule import RequestDigest
from kubelab.apiserver.flowcontrol.work_estimator import WorkEstimate
from kubelab.sim import Clock, Trace
from kubelab.store import Store

N = 5000


def _server(apf: bool) -> tuple[APIServer, Clock]:
    clock = Clock()
    trace = Trace(lambda: clock.now)
    trace.enabled = False
    server = APIServer(Store(clock, trace=trace), clock, random.Random(0), trace=trace)
    if apf:
        server.enable_priority_and_fairness()
    server.add_token("token-bob", "bob", [])
    admin = server.token_for("admin")
    server.handle(Request("create", "configmaps", "default", token=admin, body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}))
    server.handle(Request("create", "rolebindings", "default", group="rbac.authorization.k8s.io",
                          token=admin, body={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "bob-views"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}))
    return server, clock


def _gets(server: APIServer, clock: Clock) -> None:
    for i in range(N):
        server.handle(Request("get", "configmaps", "default", "cm", token="token-bob"))
        if i % 100 == 99:
            clock.run(until=clock.now + 1)  # let the seats go


def run() -> list[Figure]:
    off, on = _server(False), _server(True)
    rate_off = rate(N, lambda: _gets(*off))
    rate_on = rate(N, lambda: _gets(*on))
    fc = on[0].flowcontrol
    assert fc is not None and on[0].audit[-1].priority_level == "global-default"
    digest = RequestDigest(UserInfo("bob", ("system:authenticated",)), "get", "", "configmaps",
                           "", "default")
    classify = rate(N, lambda: [fc.classify(digest) for _ in range(N)])
    clock = Clock()
    qs = QueueSet(clock, "bench", 49, 128, 6, 50)

    def admit() -> None:
        for i in range(N):
            req = QueuedRequest("f", WorkEstimate(), clock.now)
            qs.start_request(req, hash_flow_id("fs", str(i % 50)))
            qs.set_service(req, 0.001)
            if i % 40 == 39:
                clock.run(until=clock.now + 0.01)

    queue = rate(N, admit)
    return [
        Figure("apf: GETs/s, priority and fairness off", rate_off, "req/s"),
        Figure("apf: GETs/s, priority and fairness on", rate_on, "req/s"),
        Figure("apf: cost of the filter (off / on)", rate_off / rate_on, "x"),
        Figure("apf: classifications/s (FlowSchemas in order)", classify, "ops/s"),
        Figure("apf: queue-set admissions/s (128 queues, hand 6)", queue, "ops/s"),
    ]
