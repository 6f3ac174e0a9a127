"""Deleting a CRD: the customresourcecleanup finalizer deletes its objects first
(pkg/registry/customresourcedefinition/etcd.go, pkg/controller/finalizer/crd_finalizer.go)."""

from __future__ import annotations

from typing import Any

import pytest
from test_apiserver_subresources import CRD, widget
from test_apiserver_support import Env

GROUP = "apiextensions.k8s.io"
NAME = "widgets.example.com"


@pytest.fixture
def env() -> Env:
    env = Env()
    env.create("customresourcedefinitions", CRD, namespace="", group=GROUP)
    env.create("widgets", widget("w1"), group="example.com")
    return env


def conditions(crd: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"])
            for c in crd["status"]["conditions"]}


def delete_crd(env: Env) -> dict[str, Any]:
    return env.req("delete", "customresourcedefinitions", "", NAME, group=GROUP)


def test_the_crd_terminates_until_its_objects_are_gone(env: Env) -> None:
    crd = delete_crd(env)
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert crd["metadata"]["deletionTimestamp"]
    assert conditions(crd)["Terminating"] == (
        "True", "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon")
    # Objects are still served, but no new one may be made.
    assert env.get("widgets", "w1", group="example.com")["metadata"]["name"] == "w1"
    err = env.error("create", "widgets", body=widget("w2"), group="example.com")
    assert (err.code, err.reason, err.message) == (
        405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating")
    env.settle()
    assert env.error("get", "customresourcedefinitions", "", NAME, group=GROUP).code == 404
    assert env.error("list", "widgets", group="example.com").code == 404
    assert not env.store.range("/registry/example.com/", prefix=True).kvs
    loopback = [(r.user, r.verb, r.resource, r.name, r.subresource) for r in env.server.audit
                if r.user == "system:apiserver" and r.resource != "namespaces" and
                r.verb != "create"]
    assert loopback == [
        ("system:apiserver", "delete", "widgets", "w1", ""),
        ("system:apiserver", "update", "customresourcedefinitions", NAME, ""),
        ("system:apiserver", "update", "customresourcedefinitions", NAME, "")]


def test_an_object_with_its_own_finalizer_holds_the_crd(env: Env) -> None:
    held = widget("held")
    held["metadata"]["finalizers"] = ["example.com/ledger"]
    env.create("widgets", held, group="example.com")
    delete_crd(env)
    env.settle()
    env.clock.run(until=env.clock.now + 5)
    crd = env.get("customresourcedefinitions", NAME, "", group=GROUP)
    assert conditions(crd)["Terminating"] == ("True", "InstanceDeletionInProgress",
                                              "CustomResource deletion is in progress")
    obj = env.get("widgets", "held", group="example.com")
    assert obj["metadata"]["deletionTimestamp"]
    assert env.error("get", "widgets", name="w1", group="example.com").code == 404
    obj["metadata"]["finalizers"] = []
    env.update("widgets", obj, group="example.com")
    env.clock.run(until=env.clock.now + 2)
    assert env.error("get", "customresourcedefinitions", "", NAME, group=GROUP).code == 404


def test_a_stopped_api_server_resumes_the_cleanup_when_it_starts(env: Env) -> None:
    delete_crd(env)
    env.server.stop()
    env.settle()
    env.server.start()
    assert env.get("widgets", "w1", group="example.com")
    env.settle()
    assert env.error("get", "customresourcedefinitions", "", NAME, group=GROUP).code == 404
