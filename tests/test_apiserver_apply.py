"""Server-side apply: create or merge, field ownership, conflicts, force, and removal."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.api.request import Request


def _apply(c: Cluster, obj: dict[str, Any], manager: str = "me", force: bool = False) -> dict[str, Any]:
    return c.apiserver.handle(Request(
        "patch", "configmaps", namespace="default", name=obj["metadata"]["name"], body=obj,
        options={"patchType": "apply", "fieldManager": manager, "force": force},
        token=c.apiserver.token_for("admin")))


def _cm(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": data}


@pytest.fixture
def c() -> Cluster:
    return Cluster(nodes=0, seed=0, components=[])


def test_apply_creates_then_merges_and_records_its_fields(c: Cluster) -> None:
    created = _apply(c, _cm(a="1", b="2"))
    assert created["data"] == {"a": "1", "b": "2"}
    [entry] = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["fieldsType"]) == ("me", "Apply", "FieldsV1")
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}}
    # A field written by someone who is not an applier stays: the apply only merges.
    c.client.patch("configmaps", "settings", {"data": {"extra": "x"}})
    again = _apply(c, _cm(a="1", b="3"))
    assert again["data"] == {"a": "1", "b": "3", "extra": "x"}


def test_a_field_the_manager_stops_applying_is_removed_unless_shared(c: Cluster) -> None:
    _apply(c, _cm(a="1", b="2"))
    _apply(c, _cm(b="2"), manager="other")           # the same value: other co-owns b
    after = _apply(c, _cm())                         # me applies neither a nor b any more
    assert after["data"] == {"b": "2"}               # a went; b stays, other still owns it
    managers = {m["manager"]: m["fieldsV1"] for m in after["metadata"]["managedFields"]}
    assert managers["other"] == {"f:data": {"f:b": {}}}


def test_a_different_value_conflicts_and_force_takes_the_field(c: Cluster) -> None:
    _apply(c, _cm(a="1", b="2"))
    with pytest.raises(ApiError) as err:
        _apply(c, _cm(a="9"), manager="other")
    assert err.value.code == 409 and err.value.reason == "Conflict"
    assert err.value.message == 'Apply failed with 1 conflict: conflict with "me" using v1: .data.a'
    assert err.value.details["causes"] == [{"reason": "FieldManagerConflict", "field": ".data.a",
                                            "message": 'conflict with "me" using v1'}]
    forced = _apply(c, _cm(a="9"), manager="other", force=True)
    assert forced["data"] == {"a": "9", "b": "2"}
    managers = {m["manager"]: m["fieldsV1"] for m in forced["metadata"]["managedFields"]}
    assert managers == {"me": {"f:data": {"f:b": {}}}, "other": {"f:data": {"f:a": {}}}}


def test_keyed_lists_merge_by_name_and_a_manager_is_required(c: Cluster) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                               {"name": "app", "image": "nginx:1.27"}]}}}}
    token = c.apiserver.token_for("admin")

    def apply(obj: dict[str, Any], manager: str) -> dict[str, Any]:
        return c.apiserver.handle(Request("patch", "deployments", group="apps", namespace="default",
                                          name="web", body=obj, token=token,
                                          options={"patchType": "apply", "fieldManager": manager}))

    apply(deployment, "me")
    sidecar = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"template": {"spec": {"containers": [{"name": "log", "image": "busybox"}]}}}}
    merged = apply(sidecar, "logging")
    assert [k["name"] for k in merged["spec"]["template"]["spec"]["containers"]] == ["app", "log"]
    fields = {m["manager"]: m["fieldsV1"] for m in merged["metadata"]["managedFields"]}
    assert 'k:{"name":"log"}' in fields["logging"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    with pytest.raises(ApiError) as err:
        apply(deployment, "")
    assert err.value.code == 422
    assert "fieldManager: Required value: is required for apply patch" in err.value.message
