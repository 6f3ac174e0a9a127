"""pods/binding, scale, patch, deletion (grace, finalizers, propagation, preconditions), CRDs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_apiserver_support import Env, config_map, deployment, pod

from kubelab.api.request import Request


@pytest.fixture
def env() -> Env:
    return Env()


def bind(env: Env, name: str, node: str, **meta: Any) -> dict[str, Any]:
    return env.req("create", "pods", name=name, subresource="binding", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, **meta},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})


# ------------------------------------------------------------------ binding


def test_binding_sets_node_name_once(env: Env) -> None:
    created = env.create("pods", pod())
    status = bind(env, "web", "node-1", uid=created["metadata"]["uid"])
    assert (status["kind"], status["status"], status["code"]) == ("Status", "Success", 201)
    bound = env.get("pods", "web")
    assert bound["spec"]["nodeName"] == "node-1"
    assert bound["metadata"]["generation"] == 1
    scheduled = [c for c in bound["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled[0]["status"] == "True"
    err = env.error("create", "pods", name="web", subresource="binding", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
        "target": {"name": "node-2"}})
    assert (err.code, err.message) == (409, 'Operation cannot be fulfilled on pods/binding "web": '
                                            'pod web is already assigned to node "node-1"')
    assert env.get("pods", "web")["spec"]["nodeName"] == "node-1"


def test_binding_of_a_missing_or_terminating_pod(env: Env) -> None:
    err = env.error("create", "pods", name="ghost", subresource="binding", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "ghost"},
        "target": {"name": "node-1"}})
    assert (err.code, err.message) == (404, 'pods "ghost" not found')
    body = pod()
    body["metadata"]["finalizers"] = ["example.com/hold"]
    env.create("pods", body)
    env.delete("pods", "web")
    err = env.error("create", "pods", name="web", subresource="binding", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
        "target": {"name": "node-1"}})
    assert err.message == ('Operation cannot be fulfilled on pods/binding "web": pod web is being '
                           "deleted, cannot be assigned to a host")


def test_binding_needs_a_target(env: Env) -> None:
    env.create("pods", pod())
    err = env.error("create", "pods", name="web", subresource="binding", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"}, "target": {}})
    assert (err.code, err.message) == (422, 'Binding "web" is invalid: target.name: Required value')


# ------------------------------------------------------------------ scale


def test_scale_subresource(env: Env) -> None:
    env.create("deployments", deployment(replicas=2))
    scale = env.req("get", "deployments", name="web", subresource="scale")
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 0, "selector": "app=web"}
    scale["spec"]["replicas"] = 5
    after = env.req("update", "deployments", name="web", subresource="scale", body=scale)
    assert after["spec"]["replicas"] == 5
    d = env.get("deployments", "web")
    assert d["spec"]["replicas"] == 5 and d["metadata"]["generation"] == 2
    err = env.error("update", "deployments", name="web", subresource="scale", body=scale)
    assert err.code == 409  # the Scale carried the old resourceVersion
    scale = env.req("get", "deployments", name="web", subresource="scale")
    scale["spec"]["replicas"] = -1
    err = env.error("update", "deployments", name="web", subresource="scale", body=scale)
    assert err.message == ('Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: '
                           "must be greater than or equal to 0")


def test_scale_patch(env: Env) -> None:
    env.create("deployments", deployment(replicas=2))
    env.req("patch", "deployments", name="web", subresource="scale",
            body={"spec": {"replicas": 3}}, options={"patchType": "merge"})
    assert env.get("deployments", "web")["spec"]["replicas"] == 3


# ------------------------------------------------------------------ patch


def test_merge_patch(env: Env) -> None:
    env.create("configmaps", config_map(a="1", b="2"))
    patched = env.req("patch", "configmaps", name="cm", body={"data": {"a": None, "c": "3"}},
                      options={"patchType": "merge"})
    assert patched["data"] == {"b": "2", "c": "3"}


def test_strategic_merge_patch_merges_containers_by_name(env: Env) -> None:
    env.create("deployments", deployment())
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "image": "envoy"}, {"name": "app", "image": "nginx:1.26"}]}}}}
    d = env.req("patch", "deployments", name="web", body=patch,
                options={"patchType": "strategic"})
    containers = d["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("app", "nginx:1.26"),
                                                              ("sidecar", "envoy")]
    assert containers[0]["imagePullPolicy"] == "Always"  # kept from the live object
    d = env.req("patch", "deployments", name="web", options={"patchType": "strategic"}, body={
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}})
    assert [c["name"] for c in d["spec"]["template"]["spec"]["containers"]] == ["app"]


def test_json_patch(env: Env) -> None:
    env.create("configmaps", config_map(a="1"))
    patched = env.req("patch", "configmaps", name="cm", options={"patchType": "json"}, body=[
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "add", "path": "/data/b", "value": "2"},
        {"op": "remove", "path": "/data/a"}])
    assert patched["data"] == {"b": "2"}
    err = env.error("patch", "configmaps", name="cm", options={"patchType": "json"},
                    body=[{"op": "replace", "path": "/data/zzz", "value": "x"}])
    assert err.code == 422


@pytest.mark.parametrize("patch_type", ["merge", "strategic", "json"])
def test_a_patch_is_validated_against_the_object_as_stored(env: Env, patch_type: str) -> None:
    # The update compares the patched object with the live one that the patch was applied to;
    # if applying the patch changed that live copy, immutable fields would slip through.
    env.create("pods", pod())
    body: Any = [{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:1.27"},
                 {"op": "replace", "path": "/metadata/uid", "value": "changed"}] \
        if patch_type == "json" else {"metadata": {"uid": "changed"},
                                      "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}
    err = env.error("patch", "pods", name="web", body=body, options={"patchType": patch_type})
    assert err.code == 422 and "metadata.uid" in err.message, err.message


def test_merge_patches_leave_the_live_object_alone() -> None:
    from kubelab.apiserver.endpoints.patch import apply_patch
    live = {"metadata": {"name": "web", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], "finalizers": ["x"]}}
    before = json.dumps(live, sort_keys=True)
    apply_patch(live, {"metadata": {"labels": {"a": None, "b": "2"}}, "spec": {
        "containers": [{"name": "app", "image": "nginx:2"}, {"name": "side", "image": "envoy"}],
        "$deleteFromPrimitiveList/finalizers": ["x"]}}, "strategic", True)
    apply_patch(live, {"metadata": {"labels": {"a": "3"}}, "spec": None}, "merge", True)
    assert json.dumps(live, sort_keys=True) == before


def test_patch_with_stale_resource_version_conflicts(env: Env) -> None:
    created = env.create("configmaps", config_map())
    env.req("patch", "configmaps", name="cm", body={"data": {"k": "2"}})
    err = env.error("patch", "configmaps", name="cm", body={
        "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
        "data": {"k": "3"}})
    assert err.code == 409


def test_patch_producing_unknown_fields_is_refused(env: Env) -> None:
    env.create("configmaps", config_map())
    err = env.error("patch", "configmaps", name="cm", body={"dta": {"k": "2"}})
    assert err.message.endswith('strict decoding error: unknown field "dta"')


@pytest.mark.parametrize(("value", "shown"), [(float("nan"), "NaN"), (float("inf"), "+Inf"),
                                               (float("-inf"), "-Inf")])
def test_a_value_json_cannot_carry_is_a_400_in_gos_words(env: Env, value: float, shown: str) -> None:
    """Go's encoder refuses these before they are ever sent: the same words in a patch and in
    a typed field of a created object."""
    env.create("configmaps", config_map())
    revision = env.store.revision
    err = env.error("patch", "configmaps", name="cm", body={"metadata": {"annotations": {"x": value}}})
    assert (err.code, err.message) == (400, f"error decoding patch: json: unsupported value: {shown}")
    err = env.error("create", "configmaps", body=config_map("cm2", k=value))  # type: ignore[arg-type]
    assert (err.code, err.message) == (400, 'ConfigMap in version "v1" cannot be handled as a '
                                       f"ConfigMap: json: unsupported value: {shown}")
    assert env.store.revision == revision


def test_an_oversized_patch_is_a_413_even_if_it_would_shrink_the_object(env: Env) -> None:
    """The body limit (MaxRequestBodyBytes) applies to the request, not to its result."""
    env.create("configmaps", config_map())
    revision = env.store.revision
    err = env.error("patch", "configmaps", name="cm", body={"data": {"k" * 3_200_000: None}})
    assert err.code == 413 and env.store.revision == revision


def test_status_patch_keeps_spec(env: Env) -> None:
    env.create("deployments", deployment())
    d = env.req("patch", "deployments", name="web", subresource="status",
                body={"status": {"replicas": 2}, "spec": {"replicas": 100}})
    assert d["status"] == {"replicas": 2} and d["spec"]["replicas"] == 2


# ------------------------------------------------------------------ delete


def test_unbound_pods_and_plain_objects_go_at_once(env: Env) -> None:
    env.create("pods", pod())
    deleted = env.delete("pods", "web")
    assert deleted["metadata"]["name"] == "web"
    assert env.error("get", "pods", name="web").code == 404
    env.create("configmaps", config_map())
    env.delete("configmaps", "cm")
    assert env.error("get", "configmaps", name="cm").code == 404


def test_bound_pods_are_deleted_gracefully(env: Env) -> None:
    env.create("pods", pod(terminationGracePeriodSeconds=45))
    bind(env, "web", "node-1")
    env.clock.run(until=10)
    p = env.delete("pods", "web")
    assert p["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:55Z"
    assert p["metadata"]["deletionGracePeriodSeconds"] == 45
    assert p["metadata"]["generation"] == 2
    again = env.delete("pods", "web")  # a second delete changes nothing
    assert again["metadata"]["resourceVersion"] == p["metadata"]["resourceVersion"]
    env.delete("pods", "web", gracePeriodSeconds=0)  # what the kubelet sends when done
    assert env.error("get", "pods", name="web").code == 404


def test_grace_period_zero_deletes_a_bound_pod_at_once(env: Env) -> None:
    env.create("pods", pod())
    bind(env, "web", "node-1")
    env.delete("pods", "web", gracePeriodSeconds=0)
    assert env.error("get", "pods", name="web").code == 404


def test_finalizers_keep_the_object_until_they_are_removed(env: Env) -> None:
    body = config_map()
    body["metadata"]["finalizers"] = ["example.com/hold"]
    env.create("configmaps", body)
    cm = env.delete("configmaps", "cm")
    assert cm["metadata"]["deletionTimestamp"] and cm["metadata"]["deletionGracePeriodSeconds"] == 0
    cm = env.get("configmaps", "cm")
    cm["data"] = {"k": "changed while deleting"}
    cm = env.update("configmaps", cm)
    cm["metadata"]["finalizers"] = ["example.com/hold", "example.com/new"]
    assert "no new finalizers can be added if the object is being deleted" in env.error(
        "update", "configmaps", name="cm", body=cm).message
    cm = env.get("configmaps", "cm")
    cm["metadata"]["finalizers"] = []
    env.update("configmaps", cm)
    assert env.error("get", "configmaps", name="cm").code == 404


@pytest.mark.parametrize(("policy", "finalizers"), [
    ("Orphan", ["orphan"]), ("Foreground", ["foregroundDeletion"]), ("Background", None)])
def test_propagation_policy_sets_gc_finalizers(env: Env, policy: str,
                                               finalizers: list[str] | None) -> None:
    env.create("deployments", deployment())
    result = env.delete("deployments", "web", propagationPolicy=policy)
    if finalizers is None:
        assert env.error("get", "deployments", name="web").code == 404
    else:
        assert result["metadata"]["finalizers"] == finalizers
        assert result["metadata"]["generation"] == 2
        assert env.get("deployments", "web")["metadata"]["deletionTimestamp"]


def test_delete_options_are_validated(env: Env) -> None:
    env.create("configmaps", config_map())
    err = env.error("delete", "configmaps", name="cm", options={"propagationPolicy": "Later"})
    assert err.code == 422
    assert err.message == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                           'value: "Later": supported values: "Foreground", "Background", '
                           '"Orphan", "nil"')


def test_delete_preconditions(env: Env) -> None:
    created = env.create("configmaps", config_map())
    err = env.error("delete", "configmaps", name="cm", options={"preconditions": {"uid": "abc"}})
    assert (err.code, err.message) == (409, (
        'Operation cannot be fulfilled on ConfigMap "cm": the UID in the precondition (abc) does '
        f"not match the UID in record ({created['metadata']['uid']}). The object might have been "
        "deleted and then recreated"))
    err = env.error("delete", "configmaps", name="cm",
                    options={"preconditions": {"resourceVersion": "1"}})
    assert err.message.startswith('Operation cannot be fulfilled on ConfigMap "cm": the '
                                  "ResourceVersion in the precondition (1) does not match")
    env.delete("configmaps", "cm", preconditions={"uid": created["metadata"]["uid"]})


def test_deletecollection_with_a_selector(env: Env) -> None:
    for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
        body = config_map(name)
        body["metadata"]["labels"] = {"app": app}
        env.create("configmaps", body)
    deleted = env.req("deletecollection", "configmaps", label_selector="app=x")
    assert [i["metadata"]["name"] for i in deleted["items"]] == ["a", "b"]
    assert [i["metadata"]["name"] for i in env.req("list", "configmaps")["items"]] == ["c"]


# ------------------------------------------------------------------ custom resources


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                               "status": {"type": "object",
                                          "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}


def widget(name: str, size: int = 1) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}}


def test_a_crd_makes_its_resource_served(env: Env) -> None:
    assert env.error("list", "widgets", group="example.com").code == 404
    crd = env.create("customresourcedefinitions", CRD, namespace="",
                     group="apiextensions.k8s.io")
    assert [c["type"] for c in crd["status"]["conditions"]] == ["NamesAccepted", "Established"]
    w = env.create("widgets", widget("w1"), group="example.com")
    assert w["metadata"]["generation"] == 1
    events: list[dict[str, Any]] = []
    env.server.watch(Request("watch", "widgets", namespace="default", group="example.com",
                             token=env.admin), events.append)
    w["spec"]["size"] = 2
    w = env.update("widgets", w, group="example.com")
    assert w["metadata"]["generation"] == 2
    w["status"] = {"ready": True}
    w = env.req("update", "widgets", name="w1", group="example.com", subresource="status", body=w)
    assert w["status"] == {"ready": True} and w["metadata"]["generation"] == 2
    env.settle()
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "MODIFIED"]
    assert env.store.range("/registry/example.com/widgets/default/w1").kvs
    listing = env.req("list", "widgets", namespace="", group="example.com")
    assert listing["kind"] == "WidgetList" and len(listing["items"]) == 1


def test_deleting_a_crd_removes_its_objects(env: Env) -> None:
    env.create("customresourcedefinitions", CRD, namespace="", group="apiextensions.k8s.io")
    env.create("widgets", widget("w1"), group="example.com")
    env.req("delete", "customresourcedefinitions", "", "widgets.example.com",
            group="apiextensions.k8s.io")
    env.settle()  # the customresourcecleanup finalizer deletes the objects, then the CRD goes
    assert env.error("list", "widgets", group="example.com").code == 404
    assert not env.store.range("/registry/example.com/", prefix=True).kvs


def test_invalid_crd(env: Env) -> None:
    bad = {**CRD, "metadata": {"name": "gadgets.example.com"}}
    err = env.error("create", "customresourcedefinitions", "", body=bad,
                    group="apiextensions.k8s.io")
    assert err.message == ('CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is '
                           'invalid: metadata.name: Invalid value: "gadgets.example.com": must be '
                           'spec.names.plural+"."+spec.group')


def test_custom_resources_survive_a_new_server(env: Env) -> None:
    env.create("customresourcedefinitions", CRD, namespace="", group="apiextensions.k8s.io")
    env.create("widgets", widget("w1"), group="example.com")
    from kubelab.apiserver import APIServer
    again = APIServer(env.store, env.clock, env.server.rand)
    got = again.handle(Request("get", "widgets", namespace="default", name="w1",
                               group="example.com", token=again.token_for("admin")))
    assert got["spec"] == {"size": 1}


def test_status_update_keeps_annotations_but_not_spec_or_deployment_labels(env: Env) -> None:
    d = env.create("deployments", deployment())
    d["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "1"}
    d["metadata"]["labels"] = {"changed": "by-status"}
    d["spec"]["replicas"] = 9
    d["status"] = {"observedGeneration": 1, "replicas": 0}
    updated = env.req("update", "deployments", name="web", subresource="status", body=d)
    assert updated["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "1"}
    assert updated["metadata"].get("labels") != {"changed": "by-status"}
    assert updated["spec"]["replicas"] != 9 and updated["status"]["observedGeneration"] == 1
    assert updated["metadata"]["generation"] == d["metadata"]["generation"]
