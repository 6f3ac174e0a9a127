"""Admission webhooks in the simulated cluster: the configurations' validation (upstream's
table), the AdmissionReview and its answer, the dispatch order and reinvocation, each
failurePolicy under a timeout and a webhook that is down, and the outage story."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.apiserver.admission.webhook.errors import to_status_err
from kubelab.apiserver.admission.webhook.request import verify_admission_response
from kubelab.apiserver.apis.validation.admissionregistration import (
    validate_mutating_webhook_configuration,
    validate_validating_webhook_configuration,
)
from kubelab.samples.webhooks import allowed, default_labels, denied, manifests, patched

GROUP = "admissionregistration.k8s.io/v1"

# ---------------------------------------------------------------- validation (validation_test.go)


def _hook(**fields: Any) -> dict[str, Any]:
    hook: dict[str, Any] = {"name": "webhook.k8s.io", "sideEffects": "None",
                            "admissionReviewVersions": ["v1beta1"],
                            "clientConfig": {"url": "https://example.com"}}
    hook.update(fields)
    return {k: v for k, v in hook.items() if v is not None}


def _rule(**fields: Any) -> dict[str, Any]:
    rule = {"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}
    rule.update(fields)
    return {k: v for k, v in rule.items() if v is not None}


def _service(**fields: Any) -> dict[str, Any]:
    return {"service": {"namespace": "ns", "name": "n", "port": 443, **fields}}


# (name, webhooks, expected error text or "" for valid), upstream's
# TestValidateValidatingWebhookConfiguration rows. Go prints a []string value as
# []string{"a", "b"} where kubelab prints JSON, so those rows match the text after it.
VALIDATION_TABLE: list[tuple[str, list[dict[str, Any]], str]] = [
    ("AdmissionReviewVersions are required", [_hook(admissionReviewVersions=None)],
     "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"),
    ("should fail on bad AdmissionReviewVersion value", [_hook(admissionReviewVersions=["0v"])],
     'Invalid value: "0v": a DNS-1035 label'),
    ("should pass on valid AdmissionReviewVersion", [_hook(admissionReviewVersions=["v1beta1"])], ""),
    ("should pass on mix of accepted and unaccepted AdmissionReviewVersion",
     [_hook(admissionReviewVersions=["v1beta1", "invalid-version"])], ""),
    ("should fail on invalid AdmissionReviewVersion", [_hook(admissionReviewVersions=["invalidVersion"])],
     ": must include at least one of v1, v1beta1"),
    ("should fail on duplicate AdmissionReviewVersion",
     [_hook(admissionReviewVersions=["v1beta1", "v1beta1"])],
     'webhooks[0].admissionReviewVersions[1]: Invalid value: "v1beta1": duplicate version'),
    ("all Webhooks must have a fully qualified name",
     [_hook(), _hook(name="k8s.io"), _hook(name="")],
     'webhooks[1].name: Invalid value: "k8s.io": should be a domain with at least three segments '
     "separated by dots"),
    ("all Webhooks must have a fully qualified name (empty)", [_hook(name="")],
     "webhooks[0].name: Required value"),
    ("Webhooks must have unique names when created", [_hook(), _hook()],
     'webhooks[1].name: Duplicate value: "webhook.k8s.io"'),
    ("Operations must not be empty or nil", [_hook(rules=[_rule(operations=[]), _rule(operations=None)])],
     "webhooks[0].rules[0].operations: Required value"),
    ('"" is NOT a valid operation', [_hook(rules=[_rule(operations=["CREATE", ""])])],
     'Unsupported value: ""'),
    ("operation must be either create/update/delete/connect", [_hook(rules=[_rule(operations=["PATCH"])])],
     'Unsupported value: "PATCH"'),
    ("wildcard operation cannot be mixed with other strings",
     [_hook(rules=[_rule(operations=["CREATE", "*"])])],
     "if '*' is present, must not specify other operations"),
    ('resource "*" can co-exist with resources that have subresources',
     [_hook(rules=[_rule(resources=["*", "a/b", "a/*", "*/b"])])], ""),
    ('resource "*" cannot mix with resources that don\'t have subresources',
     [_hook(rules=[_rule(resources=["*", "a"])])],
     "if '*' is present, must not specify other resources without subresources"),
    ("resource a/* cannot mix with a/x", [_hook(rules=[_rule(resources=["a/*", "a/x"])])],
     "webhooks[0].rules[0].resources[1]: Invalid value: \"a/x\": if 'a/*' is present, must not specify a/x"),
    ("resource a/* can mix with a", [_hook(rules=[_rule(resources=["a/*", "a"])])], ""),
    ("resource */a cannot mix with x/a", [_hook(rules=[_rule(resources=["*/a", "x/a"])])],
     "webhooks[0].rules[0].resources[1]: Invalid value: \"x/a\": if '*/a' is present, must not specify x/a"),
    ("resource */* cannot mix with other resources", [_hook(rules=[_rule(resources=["*/*", "a"])])],
     ": if '*/*' is present, must not specify other resources"),
    ('FailurePolicy can only be "Ignore" or "Fail"', [_hook(failurePolicy="other")],
     'webhooks[0].failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"'),
    ("SideEffects are required", [_hook(sideEffects=None)],
     "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"),
    ('SideEffects can only be "None" or "NoneOnDryRun" when created', [_hook(sideEffects="other")],
     'webhooks[0].sideEffects: Unsupported value: "other": supported values: "None", "NoneOnDryRun"'),
    ("both service and URL missing", [_hook(clientConfig={})], "exactly one of"),
    ("both service and URL provided",
     [_hook(clientConfig={"url": "https://example.com", **_service()})], "exactly one of"),
    ("blank URL", [_hook(clientConfig={"url": ""})], "host must be specified"),
    ("wrong scheme", [_hook(clientConfig={"url": "http://example.com"})],
     "'https' is the only allowed URL scheme"),
    ("missing host", [_hook(clientConfig={"url": "https:///fancy/webhook"})], "host must be specified"),
    ("fragment", [_hook(clientConfig={"url": "https://example.com/#bookmark"})],
     '"bookmark": fragments are not permitted'),
    ("query", [_hook(clientConfig={"url": "https://example.com?arg=value"})],
     '"arg=value": query parameters are not permitted'),
    ("user", [_hook(clientConfig={"url": "https://harry.potter@hogwarts.edu/"})],
     '"harry.potter": user information is not permitted'),
    ("just totally wrong", [_hook(clientConfig={"url": "arglebargle"})], "host must be specified"),
    ("path must start with slash", [_hook(clientConfig=_service(path="foo/"))],
     'clientConfig.service.path: Invalid value: "foo/": must start with a \'/\''),
    ("path accepts slash", [_hook(clientConfig=_service(path="/"))], ""),
    ("path accepts no trailing slash", [_hook(clientConfig=_service(path="/foo"))], ""),
    ("path fails //", [_hook(clientConfig=_service(path="//"))],
     'clientConfig.service.path: Invalid value: "//": segment[0] may not be empty'),
    ("path no empty step", [_hook(clientConfig=_service(path="/foo//bar/"))],
     'clientConfig.service.path: Invalid value: "/foo//bar/": segment[1] may not be empty'),
    ("path no empty step 2", [_hook(clientConfig=_service(path="/foo/bar//"))],
     'clientConfig.service.path: Invalid value: "/foo/bar//": segment[2] may not be empty'),
    ("path no non-subdomain", [_hook(clientConfig=_service(path="/apis/foo.bar/v1alpha1/--bad"))],
     'clientConfig.service.path: Invalid value: "/apis/foo.bar/v1alpha1/--bad": segment[3]: a '
     "lowercase RFC 1123 subdomain"),
    ("invalid port 0", [_hook(clientConfig=_service(port=0))],
     "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between "
     "1 and 65535, inclusive"),
    ("invalid port >65535", [_hook(clientConfig=_service(port=65536))],
     "webhooks[0].clientConfig.service.port: Invalid value: 65536: port is not valid: must be "
     "between 1 and 65535, inclusive"),
    ("timeout seconds cannot be greater than 30", [_hook(timeoutSeconds=31)],
     "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"),
    ("timeout seconds cannot be smaller than 1", [_hook(timeoutSeconds=0)],
     "webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds"),
    ("timeout seconds must be positive", [_hook(timeoutSeconds=-1)],
     "webhooks[0].timeoutSeconds: Invalid value: -1: the timeout value must be between 1 and 30 seconds"),
    ("valid timeout seconds", [_hook(timeoutSeconds=1), _hook(name="webhook2.k8s.io", timeoutSeconds=15),
                               _hook(name="webhook3.k8s.io", timeoutSeconds=30)], ""),
    ("single match condition must have a name",
     [_hook(matchConditions=[{"expression": "true"}])],
     "webhooks[0].matchConditions[0].name: Required value"),
    ("single match condition must have a qualified name",
     [_hook(matchConditions=[{"name": "-hello", "expression": "true"}])],
     'webhooks[0].matchConditions[0].name: Invalid value: "-hello": name part must consist of '
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    ("expression is required", [_hook(matchConditions=[{"name": "webhook.k8s.io"}])],
     "webhooks[0].matchConditions[0].expression: Required value"),
    ("expression is required to have some value", [_hook(matchConditions=[{"name": "webhook.k8s.io",
                                                                            "expression": ""}])],
     "webhooks[0].matchConditions[0].expression: Required value"),
    ("unique names same hook", [_hook(matchConditions=[{"name": "webhook.k8s.io", "expression": "true"},
                                                       {"name": "webhook.k8s.io", "expression": "true"}])],
     'matchConditions[1].name: Duplicate value: "webhook.k8s.io"'),
    ("repeat names allowed across different hooks",
     [_hook(matchConditions=[{"name": "webhook.k8s.io", "expression": "true"}]),
      _hook(name="webhook2.k8s.io", matchConditions=[{"name": "webhook.k8s.io", "expression": "true"}])], ""),
    ("max of 64 match conditions",
     [_hook(matchConditions=[{"name": f"a{i}", "expression": "true"} for i in range(65)])],
     "webhooks[0].matchConditions: Too many: 65: must have at most 64 items"),
]


def _errors(webhooks: list[dict[str, Any]], mutating: bool = False) -> str:
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    config = {"apiVersion": GROUP, "kind": kind, "metadata": {"name": "config"}, "webhooks": webhooks}
    validate = validate_mutating_webhook_configuration if mutating else \
        validate_validating_webhook_configuration
    return ", ".join(str(e) for e in validate(config))


@pytest.mark.parametrize(("name", "webhooks", "expected"), VALIDATION_TABLE,
                         ids=[row[0] for row in VALIDATION_TABLE])
@pytest.mark.parametrize("mutating", [False, True], ids=["validating", "mutating"])
def test_upstreams_validation_table(name: str, webhooks: list[dict[str, Any]], expected: str,
                                    mutating: bool) -> None:
    errors = _errors(webhooks, mutating)
    if expected:
        assert expected in errors, errors
    else:
        assert errors == ""


def test_reinvocation_policy_must_be_never_or_if_needed() -> None:
    assert _errors([_hook(reinvocationPolicy="other")], mutating=True) == \
        'webhooks[0].reinvocationPolicy: Unsupported value: "other": supported values: "IfNeeded", "Never"'


def test_an_invalid_configuration_is_refused_with_a_422_and_defaults_are_set() -> None:
    c = Cluster(nodes=1, components=[])
    with pytest.raises(ApiError) as err:
        c.client.create({"apiVersion": GROUP, "kind": "ValidatingWebhookConfiguration",
                         "metadata": {"name": "bad"}, "webhooks": [_hook(timeoutSeconds=40)]})
    assert err.value.code == 422 and err.value.reason == "Invalid"
    assert 'ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid' in err.value.message
    created = c.client.create({"apiVersion": GROUP, "kind": "MutatingWebhookConfiguration",
                               "metadata": {"name": "good"},
                               "webhooks": [_hook(clientConfig=_service(port=None), rules=[_rule()])]})
    hook = created["webhooks"][0]
    assert (hook["failurePolicy"], hook["matchPolicy"], hook["timeoutSeconds"],
            hook["reinvocationPolicy"], hook["namespaceSelector"], hook["objectSelector"],
            hook["rules"][0]["scope"], hook["clientConfig"]["service"]["port"]) == \
        ("Fail", "Equivalent", 10, "Never", {}, {}, "*", 443)


# ---------------------------------------------------------------- the answer (admissionreview_test.go)

V1 = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}
PATCH = "W3sib3AiOiJhZGQiLCJwYXRoIjoiL2ZvbyIsInZhbHVlIjoiYmFyIn1d"  # [{"op":"add","path":"/foo",...}]
RESPONSE_TABLE: list[tuple[str, bool, dict[str, Any], str]] = [
    ("v1 no response", False, {**V1}, "webhook response was absent"),
    ("v1 wrong gvk", False, {"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview",
                             "response": {"uid": "123", "allowed": True}},
     "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview"),
    ("v1 wrong uid", False, {**V1, "response": {"uid": "1234", "allowed": True}},
     'expected response.uid="123"'),
    ("v1 patch without patch type", True, {**V1, "response": {"uid": "123", "allowed": True,
                                                              "patch": PATCH}},
     "webhook returned response.patch but not response.patchType"),
    ("v1 patch type without patch", True, {**V1, "response": {"uid": "123", "allowed": True,
                                                              "patchType": "JSONPatch"}},
     "webhook returned response.patchType but not response.patch"),
    ("v1 empty patch type", True, {**V1, "response": {"uid": "123", "allowed": True, "patch": PATCH,
                                                      "patchType": ""}},
     'webhook returned invalid response.patchType of ""'),
    ("v1 invalid patch type", True, {**V1, "response": {"uid": "123", "allowed": True, "patch": PATCH,
                                                        "patchType": "Foo"}},
     'webhook returned invalid response.patchType of "Foo"'),
    ("v1 validating with patch", False, {**V1, "response": {"uid": "123", "allowed": True,
                                                            "patch": PATCH}},
     "validating webhook may not return response.patch"),
    ("v1 validating with patch type", False, {**V1, "response": {"uid": "123", "allowed": True,
                                                                 "patchType": "JSONPatch"}},
     "validating webhook may not return response.patchType"),
]


@pytest.mark.parametrize(("name", "mutating", "review", "expected"), RESPONSE_TABLE,
                         ids=[row[0] for row in RESPONSE_TABLE])
def test_verify_admission_response_refuses_what_upstream_refuses(
        name: str, mutating: bool, review: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError) as err:
        verify_admission_response("123", mutating, review)
    assert expected in str(err.value)


def test_a_good_answer_is_read_with_its_patch_and_warnings() -> None:
    result = verify_admission_response("123", True, {**V1, "response": {
        "uid": "123", "allowed": True, "patch": PATCH, "patchType": "JSONPatch",
        "warnings": ["careful"], "auditAnnotations": {"k": "v"}}})
    assert (result.allowed, result.patch, result.warnings, result.audit_annotations) == \
        (True, [{"op": "add", "path": "/foo", "value": "bar"}], ["careful"], {"k": "v"})


@pytest.mark.parametrize(("status", "code", "message"), [
    ({"code": 403, "message": "no"}, 403, 'admission webhook "w.k8s.io" denied the request: no'),
    ({"code": 200, "reason": "Nope"}, 400, 'admission webhook "w.k8s.io" denied the request: Nope'),
    (None, 400, 'admission webhook "w.k8s.io" denied the request without explanation'),
])
def test_to_status_err(status: Any, code: int, message: str) -> None:
    err = to_status_err("w.k8s.io", status)
    assert (err.code, err.message) == (code, message)


# ---------------------------------------------------------------- in a cluster

IMAGE = "kubelab.dev/webhook:1"


def _cluster(**servers: Callable[[dict[str, Any]], Any]) -> Cluster:
    c = Cluster(nodes=1)
    for image, handler in servers.items():
        c.webhook_servers.register(image, handler)
    return c


def _install(c: Cluster, name: str, image: str, **options: Any) -> None:
    objects = manifests(name, image, **options)
    c.apply(objects[:2])
    c.run(30)  # the webhook's pod runs and the Service has its endpoint
    c.apply(objects[2:])


def _configmap(c: Cluster, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": name, "namespace": "default", "labels": labels or {}}})


def test_the_review_is_upstreams_and_a_denial_is_in_kube_apiservers_words() -> None:
    seen: list[dict[str, Any]] = []

    def no_bad(review: dict[str, Any]) -> dict[str, Any]:
        seen.append(review)
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        return denied(review, "bad is not allowed") if labels.get("bad") else allowed(review)

    c = _cluster(**{IMAGE: no_bad})
    _install(c, "guard", IMAGE, resources=("configmaps",))
    assert _configmap(c, "fine")["metadata"]["name"] == "fine"
    with pytest.raises(ApiError) as err:
        _configmap(c, "nope", {"bad": "yes"})
    assert (err.value.code, err.value.reason, err.value.message) == (
        403, "Forbidden", 'admission webhook "guard.kubelab.dev" denied the request: bad is not allowed')
    request = seen[0]["request"]
    assert seen[0]["apiVersion"] == "admission.k8s.io/v1" and seen[0]["kind"] == "AdmissionReview"
    assert (request["kind"], request["resource"], request["operation"], request["namespace"],
            request["name"], request["dryRun"], request["oldObject"], request["options"]) == (
        {"group": "", "version": "v1", "kind": "ConfigMap"},
        {"group": "", "version": "v1", "resource": "configmaps"}, "CREATE", "default", "fine", False,
        None, {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"})
    assert "subResource" not in request and request["userInfo"]["username"] == "kubernetes-admin"
    assert len({r["request"]["uid"] for r in seen}) == 2  # a new uid per call
    assert c.exists("configmaps", "fine") and not c.exists("configmaps", "nope")
    # dry run: the webhook is told, and nothing is stored
    c.api.handle(Request("create", "configmaps", "default", token=c.client.token, dry_run=True,
                         body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}}))
    assert seen[-1]["request"]["dryRun"] is True and seen[-1]["request"]["options"]["dryRun"] == ["All"]
    assert not c.exists("configmaps", "dry")


def test_mutating_webhooks_run_after_the_mutating_plugins_and_before_validation() -> None:
    order: list[str] = []

    def mutate(review: dict[str, Any]) -> dict[str, Any]:
        pod = review["request"]["object"]
        order.append("mutating")
        # the built-in plugins ran first: DefaultTolerationSeconds added its tolerations
        assert any(t.get("tolerationSeconds") == 300 for t in pod["spec"]["tolerations"])
        return patched(review, [{"op": "add", "path": "/metadata/labels", "value": {"team": "web"}}])

    def validate(review: dict[str, Any]) -> dict[str, Any]:
        order.append("validating")
        labels = review["request"]["object"]["metadata"].get("labels")
        return allowed(review) if labels == {"team": "web"} else denied(review, f"labels {labels}")

    c = _cluster(**{"m:1": mutate, "v:1": validate})
    _install(c, "labeller", "m:1", mutating=True, namespace_selector={"matchLabels": {"hooks": "on"}})
    _install(c, "checker", "v:1", namespace_selector={"matchLabels": {"hooks": "on"}})
    c.kubectl("create namespace apps")
    c.kubectl("label namespace apps hooks=on")
    c.run(1)  # the serviceaccount controller makes apps/default; the ServiceAccount plugin needs it
    assert "pod/web created" in c.kubectl("-n apps run web --image=nginx")
    assert order == ["mutating", "validating"]
    assert c.get("pods", "web", namespace="apps")["metadata"]["labels"] == {"team": "web"}
    # namespaceSelector: the default namespace is not labelled, so neither webhook is called
    assert "pod/web created" in c.kubectl("run web --image=nginx") and len(order) == 2


def test_configurations_are_called_in_name_order_and_reinvoked_if_needed() -> None:
    calls: list[str] = []

    def watcher(review: dict[str, Any]) -> dict[str, Any]:
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        calls.append("a-watcher:" + ",".join(sorted(labels)))
        return allowed(review)

    def labeller(review: dict[str, Any]) -> dict[str, Any]:
        calls.append("b-labeller")
        return default_labels({"added": "yes"})(review)

    c = _cluster(**{"a:1": watcher, "b:1": labeller})
    _install(c, "b-labeller", "b:1", mutating=True, resources=("configmaps",))
    _install(c, "a-watcher", "a:1", mutating=True, resources=("configmaps",))
    _configmap(c, "never")
    # reinvocationPolicy Never: each once, a-watcher first (configurations sorted by name)
    assert calls == ["a-watcher:", "b-labeller"]
    config = c.get("mutatingwebhookconfigurations", "a-watcher", namespace="")
    config["webhooks"][0]["reinvocationPolicy"] = "IfNeeded"
    c.client.update(config)
    calls.clear()
    created = _configmap(c, "if-needed")
    # b-labeller changed the object after a-watcher saw it: a-watcher is called once more
    assert calls == ["a-watcher:", "b-labeller", "a-watcher:added"]
    assert created["metadata"]["labels"] == {"added": "yes"}


def _slow(c: Cluster) -> None:
    c.faults.slow_webhook(IMAGE, 15)  # past the webhook's timeoutSeconds (10)


def _broken(c: Cluster) -> None:
    c.faults.break_webhook(IMAGE)


def _gone(c: Cluster) -> None:
    c.kubectl("scale deployment guard --replicas=0")
    c.run(30)


FAULTS = {
    "timeout": (_slow, 'Post "https://guard.default.svc:443/admit?timeout=10s": context deadline exceeded'),
    "refused": (_broken, "connect: connection refused"),
    "no-endpoints": (_gone, 'Post "https://guard.default.svc:443/admit?timeout=10s": no endpoints '
                            'available for service "guard"'),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_each_failure_policy_under_each_fault(fault: str, policy: str) -> None:
    c = _cluster(**{IMAGE: lambda review: denied(review, "never")})
    _install(c, "guard", IMAGE, resources=("configmaps",), failure_policy=policy)
    with pytest.raises(ApiError, match="denied the request: never"):
        _configmap(c, "before")  # the webhook works: it denies
    breaks, words = FAULTS[fault]
    breaks(c)
    if policy == "Ignore":
        assert _configmap(c, "after")["metadata"]["name"] == "after"  # fails open
        plugin = next(p for p in c.apiserver.admission.plugins if p.name == "ValidatingAdmissionWebhook")
        assert plugin.audit_annotations[-1] == {
            "failed-open.validating.webhook.admission.k8s.io/round_0_index_0": "guard.kubelab.dev"}
        return
    with pytest.raises(ApiError) as err:
        _configmap(c, "after")
    assert (err.value.code, err.value.reason) == (500, "InternalError")
    assert err.value.message.startswith(
        'Internal error occurred: failed calling webhook "guard.kubelab.dev": failed to call '
        "webhook: Post "), err.value.message
    assert words in err.value.message
    audit = c.apiserver.audit[-1]
    assert (audit.stage, audit.plugin, audit.code) == (
        "validating-admission", "ValidatingAdmissionWebhook", 500)


def test_a_webhook_whose_handler_raises_fails_like_a_500_from_its_server() -> None:
    def broken(review: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("labels")

    c = _cluster(**{IMAGE: broken})
    _install(c, "guard", IMAGE, resources=("configmaps",))
    with pytest.raises(ApiError) as err:
        _configmap(c, "x")
    assert err.value.code == 500 and 'an error on the server ("KeyError: \'labels\'")' in err.value.message


def test_match_conditions_skip_a_webhook_or_fail_by_its_policy() -> None:
    c = _cluster(**{IMAGE: lambda review: denied(review, "no")})
    _install(c, "guard", IMAGE, resources=("configmaps",))
    config = c.get("validatingwebhookconfigurations", "guard", namespace="")
    config["webhooks"][0]["matchConditions"] = [
        {"name": "only-labelled",
         "expression": "has(object.metadata.labels) && 'check' in object.metadata.labels"}]
    c.client.update(config)
    assert _configmap(c, "skipped")["metadata"]["name"] == "skipped"
    with pytest.raises(ApiError, match="denied the request: no"):
        _configmap(c, "checked", {"check": "yes"})
    config = c.get("validatingwebhookconfigurations", "guard", namespace="")
    config["webhooks"][0]["matchConditions"] = [{"name": "broken", "expression": "object.spec.missing == 1"}]
    c.client.update(config)
    with pytest.raises(ApiError) as err:
        _configmap(c, "error")
    assert err.value.code == 403 and 'configmaps "error" is forbidden: failed to evaluate match conditions' \
        in err.value.message


def test_the_outage_story_a_fail_webhook_without_pods_blocks_every_create_it_matches() -> None:
    """cert-manager's classic: its webhook's pods are gone, failurePolicy is Fail, and nothing
    it matches can be created, not even by the controllers; the configurations themselves are
    exempt, so deleting the configuration ends the outage."""
    c = _cluster(**{IMAGE: default_labels({"injected": "yes"})})
    _install(c, "injector", IMAGE, mutating=True, namespace_selector={"matchLabels": {"inject": "on"}})
    c.kubectl("create namespace apps")
    c.kubectl("label namespace apps inject=on")
    c.kubectl("-n apps create deployment web --image=nginx:1.27")
    c.run(30)
    assert [p["metadata"]["labels"].get("injected") for p in c.get("pods", namespace="apps")] == ["yes"]
    c.kubectl("scale deployment injector --replicas=0")  # the webhook's own pods are gone
    c.run(30)
    out = c.kubectl("-n apps run one --image=nginx")
    assert out.startswith('Error from server (InternalError): Internal error occurred: failed calling '
                          'webhook "injector.kubelab.dev": failed to call webhook: Post '
                          '"https://injector.default.svc:443/admit?timeout=10s": no endpoints available '
                          'for service "injector"'), out
    c.kubectl("-n apps scale deployment web --replicas=3")
    c.run(30)
    assert len(c.get("pods", namespace="apps")) == 1  # the ReplicaSet controller is blocked too
    assert "FailedCreate" in c.kubectl("-n apps get events")
    # the fix: the configuration is not subject to webhooks, so it can always be deleted
    assert "deleted" in c.kubectl("delete mutatingwebhookconfiguration injector")
    c.run(60)
    assert len(c.get("pods", namespace="apps")) == 3


def test_webhooks_never_see_webhook_configurations() -> None:
    calls: list[str] = []

    def everything(review: dict[str, Any]) -> dict[str, Any]:
        calls.append(review["request"]["resource"]["resource"])
        return denied(review, "no")

    c = _cluster(**{IMAGE: everything})
    objects = manifests("all", IMAGE, resources=("*",))
    objects[2]["webhooks"][0]["rules"] = [{"operations": ["*"], "apiGroups": ["*"],
                                           "apiVersions": ["*"], "resources": ["*"]}]
    c.apply(objects[:2])
    c.run(30)
    c.apply(objects[2:])
    other = copy.deepcopy(objects[2])
    other["metadata"]["name"] = "another"
    c.client.create(other)
    assert c.kubectl("delete validatingwebhookconfiguration all").startswith("validatingwebhookconfiguration")
    assert calls == []


def test_the_same_seed_gives_the_same_trace() -> None:
    def run() -> list[str]:
        c = _cluster(**{IMAGE: default_labels({"a": "b"})})
        _install(c, "m", IMAGE, mutating=True, resources=("configmaps",))
        c.faults.slow_webhook(IMAGE, 2)
        _configmap(c, "x")
        return c.trace.text().splitlines()

    first = run()
    assert any(line.split()[2:4] == ["webhook", "m.kubelab.dev"] and "latency=2" in line
               for line in first), first[-5:]
    assert first == run()


def test_the_sequence_diagram_draws_the_webhook_call_between_admission_and_storage() -> None:
    from kubelab.viz.sequence import SequenceDiagram

    c = _cluster(**{IMAGE: default_labels({"team": "unowned"})})
    _install(c, "default-team", IMAGE, mutating=True)
    mark = len(c.trace)
    c.kubectl("run hello --image=nginx:1.27")
    lines = [line.split("s  ", 1)[1] for line in
             SequenceDiagram(list(c.trace)[mark:], related="hello").text().splitlines()]
    assert lines[:3] == ["kubectl -> API server: create pods/hello",
                         "API server -> webhook: AdmissionReview default-team.kubelab.dev",
                         "API server -> etcd: txn pods/hello"]
