"""Several served versions, one storage version, conversion None: apiVersion is rewritten
(apiextensions-apiserver pkg/apiserver/conversion/nop_converter.go)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from test_apiserver_support import Env

from kubelab.api.request import Request
from kubelab.apiserver.apiextensions.versions import kube_version_key
from kubelab.serve import discovery

G = "example.com"


def version(name: str, *, served: bool = True, storage: bool = False,
            replicas: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "served": served, "storage": storage, "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": replicas or {"type": "integer"}}}}}}}


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.com"},
       "spec": {"group": G, "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [version("v1beta1", replicas={"type": "integer", "maximum": 3}),
                             version("v1", storage=True),
                             version("v1alpha1", served=False)]}}


def widget(v: str, name: str = "w", replicas: int = 1) -> dict[str, Any]:
    return {"apiVersion": f"{G}/{v}", "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"replicas": replicas}}


@pytest.fixture
def env() -> Env:
    env = Env()
    env.create("customresourcedefinitions", CRD, namespace="", group="apiextensions.k8s.io")
    return env


def at(env: Env, v: str, verb: str, **kwargs: Any) -> Any:
    return env.req(verb, "widgets", version=v, group=G, **kwargs)


def test_an_object_written_at_one_version_reads_at_every_served_version(env: Env) -> None:
    made = at(env, "v1beta1", "create", body=widget("v1beta1"))
    assert made["apiVersion"] == "example.com/v1beta1"
    stored = env.store.range("/registry/example.com/widgets/default/w").kvs[0].value
    assert json.loads(stored)["apiVersion"] == "example.com/v1"
    assert at(env, "v1", "get", name="w")["apiVersion"] == "example.com/v1"
    assert at(env, "v1beta1", "get", name="w")["apiVersion"] == "example.com/v1beta1"
    listing = at(env, "v1beta1", "list")
    assert [i["apiVersion"] for i in listing["items"]] == ["example.com/v1beta1"]
    assert listing["apiVersion"] == "example.com/v1beta1"
    assert env.error("get", "widgets", name="w", version="v1alpha1", group=G).code == 404


def test_each_version_has_its_own_schema(env: Env) -> None:
    err = env.error("create", "widgets", body=widget("v1beta1", replicas=5), version="v1beta1",
                    group=G)
    assert err.message.endswith("spec.replicas in body should be less than or equal to 3")
    at(env, "v1", "create", body=widget("v1", replicas=5))
    # The body must say the version it is sent to, as for any kind.
    err = env.error("create", "widgets", body=widget("v1", "x"), version="v1beta1", group=G)
    assert err.message == ("the API version in the data (example.com/v1) does not match the "
                           "expected API version (example.com/v1beta1)")


def test_updates_patches_and_watches_at_another_version(env: Env) -> None:
    at(env, "v1", "create", body=widget("v1"))
    events: list[Any] = []
    env.server.watch(Request("watch", "widgets", namespace="default", version="v1beta1", group=G,
                             token=env.admin), events.append)
    live = at(env, "v1beta1", "get", name="w")
    live["spec"]["replicas"] = 2
    updated = at(env, "v1beta1", "update", name="w", body=copy.deepcopy(live))
    assert (updated["apiVersion"], updated["spec"]["replicas"]) == ("example.com/v1beta1", 2)
    patched = at(env, "v1beta1", "patch", name="w", body={"spec": {"replicas": 3}},
                 options={"patchType": "merge"})
    assert (patched["apiVersion"], patched["spec"]["replicas"]) == ("example.com/v1beta1", 3)
    env.settle()
    assert [(e["type"], e["object"]["apiVersion"]) for e in events] == [
        ("ADDED", "example.com/v1beta1"), ("MODIFIED", "example.com/v1beta1"),
        ("MODIFIED", "example.com/v1beta1")]
    assert at(env, "v1", "get", name="w")["apiVersion"] == "example.com/v1"


def test_discovery_lists_served_versions_preferred_first(env: Env) -> None:
    table = [s.info for s in env.server.served]
    group = next(g for g in discovery.api_group_list(table)["groups"] if g["name"] == G)
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    assert group["preferredVersion"]["version"] == "v1"
    assert sorted(["v1alpha1", "v2", "foo", "v1", "v1beta2", "v1beta1", "v10"],
                  key=kube_version_key) == ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1",
                                            "foo"]


def test_a_new_storage_version_joins_stored_versions(env: Env) -> None:
    definition = env.get("customresourcedefinitions", "widgets.example.com", "",
                         group="apiextensions.k8s.io")
    assert definition["status"]["storedVersions"] == ["v1"]
    versions = definition["spec"]["versions"]
    versions[0]["storage"], versions[1]["storage"] = True, False
    updated = env.update("customresourcedefinitions", definition, group="apiextensions.k8s.io")
    assert updated["status"]["storedVersions"] == ["v1", "v1beta1"]
    # A stored version may not leave spec.versions while objects may still be stored in it.
    updated["spec"]["versions"] = [v for v in versions if v["name"] != "v1"]
    err = env.error("update", "customresourcedefinitions", "", "widgets.example.com",
                    body=updated, group="apiextensions.k8s.io")
    assert err.message.endswith('status.storedVersions[0]: Invalid value: "v1": must appear in '
                                "spec.versions")


def test_a_storage_version_that_is_not_served_is_stored_but_not_reachable() -> None:
    env = Env()
    definition = copy.deepcopy(CRD)
    definition["spec"]["versions"][1]["served"] = False  # v1 stores, only v1beta1 serves
    env.create("customresourcedefinitions", definition, namespace="", group="apiextensions.k8s.io")
    at(env, "v1beta1", "create", body=widget("v1beta1"))
    stored = env.store.range("/registry/example.com/widgets/default/w").kvs[0].value
    assert json.loads(stored)["apiVersion"] == "example.com/v1"
    assert env.error("get", "widgets", name="w", version="v1", group=G).code == 404
    assert [(i.version) for i in (s.info for s in env.server.served) if i.group == G] == ["v1beta1"]
