"""Priority and fairness: which FlowSchema and priority level each request gets, the nominal
concurrency limits, and the seats the work estimators give."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.apiserver.flowcontrol.work_estimator import estimate_list, estimate_mutating


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(nodes=1, apf=True)
    c.run(1)
    return c


def _classify(server: APIServer, user: str, groups: list[str], request: Request) -> tuple[str, str]:
    token = f"token-classify-{user}"
    server.add_token(token, user, groups)
    request.token = token
    with contextlib.suppress(ApiError):  # a 403 or 404 comes after priority and fairness
        server.handle(request)
    record = server.audit[-1]
    assert record.user == user
    return record.flow_schema, record.priority_level


LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "x", "namespace": "kube-system"}, "spec": {}}
CASES = [
    ("admin", ["system:masters"], Request("list", "pods"), ("exempt", "exempt")),
    ("system:node:node-1", ["system:nodes"],
     Request("update", "leases", "kube-node-lease", "node-1", group="coordination.k8s.io",
             body=LEASE), ("system-node-high", "node-high")),
    ("system:node:node-1", ["system:nodes"],
     Request("patch", "nodes", name="node-1", subresource="status", body={},
             options={"patchType": "merge"}), ("system-node-high", "node-high")),
    ("system:node:node-1", ["system:nodes"], Request("list", "pods", "default"),
     ("system-nodes", "system")),
    ("system:kube-scheduler", [], Request("get", "leases", "kube-system", "kube-scheduler",
                                          group="coordination.k8s.io"),
     ("system-leader-election", "leader-election")),
    ("system:kube-scheduler", [], Request("list", "pods"), ("kube-scheduler", "workload-high")),
    ("system:kube-controller-manager", [], Request("list", "replicasets", "default",
                                                   group="apps"),
     ("kube-controller-manager", "workload-high")),
    # the leader-election rule has no patch: the controller manager's patch falls through
    ("system:kube-controller-manager", [], Request(
        "patch", "leases", "kube-system", "kcm", group="coordination.k8s.io", body={},
        options={"patchType": "merge"}), ("kube-controller-manager", "workload-high")),
    ("system:serviceaccount:kube-system:ctrl", ["system:serviceaccounts"],
     Request("list", "pods"), ("kube-system-service-accounts", "workload-high")),
    ("system:serviceaccount:default:app", ["system:serviceaccounts"], Request("list", "pods"),
     ("service-accounts", "workload-low")),
    ("bob", ["devs"], Request("list", "pods", "default"), ("global-default", "global-default")),
]


@pytest.mark.parametrize(("user", "groups", "request_", "expected"), CASES,
                         ids=[f"{c[0]}-{c[2].verb}-{c[2].resource}" for c in CASES])
def test_classification_follows_the_bootstrap_flow_schemas(
        cluster: Cluster, user: str, groups: list[str], request_: Request,
        expected: tuple[str, str]) -> None:
    assert _classify(cluster.apiserver, user, groups, request_) == expected


def test_anonymous_requests_are_global_default_and_distinguished_by_user(cluster: Cluster) -> None:
    server = cluster.apiserver
    with pytest.raises(ApiError):
        server.handle(Request("list", "pods", "default"))
    assert (server.audit[-1].flow_schema, server.audit[-1].priority_level) == \
        ("global-default", "global-default")
    assert server.flowcontrol is not None and server.flowcontrol.last is not None
    assert server.flowcontrol.last.distinguisher == "system:anonymous"


def test_by_namespace_distinguishes_the_controller_managers_flows(cluster: Cluster) -> None:
    fc = cluster.apiserver.flowcontrol
    assert fc is not None
    _classify(cluster.apiserver, "system:kube-controller-manager", [],
              Request("list", "pods", "team-a"))
    assert fc.last is not None and fc.last.distinguisher == "team-a"
    _classify(cluster.apiserver, "system:kube-controller-manager", [],
              Request("get", "namespaces", name="team-b"))
    assert fc.last is not None and fc.last.distinguisher == "team-b"  # a namespace is its own


def test_nominal_concurrency_is_shared_out_of_600_by_shares(cluster: Cluster) -> None:
    fc = cluster.apiserver.flowcontrol
    assert fc is not None
    table = {r["priorityLevel"]: (r["nominalCL"], r["maxSeats"]) for r in fc.snapshot()}
    # ceil(600 x shares / 245), and max(1, min(ceil(0.15 x CL), CL / handSize)), as upstream.
    assert table == {"catch-all": (13, 0), "exempt": (0, 0), "global-default": (49, 8),
                     "leader-election": (25, 4), "node-high": (98, 15), "system": (74, 12),
                     "workload-high": (98, 15), "workload-low": (245, 37)}


def test_a_new_priority_level_takes_its_share(cluster: Cluster) -> None:
    c = Cluster(nodes=1, apf=True)
    c.apply({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
             "metadata": {"name": "tenants"},
             "spec": {"type": "Limited", "limited": {
                 "nominalConcurrencyShares": 55,
                 "limitResponse": {"type": "Queue", "queuing": {"queues": 16}}}}})
    c.run(0.1)
    fc = c.apiserver.flowcontrol
    assert fc is not None
    table = {r["priorityLevel"]: r["nominalCL"] for r in fc.snapshot()}
    assert table["tenants"] == 110 and table["global-default"] == 40  # ceil(600 x 20 / 300)
    pl = c.client.get("prioritylevelconfigurations", "tenants", "")
    # v1 defaults: lendablePercent 0, handSize 8, queueLengthLimit 50
    assert pl["spec"]["limited"]["lendablePercent"] == 0
    assert pl["spec"]["limited"]["limitResponse"]["queuing"] == {
        "queues": 16, "handSize": 8, "queueLengthLimit": 50}


def test_list_seats_follow_the_memory_a_list_loads() -> None:
    def seats(req: Request, count: int, size: int, max_seats: int = 0) -> int:
        return estimate_list(req, count, size, max_seats).initial_seats

    plain = Request("list", "pods")
    assert seats(plain, 1000, 2000) == 10             # from the cache: at most 1 MB
    assert seats(plain, 1000, 2000, 8) == 8           # and the level's max seats
    assert seats(plain, 0, 0) == 1                    # never zero
    paged = Request("list", "pods", limit=500, continue_token="abc")
    assert seats(paged, 1000, 2000) == 10             # from etcd: 500 x 2000 / 100,000
    assert seats(paged, 10_000, 5000) == 25
    exact = Request("list", "pods", limit=500, resource_version="42", label_selector="app=x")
    assert seats(exact, 10_000, 5000) == 100          # max(500, 10,000 / 2) objects: the cap
    single = Request("list", "pods", field_selector="metadata.name=web")
    assert seats(single, 10_000, 5000) == 1


def test_mutating_seats_follow_the_watchers() -> None:
    write = Request("update", "pods", "default", "web")
    assert estimate_mutating(write, 9, 0).final_seats == 0      # fewer than 10: nothing more
    few = estimate_mutating(write, 25, 0)
    assert (few.initial_seats, few.final_seats) == (1, 3)
    assert few.additional_latency == pytest.approx(0.005)       # 3 seats x 5 ms, on 3 seats
    many = estimate_mutating(write, 250, 0)
    assert (many.final_seats, many.max_seats) == (10, 10)      # capped at 10 ...
    assert many.additional_latency == pytest.approx(0.0125)     # ... so held longer: 25 x 5 ms / 10
    token = Request("create", "serviceaccounts", "default", "app", subresource="token")
    assert estimate_mutating(token, 500, 0).final_seats == 0


def test_a_list_is_priced_at_the_polled_object_count() -> None:
    c = Cluster(nodes=0, components=[], apf=True)
    fc = c.apiserver.flowcontrol
    assert fc is not None
    bob = c.client_for("bob", ["system:masters"])  # exempt: counted, never limited
    bob.list("configmaps", "default")              # the first poll: no ConfigMaps yet
    for i in range(300):
        c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"},
                         "data": {"blob": "x" * 2000}})
    alice = c.client_for("alice")
    c.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": "alice-views"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]})

    def seats() -> int:
        alice.list("configmaps", "default")
        c.run(0.1)
        return next(r for r in reversed(fc.completed) if r.user == "alice").estimate.initial_seats

    assert seats() == 1                # polled a minute ago: still priced at 0 objects
    c.run(60)
    assert seats() == 7                # 300 x ~2.2 kB from the watch cache, one seat per 100 kB
    last = next(r for r in reversed(fc.completed) if r.user == "alice")
    assert last.service == pytest.approx(0.001 + 0.00001 * 300)  # the cost model: 300 items
    assert last.finished == pytest.approx(last.arrival + last.service)  # it never waited
    fc.tracker.period = 0.0            # --etcd-count-metric-poll-period as small as it goes
    for i in range(300, 600):
        c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"},
                         "data": {"blob": "x" * 2000}})
    assert seats() == 8                # 13 by the bytes, global-default's max seats is 8


def test_the_configuration_is_read_through_listers_the_watch_cache_feeds() -> None:
    """configController reads FlowSchemas through an informer: a schema created through
    apiserver-1 reaches apiserver-2's lister with the watch event, not before; the three creates
    are digested together, and adds while a sync waits fold into it (configQueue's one key)."""
    c = Cluster(nodes=1, seed=0, replicas={"apiserver": 2}, apf=True)
    c.run(1)
    first, second = c.apiservers
    fc = second.flowcontrol
    assert fc is not None and first.flowcontrol is not None
    _classify(second, "bob", [], Request("list", "pods", "default"))  # digested now
    syncs: list[int] = []
    digest_config_objects = fc.digest_config_objects
    fc.digest_config_objects = lambda pls, fss: (  # type: ignore[method-assign]
        syncs.append(len(fss)), digest_config_objects(pls, fss))[1]
    for name, precedence in (("bob-1", 700), ("bob-2", 600), ("bob-3", 500)):
        obj = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
               "metadata": {"name": name},
               "spec": {"priorityLevelConfiguration": {"name": "workload-low"},
                        "matchingPrecedence": precedence,
                        "rules": [{"subjects": [{"kind": "User", "user": {"name": "bob"}}],
                                   "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                      "resources": ["*"], "namespaces": ["*"]}]}]}}
        first.handle(Request("create", "flowschemas", group="flowcontrol.apiserver.k8s.io",
                             body=obj, token=first.token_for("admin")))
    assert fc.fs_lister.get("bob-3") is None  # the watch event has not come yet
    c.run(0.1)
    assert fc.fs_lister.get("bob-3") is not None and syncs[0] == len(fc.fs_lister.list())
    before = len(syncs)
    fc.config_queue_add()
    fc.config_queue_add()
    c.run(0.1)
    assert len(syncs) == before + 1
    assert _classify(second, "bob", [], Request("list", "pods", "default")) == \
        ("bob-3", "workload-low")


# k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go at kubernetes-1.34.0, transcribed:
# every level (name, shares, lendablePercent, queues, handSize, queueLengthLimit; 0 queues:
# Reject) and every schema (name, level, precedence, distinguisher, subjects as kind:name).
UPSTREAM_LEVELS = {
    "catch-all": (5, 0, 0, 0, 0), "system": (30, 33, 64, 6, 50), "node-high": (40, 25, 64, 6, 50),
    "leader-election": (10, 0, 16, 4, 50), "workload-high": (40, 50, 128, 6, 50),
    "workload-low": (100, 90, 128, 6, 50), "global-default": (20, 50, 128, 6, 50),
}
EVERYONE = ("Group:system:unauthenticated", "Group:system:authenticated")
UPSTREAM_SCHEMAS = {
    "exempt": ("exempt", 1, "", ("Group:system:masters",)),
    "catch-all": ("catch-all", 10000, "ByUser", EVERYONE),
    "system-nodes": ("system", 500, "ByUser", ("Group:system:nodes",)),
    "system-node-high": ("node-high", 400, "ByUser", ("Group:system:nodes",)),
    "probes": ("exempt", 2, "", EVERYONE),
    "system-leader-election": ("leader-election", 100, "ByUser", (
        "User:system:kube-controller-manager", "User:system:kube-scheduler",
        "ServiceAccount:kube-system/*")),
    "kube-controller-manager": ("workload-high", 800, "ByNamespace",
                                ("User:system:kube-controller-manager",)),
    "kube-scheduler": ("workload-high", 800, "ByNamespace", ("User:system:kube-scheduler",)),
    "kube-system-service-accounts": ("workload-high", 900, "ByNamespace", ("ServiceAccount:kube-system/*",)),
    "service-accounts": ("workload-low", 9000, "ByUser", ("Group:system:serviceaccounts",)),
    "global-default": ("global-default", 9900, "ByUser", EVERYONE),
}


def _subject(s: dict[str, Any]) -> str:
    if s["kind"] == "ServiceAccount":
        return f"ServiceAccount:{s['serviceAccount']['namespace']}/{s['serviceAccount']['name']}"
    return f"{s['kind']}:{s[s['kind'].lower()]['name']}"


def test_the_bootstrap_configuration_is_upstreams() -> None:
    # 1.34 dropped endpoint-controller and workload-leader-election (kubernetes commit
    # 2800c16c, "Remove FlowSchemas handling non-leases-backed leader election").
    c = Cluster(nodes=0, components=[], apf=True)
    levels, schemas = {}, {}
    for pl in c.client.list("prioritylevelconfigurations")["items"]:
        if pl["spec"]["type"] == "Exempt":
            assert pl["metadata"]["name"] == "exempt"
            assert pl["spec"]["exempt"] == {"nominalConcurrencyShares": 0, "lendablePercent": 0}
            continue
        limited = pl["spec"]["limited"]
        queuing = limited["limitResponse"].get("queuing", {})
        levels[pl["metadata"]["name"]] = (limited["nominalConcurrencyShares"], limited["lendablePercent"],
                                          queuing.get("queues", 0), queuing.get("handSize", 0),
                                          queuing.get("queueLengthLimit", 0))
    for fs in c.client.list("flowschemas")["items"]:
        spec = fs["spec"]
        assert len(spec["rules"]) == 1 and fs["metadata"]["annotations"] == {
            "apf.kubernetes.io/autoupdate-spec": "true"}
        schemas[fs["metadata"]["name"]] = (
            spec["priorityLevelConfiguration"]["name"], spec["matchingPrecedence"],
            (spec.get("distinguisherMethod") or {}).get("type", ""),
            tuple(_subject(s) for s in spec["rules"][0]["subjects"]))
    assert levels == UPSTREAM_LEVELS
    assert schemas == UPSTREAM_SCHEMAS
