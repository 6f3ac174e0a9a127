"""Checks for notebook 09's exercises: the EndpointSlice reconcile (9.1) and the KUBE-SVC
probability ladder (9.2).

9.1: the learner's function is first asked about hand-made pods (conditions, 100 per slice,
churn), then becomes the reconciler of kubelab's EndpointSlice controller in a running cluster
that churns pods while watch events are dropped and the controller manager crashes; its
writes are held to a budget set by kubelab's own reconciler in the same seeded story.
9.2: the learner's rules replace the ladder in kube-proxy's rendered table, and many seeded
requests are walked through the node's rules: each endpoint must get its share.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from typing import Any

from kubelab.client.component import ComponentContext
from kubelab.controllers import ControllerManager
from kubelab.controllers.endpointslice import EndpointSliceController, Plan, Reconciler
from kubelab.controllers.endpointslice import reconcile as reference_reconcile
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.proxy.iptables import IPTables, Packet, port_proto_hash, service_port_endpoint_chain_name
from kubelab.proxy.jump_chains import ensure_jump_chains
from kubelab.proxy.proxier import Endpoint, ServicePort, sync_proxy_rules

__all__: list[str] = []

SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "web", "namespace": "default", "uid": "svc-uid"},
    "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.9",
             "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}}


def _pod(i: int, ready: bool = True, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"web-{i:04d}", "namespace": "default", "uid": f"uid-{i}",
                            "labels": {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:01:00Z"
    return {"metadata": meta, "spec": {"nodeName": "node-1"},
            "status": {"phase": "Running", "podIP": f"10.244.{i // 250}.{i % 250 + 1}",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def _plan(ctx: CheckContext, pods: list[dict[str, Any]], slices: list[dict[str, Any]],
          max_endpoints: int = 100) -> dict[str, list[dict[str, Any]]]:
    plan = ctx.learner(copy.deepcopy(SERVICE), pods, slices, max_endpoints)
    if not isinstance(plan, dict) or not all(isinstance(plan.get(k, []), list)
                                             for k in ("create", "update", "delete")):
        ctx.fail("reconcile_endpoint_slices must return a dict of lists",
                 expected='{"create": [...], "update": [...], "delete": [...]}', got=repr(plan)[:200])
    return {k: list(plan.get(k) or []) for k in ("create", "update", "delete")}


def _named(slices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the API server makes of created slices: a name, a uid."""
    out = copy.deepcopy(slices)
    for i, s in enumerate(out):
        s["metadata"]["name"] = s["metadata"].get("name") or f"web-s{i:03d}"
        s["metadata"]["uid"] = s["metadata"]["name"]
    return out


def _writes(plan: dict[str, list[Any]]) -> int:
    return sum(len(v) for v in plan.values())


@check("9.1", points=3, hint="ready is the Ready condition and not terminating; serving is the "
       "Ready condition alone; terminating is deletionTimestamp set. A pod without an IP is left out.")
def endpoints_carry_the_conditions(ctx: CheckContext) -> None:
    pods = [_pod(1), _pod(2, ready=False), _pod(3, deleting=True), _pod(4)]
    pods[3]["status"]["podIP"] = ""
    plan = _plan(ctx, pods, [])
    slices = plan["create"]
    if len(slices) != 1:
        ctx.fail("3 endpoints fit in one new slice", expected="1 slice to create", got=f"{len(slices)}")
    s = slices[0]
    labels = s.get("metadata", {}).get("labels") or {}
    ctx.expect_equal(labels.get("kubernetes.io/service-name"), "web", "the slice's service-name label",
                     unit="labels[kubernetes.io/service-name] =")
    ctx.expect_equal(labels.get("endpointslice.kubernetes.io/managed-by"), "endpointslice-controller.k8s.io",
                     "the slice's managed-by label", unit="labels[endpointslice.kubernetes.io/managed-by] =")
    ctx.expect_equal(s.get("addressType"), "IPv4", "the address type", unit="addressType =")
    ctx.expect_equal([p.get("port") for p in s.get("ports") or []], [8080], "the slice's ports (targetPort)",
                     unit="ports[].port =")
    got = {e["targetRef"]["name"]: e.get("conditions") for e in s.get("endpoints") or []}
    expected = {"web-0001": {"ready": True, "serving": True, "terminating": False},
                "web-0002": {"ready": False, "serving": False, "terminating": False},
                "web-0003": {"ready": False, "serving": True, "terminating": True}}
    ctx.expect_equal(got, expected, "each pod's endpoint conditions", unit="conditions")


