"""ValidatingAdmissionPolicy and its binding: matching, CEL over object/oldObject/request/
params/namespaceObject/variables, the three actions and failurePolicy, in upstream's words
(k8s.io/apiserver pkg/admission/plugin/policy/validating)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_apiserver_support import Env, config_map, deployment

from kubelab.api.errors import ApiError
from kubelab.api.yamlio import load_objects
from kubelab.apiserver.admission.policy import ValidatingAdmissionPolicy

Object = dict[str, Any]
GROUP = "admissionregistration.k8s.io"

# The course's sample: every Deployment in a team namespace carries a team label.
TEAM_LABEL = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: require-team-label}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
    namespaceSelector:
      matchExpressions: [{key: team, operator: Exists}]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    messageExpression: "'Deployment ' + object.metadata.name + ' needs a team label'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: require-team-label-binding}
spec:
  policyName: require-team-label
  validationActions: [Deny]
"""


def create(env: Env, resource: str, obj: Object) -> Object:
    return env.create(resource, obj, namespace="", group=GROUP)


def install(env: Env, text: str = TEAM_LABEL) -> None:
    for obj in load_objects(text):
        resource = "validatingadmissionpolicies" if obj["kind"] == "ValidatingAdmissionPolicy" \
            else "validatingadmissionpolicybindings"
        create(env, resource, obj)


def namespace(env: Env, name: str, **labels: str) -> None:
    env.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": name, "labels": labels}}, namespace="")


def in_ns(obj: Object, ns: str, **labels: str) -> Object:
    obj = copy.deepcopy(obj)
    obj["metadata"]["namespace"] = ns
    if labels:
        obj["metadata"]["labels"] = labels
    return obj


def plugin(env: Env) -> ValidatingAdmissionPolicy:
    found = [p for p in env.server.admission.plugins if p.name == "ValidatingAdmissionPolicy"]
    assert len(found) == 1
    assert isinstance(found[0], ValidatingAdmissionPolicy)
    return found[0]


@pytest.fixture
def env() -> Env:
    env = Env()
    namespace(env, "payments", team="payments")
    namespace(env, "scratch")
    install(env)
    return env


def test_the_team_label_policy_denies_in_upstreams_words(env: Env) -> None:
    err = env.error("create", "deployments", "payments", body=in_ns(deployment("web"), "payments"))
    text = ("ValidatingAdmissionPolicy 'require-team-label' with binding "
            "'require-team-label-binding' denied request: Deployment web needs a team label")
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message == f'deployments.apps "web" is forbidden: {text}'
    assert err.details == {"kind": "deployments", "name": "web", "group": "apps",
                           "causes": [{"message": text}]}
    assert err.kubectl_message() == f'The deployments "web" is invalid: : {text}'
    assert env.server.audit[-1].plugin == "ValidatingAdmissionPolicy"
    assert env.req("list", "deployments", "payments")["items"] == []


def test_it_lets_labelled_deployments_and_other_namespaces_through(env: Env) -> None:
    env.create("deployments", in_ns(deployment("web"), "payments", team="payments"),
               namespace="payments")
    env.create("deployments", in_ns(deployment("tmp"), "scratch"), namespace="scratch")
    env.create("configmaps", in_ns(config_map("c"), "payments"), namespace="payments")
    # An update that drops the label is an UPDATE the policy also matches.
    live = env.get("deployments", "web", "payments")
    live["metadata"]["labels"] = {}
    assert env.error("update", "deployments", "payments", "web", body=live).code == 422


def test_without_a_binding_a_policy_does_nothing() -> None:
    env = Env()
    namespace(env, "payments", team="payments")
    install(env, TEAM_LABEL.split("---")[0])
    env.create("deployments", in_ns(deployment("web"), "payments"), namespace="payments")


