"""Bad input of issue 15: each gets upstream's error and changes nothing.

Create, update and every patch type run the same validation (an update is validated as a
create plus what may not change); probes, resources and nodes are checked as upstream does
before a kubelet or scheduler reads them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_apiserver_support import Env, deployment, node, pod

from kubelab.api.errors import ApiError

Object = dict[str, Any]


@pytest.fixture
def env() -> Env:
    e = Env()
    e.create("deployments", deployment(replicas=1))
    e.create("nodes", node(), namespace="")
    return e


def refused(env: Env, verb: str, resource: str, name: str = "", **kwargs: Any) -> ApiError:
    revision = env.store.revision
    err = env.error(verb, resource, "" if resource == "nodes" else "default", name, **kwargs)
    assert env.store.revision == revision, "a refused request changed the store"
    return err


def with_container(**fields: Any) -> Object:
    body = pod()
    body["spec"]["containers"][0].update(fields)
    return body


EXEC = {"exec": {"command": ["true"]}}
NEGATIVE_REPLICAS = 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must ' \
    "be greater than or equal to 0"


# ------------------------------------------------------------------ update and patch validate


def test_update_runs_the_create_rules(env: Env) -> None:
    live = env.get("deployments", "web")
    bad = copy.deepcopy(live)
    bad["spec"]["replicas"] = -1
    assert refused(env, "update", "deployments", "web", body=bad).message == NEGATIVE_REPLICAS
    bad = copy.deepcopy(live)
    bad["spec"]["template"]["spec"]["containers"] = None
    assert refused(env, "update", "deployments", "web", body=bad).message == \
        'Deployment.apps "web" is invalid: spec.template.spec.containers: Required value'


@pytest.mark.parametrize(("patch_type", "patch"), [
    ("merge", {"spec": {"replicas": -1}}),
    ("strategic", {"spec": {"replicas": -1}}),
    ("json", [{"op": "replace", "path": "/spec/replicas", "value": -1}]),
])
def test_every_patch_type_is_validated(env: Env, patch_type: str, patch: Any) -> None:
    err = refused(env, "patch", "deployments", "web", body=patch,
                  options={"patchType": patch_type})
    assert (err.code, err.message) == (422, NEGATIVE_REPLICAS)


@pytest.mark.parametrize(("patch_type", "patch"), [
    ("json", [{"op": "remove", "path": "/metadata"}]),
    ("merge", {"metadata": None}),
    ("json", [{"op": "replace", "path": "/metadata/name", "value": ""}]),
])
def test_a_patch_cannot_store_an_object_without_a_name(env: Env, patch_type: str,
                                                       patch: Any) -> None:
    # handlers/patch.go applyPatch ends with checkName, as update.go does.
    err = refused(env, "patch", "deployments", "web", body=patch,
                  options={"patchType": patch_type})
    assert (err.code, err.message) == (
        400, "the name of the object () does not match the name on the URL (web)")
    assert env.get("deployments", "web")["metadata"]["uid"]


def test_an_update_without_a_name_is_refused(env: Env) -> None:
    body = env.get("deployments", "web")
    del body["metadata"]["name"]
    err = refused(env, "update", "deployments", "web", body=body)
    assert err.message == "the name of the object () does not match the name on the URL (web)"


def test_strategic_patch_errors_are_upstreams(env: Env) -> None:
    # Not Status errors upstream: 500 with no reason, `Error from server: ...` in kubectl.
    err = refused(env, "patch", "deployments", "web", body={"spec": {"$patch": "explode"}},
                  options={"patchType": "strategic"})
    assert (err.code, err.reason, err.message) == (
        500, "", "unknown patch type: explode in map: map[$patch:explode]")
    assert err.kubectl_message().startswith("Error from server: unknown patch type")
    body = {"spec": {"template": {"spec": {"containers": [{"image": "x", "ports": [1]}]}}}}
    err = refused(env, "patch", "deployments", "web", body=body,
                  options={"patchType": "strategic"})
    assert err.message == "map: map[image:x ports:[1]] does not contain declared merge key: name"
    body = {"spec": {"template": {"spec": {"containers": [{"$patch": "explode", "name": "a"}]}}}}
    err = refused(env, "patch", "deployments", "web", body=body,
                  options={"patchType": "strategic"})
    assert err.message == "unknown patch type: explode in map: map[$patch:explode name:a]"


def test_strategic_directives_that_exist_still_work(env: Env) -> None:
    body = {"spec": {"template": {"spec": {"containers": [
        {"name": "side", "image": "busybox"}]}}}}
    env.req("patch", "deployments", "default", "web", body=body,
            options={"patchType": "strategic"})
    body = {"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "side"}]}}}}
    live = env.req("patch", "deployments", "default", "web", body=body,
                   options={"patchType": "strategic"})
    assert [c["name"] for c in live["spec"]["template"]["spec"]["containers"]] == ["app"]
    live = env.req("patch", "deployments", "default", "web", options={"patchType": "strategic"},
                   body={"metadata": {"labels": {"$patch": "replace", "only": "this"}}})
    assert live["metadata"]["labels"] == {"only": "this"}


# ------------------------------------------------------------------ probes


@pytest.mark.parametrize(("probe", "message"), [
    ({**EXEC, "periodSeconds": -3},
     "spec.containers[0].readinessProbe.periodSeconds: Invalid value: -3: must be greater than "
     "or equal to 0"),
    ({**EXEC, "failureThreshold": -1},
     "spec.containers[0].readinessProbe.failureThreshold: Invalid value: -1: must be greater "
     "than or equal to 0"),
    ({"periodSeconds": 2},
     "spec.containers[0].readinessProbe: Required value: must specify a handler type"),
    ({**EXEC, "tcpSocket": {"port": 80}},
     "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 "
     "handler type"),
    ({"exec": {}}, "spec.containers[0].readinessProbe.exec.command: Required value"),
    ({"httpGet": {"port": 0}},
     "spec.containers[0].readinessProbe.httpGet.port: Invalid value: 0: must be between 1 and "
     "65535, inclusive"),
    ({"httpGet": {"port": "Web_Port"}},
     "spec.containers[0].readinessProbe.httpGet.port: Invalid value: \"Web_Port\": must contain "
     "only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
])
def test_probes_are_validated(env: Env, probe: Object, message: str) -> None:
    err = refused(env, "create", "pods", body=with_container(readinessProbe=probe))
    assert err.message == f'Pod "web" is invalid: {message}'


def test_liveness_success_threshold_must_be_1(env: Env) -> None:
    err = refused(env, "create", "pods",
                  body=with_container(livenessProbe={**EXEC, "successThreshold": 2}))
    assert err.message == 'Pod "web" is invalid: spec.containers[0].livenessProbe.' \
        "successThreshold: Invalid value: 2: must be 1"


@pytest.mark.parametrize(("probe", "message"), [
    ("yes", "json: cannot unmarshal string into Go struct field Container.spec.containers."
     "readinessProbe of type v1.Probe"),
    ({**EXEC, "periodSeconds": "2"}, "json: cannot unmarshal string into Go struct field "
     "Probe.spec.containers.readinessProbe.periodSeconds of type int32"),
    ({**EXEC, "periodSeconds": ["-1"]}, "json: cannot unmarshal array into Go struct field "
     "Probe.spec.containers.readinessProbe.periodSeconds of type int32"),
])
def test_probe_fields_are_typed(env: Env, probe: Any, message: str) -> None:
    err = refused(env, "create", "pods", body=with_container(readinessProbe=probe))
    assert (err.code, err.message) == (
        400, f'Pod in version "v1" cannot be handled as a Pod: {message}')


def test_a_valid_probe_is_stored(env: Env) -> None:
    probe = {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5}
    stored = env.create("pods", with_container(readinessProbe=probe))
    assert stored["spec"]["containers"][0]["readinessProbe"] == probe


# ------------------------------------------------------------------ pod spec fields


def test_hostname_is_a_dns_label(env: Env) -> None:
    err = refused(env, "create", "pods", body=pod(hostname="Not_A_Host"))
    assert err.message.startswith('Pod "web" is invalid: spec.hostname: Invalid value: '
                                  '"Not_A_Host": a lowercase RFC 1123 label must consist of')


@pytest.mark.parametrize(("name", "messages"), [
    ("bogus", ["must be a standard resource type or fully qualified",
               "must be a standard resource for containers"]),
    ("example.com/Bad_", ["name part must consist of alphanumeric characters"]),
])
def test_resource_names_are_checked(env: Env, name: str, messages: list[str]) -> None:
    err = refused(env, "create", "pods",
                  body=with_container(resources={"requests": {name: "1"}}))
    for message in messages:
        assert f'spec.containers[0].resources.requests[{name}]: Invalid value: "{name}": ' \
            f"{message}" in err.message


def test_extended_resources_are_accepted(env: Env) -> None:
    stored = env.create("pods", with_container(
        resources={"limits": {"example.com/gpu": "1", "hugepages-2Mi": "2Mi"}}))
    assert stored["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] == "1"


# ------------------------------------------------------------------ nodes


@pytest.mark.parametrize(("status", "spec", "message"), [
    ({"capacity": {"cpu": "-4"}}, {},
     'status.capacity.cpu: Invalid value: "-4": must be greater than or equal to 0'),
    ({"allocatable": {"pods": "1.5"}}, {},
     "status.allocatable.pods: Invalid value: 1500m: must be an integer"),
    ({}, {"podCIDR": "bogus"}, 'spec.podCIDRs[0]: Invalid value: "bogus": must be a valid CIDR '
     "value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
    ({}, {"podCIDRs": ["10.0.0.0/24", "10.1.0.0/24"]},
     'spec.podCIDRs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: may specify no more than one '
     "CIDR for each IP family"),
])
def test_nodes_are_validated(env: Env, status: Object, spec: Object, message: str) -> None:
    body = {**node("node-2"), "status": status, "spec": spec}
    err = refused(env, "create", "nodes", body=body)
    assert err.message == f'Node "node-2" is invalid: {message}'


def test_a_null_quantity_is_zero(env: Env) -> None:
    # Quantity.UnmarshalJSON reads null as the zero quantity.
    body = {**node("node-2"), "status": {"allocatable": {"memory": None, "cpu": "1"}}}
    stored = env.create("nodes", body, namespace="")
    assert stored["status"]["allocatable"] == {"memory": "0", "cpu": "1"}
    env.create("nodes", {**node("node-3"), "spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}},
               namespace="")


# ------------------------------------------------------------------ generateName


def test_generate_name_is_validated_even_with_a_name(env: Env) -> None:
    body = pod()
    body["metadata"]["generateName"] = "Bad_"
    err = refused(env, "create", "pods", body=body)
    assert err.message.startswith('Pod "web" is invalid: metadata.generateName: Invalid value: '
                                  '"Bad_": a lowercase RFC 1123 subdomain must consist of')
    body["metadata"]["generateName"] = "web-"  # a trailing dash is fine in a prefix
    assert env.create("pods", body)["metadata"]["name"] == "web"


def test_a_binding_update_is_validated_as_a_create(env: Env) -> None:
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "b", "namespace": "default"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
               "subjects": [{"kind": "User", "name": "alice"}]}
    env.create("rolebindings", binding)
    live = env.get("rolebindings", "b")
    live["subjects"] = [{"kind": "Robot", "name": "r2"}]
    err = refused(env, "update", "rolebindings", "b", body=live)
    assert err.message == 'RoleBinding.rbac.authorization.k8s.io "b" is invalid: ' \
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", ' \
        '"User", "Group"'


def test_a_node_keeps_its_pod_cidrs(env: Env) -> None:
    created = env.create("nodes", {**node("node-2"), "spec": {"podCIDR": "10.0.2.0/24"}},
                         namespace="")
    assert created["spec"]["podCIDRs"] == ["10.0.2.0/24"]  # v1's podCIDR converts to podCIDRs
    # podCIDR alone follows podCIDRs (the conversion), so this patch changes nothing.
    patched = env.req("patch", "nodes", "", "node-2", body={"spec": {"podCIDR": "bogus"}})
    assert patched["spec"]["podCIDR"] == "10.0.2.0/24"
    err = refused(env, "patch", "nodes", "node-2", body={"spec": {"podCIDRs": ["10.0.3.0/24"]}})
    assert err.message == 'Node "node-2" is invalid: spec.podCIDRs: Forbidden: node updates may ' \
        'not change podCIDR except from "" to valid'
    env.req("patch", "nodes", "", "node-1", body={"spec": {"podCIDRs": ["10.0.1.0/24"]}})
