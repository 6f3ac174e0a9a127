"""Decoding, defaults, admission plugins and validation, with upstream's messages."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from test_apiserver_support import Env, config_map, deployment, pod

from kubelab.apiserver import AdmissionPlugin, Attributes, admission_forbidden


@pytest.fixture
def env() -> Env:
    return Env()


def invalid_message(env: Env, resource: str, body: dict[str, Any]) -> str:
    revision = env.store.revision
    err = env.error("create", resource, body=body)
    assert env.store.revision == revision
    assert (err.code, err.reason) == (422, "Invalid"), err.message
    return err.message


def test_pod_defaults(env: Env) -> None:
    body = pod(containers=[{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx:1.25"},
                           {"name": "c", "image": "reg:5000/app@sha256:abc",
                            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}])
    spec = env.create("pods", body)["spec"]
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["schedulerName"],
            spec["terminationGracePeriodSeconds"], spec["priority"]) == \
        ("Always", "ClusterFirst", "default-scheduler", 30, 0)
    assert [c["imagePullPolicy"] for c in spec["containers"]] == \
        ["Always", "IfNotPresent", "IfNotPresent"]
    assert spec["containers"][2]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert [t["key"] for t in spec["tolerations"]] == ["node.kubernetes.io/not-ready",
                                                        "node.kubernetes.io/unreachable"]
    assert all(t["tolerationSeconds"] == 300 and t["effect"] == "NoExecute"
               for t in spec["tolerations"])


def test_existing_not_ready_toleration_is_kept(env: Env) -> None:
    body = pod(tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 10}])
    tolerations = env.create("pods", body)["spec"]["tolerations"]
    assert [(t["key"], t["tolerationSeconds"]) for t in tolerations] == [
        ("node.kubernetes.io/not-ready", 10), ("node.kubernetes.io/unreachable", 300)]


@pytest.mark.parametrize(("resources", "qos"), [
    ({}, "BestEffort"),
    ({"requests": {"cpu": "100m"}}, "Burstable"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}, "Burstable"),
])
def test_qos_class(env: Env, resources: dict[str, Any], qos: str) -> None:
    body = pod(containers=[{"name": "a", "image": "nginx", "resources": resources}])
    assert env.create("pods", body)["status"]["qosClass"] == qos


def test_deployment_defaults(env: Env) -> None:
    body = deployment()
    del body["spec"]["replicas"]
    spec = env.create("deployments", body)["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    assert spec["template"]["spec"]["restartPolicy"] == "Always"


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
def test_a_templates_limits_are_not_copied_into_its_requests(env: Env, kind: str) -> None:
    """SetDefaults_Pod copies limits into missing requests for a Pod only, not for a pod
    template (pkg/apis/core/v1/defaults.go): the template keeps what was written."""
    body = {**deployment(), "kind": kind}
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "200m"}}
    created = env.create(f"{kind.lower()}s", body)
    container = created["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {"limits": {"cpu": "200m"}}
    assert container["imagePullPolicy"] == "Always"  # the other container defaults still apply


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["spec"].update(replicas=-1),
     'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than '
     "or equal to 0"),
    (lambda d: d["spec"]["template"]["metadata"].update(labels={"app": "other"}),
     'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
     '{"app":"other"}: `selector` does not match template `labels`'),
    (lambda d: d["spec"].update(strategy={"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": 0}}),
     'Deployment.apps "web" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid '
     "value: 0: may not be 0 when `maxSurge` is 0"),
    (lambda d: d["spec"].pop("selector"),
     'Deployment.apps "web" is invalid: [spec.selector: Required value, '
     "spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not "
     "match template `labels`]"),
    (lambda d: d["spec"]["template"]["spec"].update(restartPolicy="Never"),
     'Deployment.apps "web" is invalid: spec.template.spec.restartPolicy: Unsupported value: '
     '"Never": supported values: "Always"'),
])
def test_deployment_validation(env: Env, change: Any, message: str) -> None:
    body = deployment()
    change(body)
    assert invalid_message(env, "deployments", body) == message


def test_deployment_selector_is_immutable(env: Env) -> None:
    d = env.create("deployments", deployment())
    d["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
    d["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    err = env.error("update", "deployments", name="web", body=d)
    assert err.code == 422
    assert "spec.selector: Invalid value: " in err.message
    assert err.message.endswith("field is immutable")


@pytest.mark.parametrize(("body", "message"), [
    (pod(containers=[]), 'Pod "web" is invalid: spec.containers: Required value'),
    (pod(containers=[{"name": "app"}]),
     'Pod "web" is invalid: spec.containers[0].image: Required value'),
    (pod(containers=[{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]),
     'Pod "web" is invalid: spec.containers[1].name: Duplicate value: "a"'),
    (pod(restartPolicy="Sometimes"),
     'Pod "web" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": supported '
     'values: "Always", "OnFailure", "Never"'),
    (pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
     'Pod "web" is invalid: spec.tolerations[0].operator: Invalid value: {"key":"k",'
     '"operator":"Exists","value":"v"}: value must be empty when `operator` is \'Exists\''),
    (pod(tolerations=[{"key": "k", "operator": "Equal", "value": "v", "effect": "Sometimes"}]),
     'Pod "web" is invalid: spec.tolerations[0].effect: Unsupported value: "Sometimes": '
     'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'),
    (pod(containers=[{"name": "a", "image": "x", "resources": {
        "limits": {"cpu": "1"}, "requests": {"cpu": "2"}}}]),
     'Pod "web" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be '
     "less than or equal to cpu limit of 1"),
    (pod(containers=[{"name": "a", "image": "x", "resources": {"requests": {"cpu": "-1"}}}]),
     'Pod "web" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
     "must be greater than or equal to 0"),
])
def test_pod_validation(env: Env, body: dict[str, Any], message: str) -> None:
    assert invalid_message(env, "pods", body) == message


def test_invalid_names_and_labels(env: Env) -> None:
    assert invalid_message(env, "configmaps", config_map("Bad_Name")).startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase '
        "RFC 1123 subdomain must consist of")
    body = config_map()
    body["metadata"]["labels"] = {"app": "bad value!"}
    assert invalid_message(env, "configmaps", body).startswith(
        'ConfigMap "cm" is invalid: metadata.labels[app]: Invalid value: "bad value!": a valid '
        "label must be an empty string or consist of alphanumeric characters")
    assert "a valid config key must consist of alphanumeric characters" in \
        invalid_message(env, "configmaps", config_map(**{"bad key": "v"}))


def test_pod_updates_may_not_move_a_pod(env: Env) -> None:
    p = env.create("pods", pod())
    p["spec"]["nodeName"] = "node-1"
    err = env.error("update", "pods", name="web", body=p)
    assert err.code == 422
    assert "spec: Forbidden: pod updates may not change fields other than" in err.message
    p = env.get("pods", "web")
    p["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert env.update("pods", p)["metadata"]["generation"] == 2


def _status_error(env: Env, resource: str, body: dict[str, Any], status: dict[str, Any]) -> str:
    """The message of a refused status update; the stored object stays as it was."""
    live = env.create(resource, body)
    revision = env.store.revision
    live["status"] = status
    meta = live["metadata"]
    err = env.error("update", resource, name=meta["name"], body=live, subresource="status")
    assert (err.code, env.store.revision) == (422, revision), err.message
    return err.message


def _replica_set() -> dict[str, Any]:
    return {**deployment(), "kind": "ReplicaSet"}


@pytest.mark.parametrize(("status", "message"), [
    # As in Go, the missing counts are 0, which is more than -1.
    ({"replicas": -1}, "[status.replicas: Invalid value: -1: must be greater than or equal to 0, "
     + ", ".join(f"status.{f}: Invalid value: 0: cannot be greater than status.replicas"
                 for f in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas")) + "]"),
    ({"replicas": 2, "readyReplicas": 3},
     "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas"),
    ({"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
     "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas"),
    ({"replicas": 1, "fullyLabeledReplicas": 2},
     "status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas"),
])
def test_replica_set_status_validation(env: Env, status: dict[str, Any], message: str) -> None:
    assert _status_error(env, "replicasets", _replica_set(), status) == \
        f'ReplicaSet.apps "web" is invalid: {message}'


def test_deployment_status_validation(env: Env) -> None:
    assert _status_error(env, "deployments", deployment(), {"replicas": 2, "updatedReplicas": 3}) == (
        'Deployment.apps "web" is invalid: status.updatedReplicas: Invalid value: 3: cannot be '
        "greater than status.replicas")
    d = env.get("deployments", "web")
    d["status"] = {"collisionCount": 2}
    env.update("deployments", d, subresource="status")
    d["status"] = {"collisionCount": 1}
    err = env.error("update", "deployments", name="web", body=d, subresource="status")
    assert err.message == ('Deployment.apps "web" is invalid: status.collisionCount: Invalid '
                           "value: 1: cannot be decremented")


@pytest.mark.parametrize(("policy", "exit_code", "refused"), [
    ("Never", 0, True), ("Never", 1, True), ("OnFailure", 0, True), ("OnFailure", 1, False),
    ("Always", 0, False),
])
def test_a_container_that_will_not_restart_stays_terminated(
        env: Env, policy: str, exit_code: int, refused: bool) -> None:
    """ValidateContainerStateTransition: the kubelet may not report it running again."""
    p = env.create("pods", pod(restartPolicy=policy))
    p["status"] = {"containerStatuses": [{"name": "app", "image": "nginx:1.25", "ready": False,
                                          "restartCount": 0, "imageID": "", "state": {
                                              "terminated": {"exitCode": exit_code}}}]}
    p = env.update("pods", p, subresource="status")
    p["status"]["containerStatuses"][0]["state"] = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
    if refused:
        err = env.error("update", "pods", name="web", body=p, subresource="status")
        assert err.message == ('Pod "web" is invalid: status.containerStatuses[0].state: '
                               "Forbidden: may not be transitioned to non-terminated state")
    else:
        assert "running" in env.update("pods", p, subresource="status")["status"][
            "containerStatuses"][0]["state"]


def test_a_sidecar_may_leave_the_terminated_state(env: Env) -> None:
    """An init container with restartPolicy Always restarts whatever the pod's policy."""
    p = env.create("pods", pod(restartPolicy="Never", initContainers=[
        {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}]))
    state = {"name": "proxy", "image": "envoy", "ready": False, "restartCount": 0, "imageID": "",
             "state": {"terminated": {"exitCode": 0}}}
    p["status"] = {"initContainerStatuses": [state]}
    p = env.update("pods", p, subresource="status")
    p["status"]["initContainerStatuses"][0]["state"] = {"running": {}}
    assert env.update("pods", p, subresource="status")["status"]["initContainerStatuses"][0][
        "state"] == {"running": {}}


