"""kubelab.client.operator: the helpers against controller-runtime's and apimachinery's rules,
and the Operator loop's requeue semantics (pkg/internal/controller/controller.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.meta import rfc3339
from kubelab.client.component import ComponentContext
from kubelab.client.operator import (
    AlreadyOwnedError,
    Operator,
    Reconciler,
    Request,
    Result,
    TerminalError,
    add_finalizer,
    create_or_update,
    enqueue_request_for_owner,
    remove_finalizer,
    set_controller_reference,
    set_status_condition,
)
from kubelab.cluster import Cluster

Object = dict[str, Any]


def test_set_status_condition_moves_transition_time_only_on_status_change() -> None:
    conditions: list[Object] = []
    ready = {"type": "Ready", "status": "False", "reason": "Creating", "message": "m",
             "observedGeneration": 1}
    assert set_status_condition(conditions, ready, now=10)
    assert conditions[0]["lastTransitionTime"] == rfc3339(10)
    assert not set_status_condition(conditions, dict(ready), now=20)  # nothing changed
    assert set_status_condition(conditions, {**ready, "reason": "Waiting", "observedGeneration": 2}, now=30)
    assert conditions[0]["lastTransitionTime"] == rfc3339(10)  # same status: time kept
    assert (conditions[0]["reason"], conditions[0]["observedGeneration"]) == ("Waiting", 2)
    assert set_status_condition(conditions, {**ready, "status": "True"}, now=40)
    assert conditions[0]["lastTransitionTime"] == rfc3339(40)


def owner(uid: str = "u1", kind: str = "Website") -> Object:
    return {"apiVersion": "web.example.com/v1", "kind": kind,
            "metadata": {"name": "site", "namespace": "default", "uid": uid}}


def test_set_controller_reference_and_already_owned() -> None:
    child: Object = {"metadata": {"name": "c", "namespace": "default"}}
    set_controller_reference(owner(), child)
    set_controller_reference(owner(), child)  # idempotent
    assert child["metadata"]["ownerReferences"] == [{
        "apiVersion": "web.example.com/v1", "kind": "Website", "name": "site", "uid": "u1",
        "controller": True, "blockOwnerDeletion": True}]
    with pytest.raises(AlreadyOwnedError, match="Object default/c is already owned by another "
                                                "Website controller site"):
        set_controller_reference(owner("u2"), child)
    assert enqueue_request_for_owner("web.example.com/v2", "Website")(child) == [Request("default", "site")]
    assert enqueue_request_for_owner("other.io/v1", "Website")(child) == []


def test_finalizers_are_added_and_removed_once() -> None:
    obj: Object = {"metadata": {"name": "x"}}
    assert add_finalizer(obj, "a/b") and not add_finalizer(obj, "a/b")
    assert obj["metadata"]["finalizers"] == ["a/b"]
    assert remove_finalizer(obj, "a/b") and not remove_finalizer(obj, "a/b")


class Scripted(Reconciler):
    """Answers each reconcile from a script, and keeps a ConfigMap's data in sync."""

    def __init__(self, script: list[Any]) -> None:
        self.script, self.seen = script, []  # type: ignore[var-annotated]

    def reconcile(self, request: Request) -> Result | None:
        self.seen.append(self.clock.now)
        step = self.script.pop(0) if self.script else None
        if isinstance(step, Exception):
            raise step
        return step  # type: ignore[no-any-return]


def run_operator(script: list[Any], seconds: float) -> tuple[Cluster, Scripted, Operator]:
    c = Cluster(nodes=1, components=[])
    reconciler = Scripted(script)
    op = c.add_component("op", lambda ctx: Operator(ctx, reconciler, for_resource="configmaps"))
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})
    c.run(seconds)
    return c, reconciler, op


def test_requeue_after_and_errors_back_off() -> None:
    _, r, op = run_operator([Result(requeue_after=7), RuntimeError("boom"), RuntimeError("boom"), None], 20)
    first = r.seen[0]
    # requeue_after 7 s; then an error retries after 5 ms, the next after 10 ms (rate limited).
    assert [round(t - first, 3) for t in r.seen] == [0, 7, 7.005, 7.015]
    assert [rec.outcome for rec in op.records] == [
        "requeue after 7s", "error RuntimeError: requeued with back-off",
        "error RuntimeError: requeued with back-off", "done"]


def test_terminal_error_is_not_retried() -> None:
    _, r, op = run_operator([TerminalError("bad spec")], 30)
    assert len(r.seen) == 1 and op.records[0].outcome == "terminal error: bad spec"


def test_crash_loses_the_queue_and_restart_relists() -> None:
    c, r, _ = run_operator([Result(requeue_after=60)], 5)
    c.faults.crash("op")
    c.run(100)
    assert len(r.seen) == 1  # the requeue died with the process
    c.faults.restart("op")
    c.run(1)
    assert len(r.seen) == 2  # a new instance relisted and reconciled every object


class ConfigMapMirror(Reconciler):
    """Keeps ConfigMap `<name>-mirror` equal to `<name>` (owned), with create_or_update."""

    def reconcile(self, request: Request) -> Result | None:
        if request.name.endswith("-mirror"):
            return None
        source = self.cache.get("configmaps", request.name, request.namespace)
        if source is None:
            return None
        mirror: Object = {"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": request.name + "-mirror", "namespace": request.namespace}}

        def mutate(obj: Object) -> None:
            obj["data"] = dict(source.get("data") or {})
            set_controller_reference(source, obj)
        create_or_update(self.client, self.cache, "configmaps", mirror, mutate)
        return None


def test_owned_child_deleted_is_recreated_and_nothing_changed_sends_nothing() -> None:
    c = Cluster(nodes=1, components=["controller-manager"])
    op = c.add_component("mirror", lambda ctx: Operator(ctx, ConfigMapMirror(), for_resource="configmaps",
                                                         owns=["configmaps"]))
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                     "data": {"a": "1"}})
    c.run(2)
    assert c.get("configmaps", "cfg-mirror")["data"] == {"a": "1"}
    c.client.delete("configmaps", "cfg-mirror")
    c.run(2)
    assert c.get("configmaps", "cfg-mirror")["data"] == {"a": "1"}  # the owner was woken
    quiet = [rec for rec in op.records if rec.request.name == "cfg"][-1]
    assert quiet.requests == []  # the last look found nothing to change: no request at all
    creates = [rec for rec in op.records if any(r.startswith("create") for r in rec.requests)]
    assert [rec.requests for rec in creates] == [["create configmaps default/cfg-mirror"]] * 2
    c.client.delete("configmaps", "cfg")
    c.run(5)
    assert not c.exists("configmaps", "cfg-mirror")  # the garbage collector followed the owner


def test_the_operator_runs_unchanged_from_a_context() -> None:
    """The seam: an Operator needs only a ComponentContext (what kubelab.serve.connect gives)."""
    c = Cluster(nodes=1, components=[])
    client = c.client_for("alice", ["system:masters"])
    ctx = ComponentContext("by-hand", client, c.clock, c.rand, c.trace)
    op = Operator(ctx, ConfigMapMirror(), for_resource="configmaps")
    op.start()
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": "v"}})
    c.run(2)
    op.stop()
    assert c.get("configmaps", "x-mirror")["data"] == {"k": "v"}