@check("9.1", points=2, hint="Fill slices up to max_endpoints; every pod appears in exactly one slice.")
def at_most_max_endpoints_per_slice(ctx: CheckContext) -> None:
    for count, limit in ((250, 100), (23, 10)):
        plan = _plan(ctx, [_pod(i) for i in range(count)], [], limit)
        sizes = sorted(len(s.get("endpoints") or []) for s in plan["create"])
        addresses = [e["addresses"][0] for s in plan["create"] for e in s.get("endpoints") or []]
        if max(sizes, default=0) > limit or len(addresses) != count or len(set(addresses)) != count:
            ctx.fail(f"{count} pods with max_endpoints={limit}",
                     expected=f"{-(-count // limit)} slices of at most {limit}, {count} addresses once each",
                     got=f"slice sizes {sizes}, {len(set(addresses))} distinct of {len(addresses)} addresses")


@check("9.1", points=2, hint="Compare with what the slices hold: write nothing when nothing "
       "changed, update only the slice whose endpoint changed, keep one empty placeholder.")
def writes_as_little_as_it_can(ctx: CheckContext) -> None:
    pods = [_pod(i) for i in range(150)]
    slices = _named(_plan(ctx, pods, [])["create"])
    ctx.expect_equal(_writes(_plan(ctx, pods, slices)), 0, "nothing changed", unit="write(s)")
    changed = [_pod(i, ready=i != 7) for i in range(150)]
    plan = _plan(ctx, changed, slices)
    ctx.expect_equal((len(plan["create"]), len(plan["update"]), len(plan["delete"])), (0, 1, 0),
                     "one pod turned unready", unit="(create, update, delete)")
    empty = _plan(ctx, [], [])
    ctx.expect_equal(len(empty["create"]), 1, "a Service with no pods", unit="placeholder slice(s)")
    ctx.expect_equal(_writes(_plan(ctx, [], _named(empty["create"]))), 0,
                     "the placeholder is kept as it is", unit="write(s)")


def _story(c: Any) -> None:
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                          {"name": "web", "image": "nginx:1.27"}]}}}})
    c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
             "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    c.run(20)
    c.faults.drop_watch_events(0.3, user="system:kube-controller-manager")
    for replicas in (7, 2, 5):
        c.kubectl(f"scale deployment web --replicas={replicas}")
        c.run(10)
    c.faults.crash("controller-manager")
    c.kubectl("scale deployment web --replicas=3")
    c.run(5)
    c.faults.restart("controller-manager")
    c.faults.heal_watch_events()
    c.run(40)


def _as_reconciler(fn: Any) -> Reconciler:
    """The learner's reconcile_endpoint_slices answers with a dict {"create", "update",
    "delete"} (data crosses the sandbox); the controller's reconciler answers with a Plan."""
    def reconcile(service: dict[str, Any], pods: list[dict[str, Any]],
                  slices: list[dict[str, Any]], max_endpoints: int) -> Plan:
        plan = fn(service, pods, slices, max_endpoints)
        return Plan(list(plan.get("create") or []), list(plan.get("update") or []),
                    list(plan.get("delete") or []))
    return reconcile


def _cluster_with(ctx: CheckContext, fn: Reconciler) -> Any:
    def build(cctx: ComponentContext) -> ControllerManager:
        manager = ControllerManager(cctx, ["*", f"-{EndpointSliceController.NAME}"])
        manager.controllers[EndpointSliceController.NAME] = EndpointSliceController(
            cctx, manager.informers, reconcile_fn=fn)
        return manager
    # Free syncs, no client limiter (issue 29's costs off): every event is its own sync, so a
    # reconcile that rewrites everything shows in the write count the budget compares.
    return ctx.cluster(nodes=2, components=["scheduler", "kubelet", "controller-manager"],
                       replace={"controller-manager": build}, sync_cost=0,
                       client_connection={"controller-manager": {"qps": -1}})


def _slice_writes(c: Any) -> int:
    return sum(1 for r in c.apiserver.audit if r.resource == "endpointslices"
               and r.verb in ("create", "update", "patch", "delete"))


@check("9.1", points=3, hint="Work from the lists you are given every time "
       "(level-triggered): dropped events and a crash only mean you are called again later.")