def test_a_nominated_node_name_must_be_a_node_name(env: Env) -> None:
    assert _status_error(env, "pods", pod(), {"nominatedNodeName": "Node_1"}).startswith(
        'Pod "web" is invalid: status.nominatedNodeName: Invalid value: "Node_1": a lowercase '
        "RFC 1123 subdomain must consist of")


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda p: p["spec"].update(foo=1),
     'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field '
     '"spec.foo"'),
    (lambda p: p["spec"]["containers"][0].update(imagePullPolicyy="Always", bar=1),
     'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field '
     '"spec.containers[0].imagePullPolicyy", unknown field "spec.containers[0].bar"'),
    (lambda p: p["spec"].update(containers="nginx"),
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go '
     "struct field PodSpec.spec.containers of type []v1.Container"),
    (lambda p: p["spec"]["containers"][0].update(command=["sleep", 10]),
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go '
     "struct field Container.spec.containers.command of type string"),
    (lambda p: p["metadata"].update(labels={"a": 1}),
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go '
     "struct field ObjectMeta.metadata.labels of type string"),
    (lambda p: p["spec"]["containers"][0].update(resources={"limits": {"cpu": "lots"}}),
     'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular '
     "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (lambda p: p["spec"].update(terminationGracePeriodSeconds=1.5),
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 1.5 into '
     "Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64"),
    (lambda p: p.update(kind="ConfigMap"),
     'ConfigMap in version "v1" cannot be handled as a Pod: converting (v1.ConfigMap) to '
     "(v1.Pod): unknown conversion"),
    (lambda p: p.update(apiVersion="apps/v1"),
     "the API version in the data (apps/v1) does not match the expected API version (v1)"),
])
def test_strict_decoding(env: Env, mutate: Any, message: str) -> None:
    body = pod()
    mutate(body)
    revision = env.store.revision
    err = env.error("create", "pods", body=body)
    assert (err.code, err.reason, err.message) == (400, "BadRequest", message)
    assert env.server.audit[-1].stage == "decode"
    assert env.store.revision == revision