POLICY = {"apiVersion": f"{GROUP}/v1", "kind": "ValidatingAdmissionPolicy",
          "metadata": {"name": "p"},
          "spec": {"matchConstraints": {"resourceRules": [
              {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
               "resources": ["configmaps"]}]},
              "validations": []}}


def binding(*actions: str, **spec: Any) -> Object:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "b"},
            "spec": {"policyName": "p", "validationActions": list(actions), **spec}}


def policy(*validations: Object, **spec: Any) -> Object:
    p = copy.deepcopy(POLICY)
    p["spec"]["validations"] = list(validations)
    p["spec"].update(spec)
    return p


def serve(policy_obj: Object, binding_obj: Object) -> Env:
    env = Env()
    create(env, "validatingadmissionpolicies", policy_obj)
    create(env, "validatingadmissionpolicybindings", binding_obj)
    return env


def cm(**data: str) -> Object:
    obj = config_map("c")
    obj["data"] = data
    return obj


@pytest.mark.parametrize(("validation", "message"), [
    ({"expression": "object.data.size() < 2"}, "failed expression: object.data.size() < 2"),
    ({"expression": "object.data.size() < 2", "message": "too much data"}, "too much data"),
    ({"expression": "object.data.size() < 2", "message": "m",
      "messageExpression": "'has ' + string(object.data.size()) + ' keys'"}, "has 2 keys"),
    ({"expression": "object.data.size() < 2", "message": "m", "messageExpression": "''"}, "m"),
])
def test_messages(validation: Object, message: str) -> None:
    env = serve(policy(validation), binding("Deny"))
    err = env.error("create", "configmaps", body=cm(a="1", b="2"))
    assert err.message == ('configmaps "c" is forbidden: ValidatingAdmissionPolicy \'p\' with '
                           f"binding 'b' denied request: {message}")


def test_reason_sets_the_code() -> None:
    env = serve(policy({"expression": "false", "reason": "Forbidden"}), binding("Deny"))
    err = env.error("create", "configmaps", body=cm())
    assert (err.code, err.reason) == (403, "Forbidden")


def test_warn_and_audit_record_instead_of_denying() -> None:
    env = serve(policy({"expression": "false", "message": "no"}), binding("Warn", "Audit"))
    env.create("configmaps", cm())
    vap = plugin(env)
    assert vap.warnings == ["Validation failed for ValidatingAdmissionPolicy 'p' with binding "
                            "'b': no"]
    assert vap.audit_annotations == [{
        "validation.policy.admission.k8s.io/validation_failure":
            '[{"message":"no","policy":"p","binding":"b","expressionIndex":0,'
            '"validationActions":["Warn","Audit"]}]'}]


def test_old_object_request_and_variables() -> None:
    env = serve(policy(
        {"expression": "request.operation != 'UPDATE' || oldObject.data.owner == "
                       "object.data.owner", "message": "owner is immutable"},
        {"expression": "variables.owner == request.userInfo.username",
         "messageExpression": "'owner must be ' + request.userInfo.username"},
        variables=[{"name": "owner", "expression": "object.data.owner"}]), binding("Deny"))
    err = env.error("create", "configmaps", body=cm(owner="bob"))
    assert err.message.endswith("denied request: owner must be admin")
    made = env.create("configmaps", cm(owner="admin"))
    made["data"]["owner"] = "eve"
    err = env.error("update", "configmaps", name="c", body=made)
    assert err.message.endswith("denied request: owner is immutable")