def converges_under_churn_with_a_write_budget(ctx: CheckContext) -> None:
    c = _cluster_with(ctx, _as_reconciler(ctx.learner))
    _story(c)
    ready = sorted(p["status"]["podIP"] for p in c.get("pods")
                   if not p["metadata"].get("deletionTimestamp") and p.get("status", {}).get("podIP"))
    listed = sorted(e["addresses"][0] for s in c.get("endpointslices") for e in s.get("endpoints") or []
                    if (e.get("conditions") or {}).get("ready"))
    ctx.expect_equal(listed, ready, "the slices list the ready pods once the cluster settles",
                     unit="ready addresses")
    reference = _cluster_with(ctx, reference_reconcile)
    _story(reference)
    budget = int(_slice_writes(reference) * 1.5) + 3
    writes = _slice_writes(c)
    if writes > budget:
        ctx.fail("too many EndpointSlice writes for this story",
                 expected=f"at most {budget} writes (kubelab's reconciler: {_slice_writes(reference)})",
                 got=f"{writes} writes")


# ------------------------------------------------------------------ 9.2

SVC = ServicePort("default/web:http", "tcp", "10.96.0.20", 80)


def _endpoints(n: int) -> list[Endpoint]:
    return [Endpoint(f"10.244.{1 + i % 3}.{i + 2}", 8080) for i in range(n)]


def _learner_lines(ctx: CheckContext, n: int) -> tuple[str, list[str]]:
    chain = f"KUBE-SVC-{port_proto_hash(SVC.name, SVC.protocol)}"
    pairs = [(str(e), service_port_endpoint_chain_name(SVC.name, SVC.protocol, str(e)))
             for e in _endpoints(n)]
    lines = ctx.learner(SVC.name, chain, pairs)
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        ctx.fail("service_to_endpoint_rules must return a list of str", got=repr(lines)[:200])
    return chain, lines


def _table_with(chain: str, lines: list[str], n: int) -> IPTables:
    text = sync_proxy_rules({SVC.name: SVC}, {SVC.name: _endpoints(n)}, "node-1")
    kept = [x for x in text.splitlines() if not (x.startswith(f"-A {chain} ") and "KUBE-SEP-" in x)]
    at = max(i for i, x in enumerate(kept) if x.startswith(f"-A {chain} ")) + 1
    table = IPTables("node-1", "172.18.0.2")
    ensure_jump_chains(table)
    table.restore("\n".join([*kept[:at], *lines, *kept[at:]]) + "\n", 0.0)
    return table


@check("9.2", points=3, hint="One endpoint: one rule and no -m statistic. None: no rules. Each "
       "line starts with -A <chain> and jumps (-j) to the endpoint's KUBE-SEP chain.")
def one_rule_per_endpoint(ctx: CheckContext) -> None:
    chain, lines = _learner_lines(ctx, 0)
    ctx.expect_equal(lines, [], "no endpoints", unit="rules")
    chain, lines = _learner_lines(ctx, 1)
    ctx.expect_equal(len(lines), 1, "one endpoint", unit="rule(s)")
    if "statistic" in lines[0] or not lines[0].startswith(f"-A {chain} ") or "-j KUBE-SEP-" not in lines[0]:
        ctx.fail("the only endpoint's rule always matches", expected=f"-A {chain} ... -j KUBE-SEP-...",
                 got=lines[0])
    chain, lines = _learner_lines(ctx, 4)
    ctx.expect_equal(len(lines), 4, "four endpoints", unit="rule(s)")


@check("9.2", points=5, hint="Rule i of n must match 1/(n - i) of the packets that reach it, not 1/n.")
def every_endpoint_gets_an_equal_share(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    for n in (2, 3, 5):
        chain, lines = _learner_lines(ctx, n)
        table = _table_with(chain, lines, n)
        requests = 2000 * n
        hits = Counter(table.walk(Packet("10.244.9.9", SVC.cluster_ip, SVC.port), rand, 0.0).pod_ip
                       for _ in range(requests))
        shares = {ip: round(hits.get(ip, 0) / requests, 3) for ip in (e.ip for e in _endpoints(n))}
        if any(abs(share - 1 / n) > 0.15 / n for share in shares.values()):
            ctx.fail(f"{requests} requests over {n} endpoints", expected=f"about {1 / n:.3f} each",
                     got=", ".join(f"{ip}: {s}" for ip, s in shares.items()))


@check("9.2", points=2, hint='Print p as Go\'s %0.10f does: f"{p:0.10f}".')
def probabilities_are_printed_as_kube_proxy_does(ctx: CheckContext) -> None:
    _chain, lines = _learner_lines(ctx, 3)
    got = [x.split("--probability ", 1)[1].split()[0] if "--probability " in x else "" for x in lines]
    ctx.expect_equal(got, ["0.3333333333", "0.5000000000", ""], "the ladder's probabilities",
                     unit="--probability")