def test_body_must_be_an_object(env: Env) -> None:
    err = env.error("create", "pods", body=["not", "an", "object"])
    assert err.code == 400
    assert err.message.startswith("couldn't get version/kind; json parse error: json: cannot "
                                  "unmarshal array into Go value of type struct")


def test_the_store_holds_compact_utf8_json(env: Env) -> None:
    """What etcd holds is the object as compact JSON (resourceVersion is the key's revision,
    not part of the bytes), UTF-8 and key order kept, whichever JSON library writes it."""
    created = env.create("configmaps", config_map(greeting="안녕 ✓", n="1"))
    value = env.store.range("/registry/configmaps/default/cm").kvs[0].value
    del created["metadata"]["resourceVersion"]
    assert value == json.dumps(created, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_lone_surrogate_becomes_the_replacement_character(env: Env) -> None:
    """Go's JSON decoder turns half a UTF-16 surrogate pair into U+FFFD; UTF-8 cannot hold it."""
    created = env.create("configmaps", config_map(k="a\ud800b"))
    assert created["data"]["k"] == "a\ufffdb"
    assert env.get("configmaps", "cm")["data"]["k"] == "a\ufffdb"
    body = config_map("other")
    body["metadata"]["annotations"] = {"note": "\udc80 fine"}
    assert env.create("configmaps", body)["metadata"]["annotations"] == {"note": "\ufffd fine"}


def test_an_integer_beyond_64_bits_is_stored_and_read_back_as_a_float(env: Env) -> None:
    """Kubernetes' JSON reader keeps integers that fit in int64 and makes the rest float64."""
    body = config_map()
    body["metadata"]["managedFields"] = [{"big": 2**70, "small": 2**62}]
    env.create("configmaps", body)
    assert env.get("configmaps", "cm")["metadata"]["managedFields"] == \
        [{"big": float(2**70), "small": 2**62}]


def test_missing_kind_and_api_version_default_to_the_endpoints(env: Env) -> None:
    body = config_map()
    del body["kind"], body["apiVersion"]
    created = env.create("configmaps", body)
    assert (created["kind"], created["apiVersion"]) == ("ConfigMap", "v1")


def test_namespace_and_name_must_match_the_request(env: Env) -> None:
    err = env.error("create", "configmaps", "kube-system", body=config_map())
    assert err.message == ("the namespace of the provided object does not match the namespace "
                           "sent on the request")
    env.create("configmaps", config_map())
    err = env.error("update", "configmaps", name="other", body=config_map())
    assert err.message == "the name of the object (cm) does not match the name on the URL (other)"


def test_objects_over_the_size_limits_are_413(env: Env) -> None:
    env.store.max_request_bytes = 64 * 1024
    err = env.error("create", "configmaps", body=config_map(big="x" * 100_000))
    assert (err.code, err.reason) == (413, "RequestEntityTooLarge")
    assert err.message == "Request entity too large: etcdserver: request is too large"
    err = env.error("create", "configmaps", body=config_map(big="x" * (3 * 1024 * 1024)))
    assert err.message == "Request entity too large: limit is 3145728"
    assert env.error("get", "configmaps", name="cm").code == 404


def test_a_custom_admission_plugin_can_mutate_and_refuse(env: Env) -> None:
    class Stamp(AdmissionPlugin):
        name = "Stamp"

        def mutate(self, attrs: Attributes) -> None:
            if attrs.operation == "CREATE" and attrs.object is not None:
                attrs.object["metadata"].setdefault("labels", {})["stamped"] = "yes"

    class NoLatest(AdmissionPlugin):
        name = "NoLatest"

        def validate(self, attrs: Attributes) -> None:
            if attrs.resource == "pods" and attrs.operation == "CREATE":
                for c in (attrs.object or {})["spec"]["containers"]:
                    if c["imagePullPolicy"] == "Always":
                        raise admission_forbidden(attrs, "pin your images")

    env.server.admission.register(Stamp())
    env.server.admission.register(NoLatest())
    assert env.create("pods", pod())["metadata"]["labels"]["stamped"] == "yes"
    body = copy.deepcopy(pod("latest"))
    body["spec"]["containers"][0]["image"] = "nginx"
    err = env.error("create", "pods", body=body)
    assert (err.code, err.message) == (403, 'pods "latest" is forbidden: pin your images')
    record = env.server.audit[-1]
    assert (record.stage, record.plugin) == ("validating-admission", "NoLatest")
    assert env.server.admission.names()[-2:] == ["Stamp", "NoLatest"]


@pytest.mark.parametrize(("spec", "message"), [
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Bogus"}]}]}}}},
     'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms'
     '[0].matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator'),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]}}}},
     "matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
     "'NotIn'"),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": []}}}},
     "nodeSelectorTerms: Required value: must have at least one node selector term"),
    ({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {}}]}}},
     "preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in "
     "the range 1-100"),
    ({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "zone",
                                     "whenUnsatisfiable": "DoNotSchedule"}]},
     "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                     "whenUnsatisfiable": "Maybe"}]},
     'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported '
     'values: "DoNotSchedule", "ScheduleAnyway"'),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                     "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {
                                         "matchExpressions": [{"key": "app", "operator": "Like"}]}}]},
     'labelSelector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector '
     "operator"),
])
def test_scheduling_fields_are_validated_before_the_scheduler_sees_them(
        env: Env, spec: dict[str, Any], message: str) -> None:
    assert message in invalid_message(env, "pods", pod(**spec))
    assert env.server.store.range("/registry/pods/", prefix=True).count == 0