def test_params_from_a_config_map() -> None:
    limits = config_map("limits")
    limits["data"] = {"maxKeys": "1"}
    ref = {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"}
    checked = policy({"expression": "object.data.size() <= int(params.data.maxKeys)"},
                     paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    env = serve(checked, binding("Deny", paramRef=ref))
    err = env.error("create", "configmaps", body=cm(a="1"))
    assert err.message.endswith("denied request: failed to configure binding: no params found "
                                "for policy binding with `Deny` parameterNotFoundAction")
    allow = serve(checked, binding("Deny", paramRef={**ref, "parameterNotFoundAction": "Allow"}))
    allow.create("configmaps", cm(a="1", b="2"))
    env = Env()
    env.create("configmaps", limits)
    create(env, "validatingadmissionpolicies", checked)
    create(env, "validatingadmissionpolicybindings", binding("Deny", paramRef=ref))
    env.create("configmaps", cm(a="1"))
    err = env.error("create", "configmaps", body={**cm(a="1", b="2"), "metadata": {
        "name": "d", "namespace": "default"}})
    assert err.message.endswith("failed expression: object.data.size() <= int(params.data.maxKeys)")


def test_failure_policy_decides_about_errors() -> None:
    failing = {"expression": "object.data.missing == 'x'"}
    env = serve(policy(failing), binding("Deny"))
    err = env.error("create", "configmaps", body=cm())
    assert err.message.endswith("denied request: expression 'object.data.missing == 'x'' "
                                "resulted in error: no such key: missing")
    env = serve(policy(failing, failurePolicy="Ignore"), binding("Deny"))
    env.create("configmaps", cm())


def test_selectors_and_exclusions() -> None:
    constraints = {"resourceRules": POLICY["spec"]["matchConstraints"]["resourceRules"],
                   "objectSelector": {"matchLabels": {"checked": "yes"}},
                   "excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["*"],
                                             "operations": ["*"], "resources": ["configmaps"],
                                             "resourceNames": ["free"]}]}
    env = serve(policy({"expression": "false"}, matchConstraints=constraints), binding("Deny"))
    env.create("configmaps", cm())  # no label: not selected
    checked = cm()
    checked["metadata"]["labels"] = {"checked": "yes"}
    assert env.error("create", "configmaps", body=checked).code == 422
    free = copy.deepcopy(checked)
    free["metadata"]["name"] = "free"
    env.create("configmaps", free)
    # A binding's matchResources narrows the policy further.
    narrow = serve(policy({"expression": "false"}),
                   binding("Deny", matchResources={"namespaceSelector": {
                       "matchLabels": {"kubernetes.io/metadata.name": "nowhere"}}}))
    narrow.create("configmaps", cm())


@pytest.mark.parametrize(("resource", "obj", "message"), [
    ("validatingadmissionpolicies", policy(),
     "spec.validations: Required value: validations or auditAnnotations must contain at least "
     "one item"),
    ("validatingadmissionpolicies", policy({"expression": "true"}, failurePolicy="Sometimes"),
     'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'),
    # validateValidation, CompileCELExpression (k8s.io/apiserver pkg/admission/plugin/cel)
    ("validatingadmissionpolicies", policy({"expression": "object.data.x =="}),
     'spec.validations[0].expression: Invalid value: "object.data.x ==": compilation failed: '
     "ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>'\n | object.data.x ==\n | "
     "................^"),
    ("validatingadmissionpolicies", policy({"expression": "size(object.data) + 1"}),
     'spec.validations[0].expression: Invalid value: "size(object.data) + 1": must evaluate to '
     "bool"),
    ("validatingadmissionpolicies", policy({"expression": "'a'"}),
     "spec.validations[0].expression: Invalid value: \"'a'\": must evaluate to bool"),
    ("validatingadmissionpolicies", policy({"expression": "true", "messageExpression": "1 + 1"}),
     'spec.validations[0].messageExpression: Invalid value: "1 + 1": must evaluate to string'),
    ("validatingadmissionpolicies", policy({"expression": "true", "messageExpression": "'a' +"}),
     "spec.validations[0].messageExpression: Invalid value: \"'a' +\": compilation failed: "
     "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>'\n | 'a' +\n | .....^"),
    ("validatingadmissionpolicies", policy({"expression": "params.x == 1"}),
     'spec.validations[0].expression: Invalid value: "params.x == 1": compilation failed: '
     "ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1"
     "\n | ^"),
    # composition: a variable sees only the ones before it, so a cycle cannot compile
    ("validatingadmissionpolicies", policy({"expression": "true"}, variables=[
        {"name": "a", "expression": "variables.b"}, {"name": "b", "expression": "variables.a"}]),
     '[spec.variables[0].expression: Invalid value: "variables.b": compilation failed: ERROR: '
     "<input>:1:10: undefined field 'b'\n | variables.b\n | .........^, "
     'spec.variables[1].expression: Invalid value: "variables.a": compilation failed: ERROR: '
     "<input>:1:10: undefined field 'a'\n | variables.a\n | .........^]"),
    ("validatingadmissionpolicies", policy({"expression": "true"}, variables=[
        {"name": "a", "expression": "variables.a"}]),
     'spec.variables[0].expression: Invalid value: "variables.a": compilation failed: ERROR: '
     "<input>:1:10: undefined field 'a'\n | variables.a\n | .........^"),
    ("validatingadmissionpolicies", policy({"expression": "true"}, variables=[
        {"name": "a-b", "expression": "1"}]),
     'spec.variables[0].name: Invalid value: "a-b": name is not a valid CEL identifier'),
    # validateRuleWithOperations
    ("validatingadmissionpolicies", policy({"expression": "true"}, matchConstraints={
        "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["PATCH"],
                           "resources": ["configmaps"]}]}),
     'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "PATCH": '
     'supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'),
    ("validatingadmissionpolicybindings", binding(),
     "spec.validationActions: Required value: at least one validation action is required"),
    ("validatingadmissionpolicybindings", binding("Block"),
     'spec.validationActions[0]: Unsupported value: "Block": supported values: "Audit", "Deny", '
     '"Warn"'),
    ("validatingadmissionpolicybindings", binding("Deny", paramRef={"name": "x"}),
     "spec.paramRef.parameterNotFoundAction: Required value"),
])
def test_bad_policies_and_bindings_are_refused(resource: str, obj: Object, message: str) -> None:
    env = Env()
    err = env.error("create", resource, "", body=obj, group=GROUP)
    assert err.code == 422 and err.message.split(" is invalid: ", 1)[1] == message


def test_variables_compose_in_order() -> None:
    env = serve(policy({"expression": "variables.b == 'xy'"}, variables=[
        {"name": "a", "expression": "object.data.v"},
        {"name": "b", "expression": "variables.a + 'y'"}]), binding("Deny"))
    env.create("configmaps", {**cm(), "data": {"v": "x"}})
    assert env.error("create", "configmaps", body={**cm(), "metadata": {
        "name": "d", "namespace": "default"}, "data": {"v": "z"}}).code == 422


def test_policies_do_not_apply_to_policies() -> None:
    everything = {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                                     "operations": ["*"], "resources": ["*"]}]}
    env = serve(policy({"expression": "false"}, matchConstraints=everything), binding("Deny"))
    assert env.error("create", "configmaps", body=cm()).code == 422
    env.req("delete", "validatingadmissionpolicybindings", "", "b", group=GROUP)
    env.create("configmaps", cm())


def test_a_second_api_server_sees_a_new_binding_through_its_watch_cache() -> None:
    from kubelab.api.request import Request
    from kubelab.apiserver import APIServer
    env = Env()
    create(env, "validatingadmissionpolicies", policy({"expression": "false"}))
    other = APIServer(env.store, env.clock, env.server.rand)
    token = other.token_for("admin")
    other.handle(Request("create", "configmaps", namespace="default", token=token,
                         body=cm()))  # reads (and caches) the policies: no binding yet
    create(env, "validatingadmissionpolicybindings", binding("Deny"))
    env.settle()
    second = {**cm(), "metadata": {"name": "d", "namespace": "default"}}
    with pytest.raises(ApiError) as err:
        other.handle(Request("create", "configmaps", namespace="default", token=token,
                             body=second))
    assert err.value.code == 422
