"""Issue 28: input kubelab accepted that upstream refuses gets upstream's error and changes
nothing; input upstream itself accepts is kept, each with the upstream rule that says so."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from test_apiserver_support import Env, node, pod
from test_crd_schema import crd

from kubelab.api.errors import ApiError

Object = dict[str, Any]
AX = "apiextensions.k8s.io"
CRD = 'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: '
CRD_400 = ('CustomResourceDefinition in version "v1" cannot be handled as a '
           "CustomResourceDefinition: json: cannot unmarshal string into Go struct field "
           "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.")
APPROVAL = ('metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups '
            'must have approval annotation "api-approved.kubernetes.io", see '
            "https://github.com/kubernetes/enhancements/pull/1111")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
           "with an alphabetic character, and end with an alphanumeric character (e.g. "
           "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def _crd(schema: Object | None = None, edit: Callable[[Object], None] | None = None) -> Object:
    definition = crd(schema or {"type": "object"})
    if edit is not None:
        edit(definition)
    return definition


def _group(group: str, annotation: str | None = None) -> Callable[[Object], None]:
    def edit(d: Object) -> None:
        d["metadata"]["name"] = f"widgets.{group}"
        d["spec"]["group"] = group
        if annotation is not None:
            d["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotation}
    return edit


def _set(path: str, value: Any) -> Callable[[Object], None]:
    def edit(d: Object) -> None:
        *head, last = path.split(".")
        target: Any = d
        for key in head:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[last] = value
    return edit


def crd_refused(definition: Object) -> ApiError:
    env = Env()
    with pytest.raises(ApiError) as info:
        env.create("customresourcedefinitions", definition, namespace="", group=AX)
    assert env.req("list", "customresourcedefinitions", namespace="", group=AX)["items"] == []
    return info.value


@pytest.mark.parametrize(("definition", "code", "message"), [
    (_crd({"type": "integer", "minimum": "zero"}), 400,
     CRD_400 + "minimum of type float64"),
    (_crd({"type": "object", "x-kubernetes-preserve-unknown-fields": "yes"}), 400,
     CRD_400 + "x-kubernetes-preserve-unknown-fields of type bool"),
    (_crd(edit=_set("spec.conversion", {"strategy": "Magic"})), 422,
     CRD + 'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", '
     '"Webhook"'),
    (_crd(edit=_set("spec.conversion", {})), 422,
     CRD + "spec.conversion.strategy: Required value"),
    (_crd(edit=_group("foo.k8s.io")), 422,
     'CustomResourceDefinition.apiextensions.k8s.io "widgets.foo.k8s.io" is invalid: '
     + APPROVAL),
    (_crd(edit=_group("kubernetes.io")), 422,
     'CustomResourceDefinition.apiextensions.k8s.io "widgets.kubernetes.io" is invalid: '
     + APPROVAL),
    (_crd(edit=_group("x.k8s.io", "maybe")), 422,
     'CustomResourceDefinition.apiextensions.k8s.io "widgets.x.k8s.io" is invalid: '
     'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "maybe": protected '
     'groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a '
     'reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111'),
    (_crd(edit=_set("spec.versions.0.name", "V1_x")), 422,
     CRD + f'spec.versions[0].name: Invalid value: "V1_x": {DNS1035}'),
    (_crd(edit=_set("spec.versions.0.name", "1beta")), 422,
     CRD + f'spec.versions[0].name: Invalid value: "1beta": {DNS1035}'),
])
def test_crds_upstream_refuses(definition: Object, code: int, message: str) -> None:
    err = crd_refused(definition)
    assert (err.code, err.message) == (code, message)


@pytest.mark.parametrize("edit", [
    _group("foo.k8s.io", "https://github.com/kubernetes/enhancements/pull/1111"),
    _group("foo.k8s.io", "unapproved, experimental"),
    _group("example.kubernetes.io.example.com"),
    _set("spec.conversion", {"strategy": "None"}),
    _set("spec.versions.0.name", "v1beta1"),
])
def test_crds_upstream_accepts(edit: Callable[[Object], None]) -> None:
    Env().create("customresourcedefinitions", _crd(edit=edit), namespace="", group=AX)


def test_an_endpoint_slice_holds_addresses_of_its_family() -> None:
    env = Env()
    revision = env.store.revision

    def body(address_type: str, address: str) -> Object:
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "e", "namespace": "default"}, "addressType": address_type,
                "endpoints": [{"addresses": [address]}]}
    for address_type, address in (("IPv4", "fd00::1"), ("IPv6", "10.0.0.1")):
        with pytest.raises(ApiError) as info:
            env.create("endpointslices", body(address_type, address), group="discovery.k8s.io")
        assert info.value.message == (f'EndpointSlice.discovery.k8s.io "e" is invalid: '
                                      f'endpoints[0].addresses[0]: Invalid value: "{address}": '
                                      f"must be an {address_type} address")
    assert env.store.revision == revision
    env.create("endpointslices", body("IPv6", "fd00::1"), group="discovery.k8s.io")


# ------------------------------------------------- what upstream itself accepts, kept as it is


def _job(**spec: Any) -> Object:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox"}]}}, **spec}}


def test_job_rules_are_upstreams() -> None:
    env = Env()
    # validateJobSpec: ValidateNonnegativeField(activeDeadlineSeconds): 0 is allowed.
    assert env.create("jobs", _job(activeDeadlineSeconds=0), group="batch")["spec"][
        "activeDeadlineSeconds"] == 0
    err = env.error("create", "jobs", body=_job(activeDeadlineSeconds=-1), group="batch")
    assert err.message.endswith("spec.activeDeadlineSeconds: Invalid value: -1: must be "
                                "greater than or equal to 0")
    # SetDefaults_Job: with neither completions nor parallelism both default to 1, so Indexed
    # has its completions; with parallelism alone it has none.
    indexed = _job(completionMode="Indexed")
    indexed["metadata"]["name"] = "i"
    assert env.create("jobs", indexed, group="batch")["spec"]["completions"] == 1
    err = env.error("create", "jobs", body=_job(completionMode="Indexed", parallelism=2),
                    group="batch")
    assert err.message == ('Job.batch "j" is invalid: spec.completions: Required value: when '
                           "completion mode is Indexed")


def _service(**spec: Any) -> Object:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"selector": {"a": "b"}, "ports": [{"port": 80}], **spec}}


def test_service_rules_are_upstreams() -> None:
    env = Env()
    err = env.error("create", "services", body=_service(type="ExternalName", ports=None,
                                                         selector=None, externalName="not ok!"))
    assert err.message.startswith('Service "s" is invalid: spec.externalName: Invalid value: '
                                  '"not ok!": a lowercase RFC 1123 subdomain must consist of')
    err = env.error("create", "services", body=_service(
        sessionAffinity="ClientIP", sessionAffinityConfig={"clientIP": {"timeoutSeconds": 10**9}}))
    assert err.message == ('Service "s" is invalid: spec.sessionAffinityConfig.clientIP.'
                           "timeoutSeconds: Invalid value: 1000000000: must be greater than 0 "
                           "and less than 86400")
    # ValidateService checks externalName only for type ExternalName; on a ClusterIP Service
    # it is stored and ignored.
    assert env.create("services", _service(externalName="foo.example.com"))["spec"][
        "externalName"] == "foo.example.com"


def _plc(**queuing: int) -> Object:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "pl"}, "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": 5, "limitResponse": {"type": "Queue", "queuing": {
                    "queues": 64, "handSize": 6, "queueLengthLimit": 50, **queuing}}}}}


@pytest.mark.parametrize(("queuing", "message"), [
    ({"queues": 0, "handSize": -1}, "handSize: Invalid value: -1: must be positive"),
    ({"handSize": -1}, "handSize: Invalid value: -1: must be positive"),
    ({"queues": 4, "handSize": 8}, "handSize: Invalid value: 8: should not be greater than "
     "queues (4)"),
    ({"queues": 10**6, "handSize": 40}, "handSize: Invalid value: 40: required entropy bits of "
     "deckSize 1000000 and handSize 40 should not be greater than 60"),
])
def test_priority_level_queuing_is_refused(queuing: dict[str, int], message: str) -> None:
    err = Env().error("create", "prioritylevelconfigurations", namespace="", body=_plc(**queuing),
                      group="flowcontrol.apiserver.k8s.io")
    assert err.message == ('PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "pl" is '
                           f"invalid: spec.limited.limitResponse.queuing.{message}")


def test_zero_queues_and_hand_size_are_defaulted() -> None:
    # SetDefaults_QueuingConfiguration: 0 is "unset" and becomes 64 queues, hand size 8.
    out = Env().create("prioritylevelconfigurations", _plc(queues=0, handSize=0), namespace="",
                       group="flowcontrol.apiserver.k8s.io")
    assert out["spec"]["limited"]["limitResponse"]["queuing"]["queues"] == 64
    assert out["spec"]["limited"]["limitResponse"]["queuing"]["handSize"] == 8


def test_label_values_decode_as_upstreams_typed_decode() -> None:
    env = Env()
    body = pod()
    body["metadata"]["labels"] = {"app": 5}
    err = env.error("create", "pods", body=body)
    assert (err.code, err.message) == (400, 'Pod in version "v1" cannot be handled as a Pod: '
                                       "json: cannot unmarshal number into Go struct field "
                                       "ObjectMeta.metadata.labels of type string")
    body["metadata"]["labels"] = {"app": None}  # Go decodes null into a map as ""
    assert env.create("pods", body)["metadata"]["labels"] == {"app": ""}


@pytest.mark.parametrize(("name", "value", "stored"), [
    ("cpu", "1e1000", "10e999"),  # ParseQuantity caps only BinarySI amounts
    ("memory", "99999Ei", "9223372036854775807"),  # capped at maxAllowed (2^63-1)
])
def test_huge_quantities_are_parsed_as_upstream(name: str, value: str, stored: str) -> None:
    body = pod()
    body["spec"]["containers"][0]["resources"] = {"requests": {name: value}}
    out = Env().create("pods", body)
    assert out["spec"]["containers"][0]["resources"]["requests"][name] == stored


def test_a_negative_grace_period_is_one_second() -> None:
    # rest.BeforeDelete: "Negative values will be treated as the value `1s`".
    env = Env()
    env.create("nodes", node(), namespace="")
    env.create("pods", pod(nodeName="node-1"))
    assert env.delete("pods", "web", gracePeriodSeconds=-5)["metadata"][
        "deletionGracePeriodSeconds"] == 1


def test_status_phase_and_binding_are_not_checked_upstream() -> None:
    env = Env()
    env.create("pods", pod())
    live = env.get("pods", "web")
    bogus = copy.deepcopy(live)
    bogus["status"] = {"phase": "Bogus"}
    # ValidatePodStatusUpdate has no rule for the phase's value.
    env.req("update", "pods", "default", "web", body=bogus, subresource="status")
    assert env.get("pods", "web")["status"]["phase"] == "Bogus"
    # BindingREST.Create / assignPod set spec.nodeName without looking the node up.
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
               "target": {"kind": "Node", "name": "nope"}}
    assert env.req("create", "pods", "default", "web", body=binding,
                   subresource="binding")["status"] == "Success"
    assert env.get("pods", "web")["spec"]["nodeName"] == "nope"


def test_int_or_string_with_a_type_is_typed_integer_or_string() -> None:
    # Upstream has no rule against `type` beside x-kubernetes-int-or-string (ValidateStructural
    # asks only that an untyped field be int-or-string); ConvertJSONSchemaPropsWithPostProcess
    # (pkg/apiserver/validation/validation.go) replaces the type with [integer, string].
    env = Env()
    env.create("customresourcedefinitions", _crd({"type": "object", "properties": {
        "port": {"type": "string", "x-kubernetes-int-or-string": True}}}), namespace="", group=AX)

    def widget(name: str, port: Any) -> Object:
        return {"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"port": port}}
    assert env.create("widgets", widget("a", 80), group="example.com")["spec"]["port"] == 80
    assert env.create("widgets", widget("b", "http"), group="example.com")["spec"]["port"] == "http"
    err = env.error("create", "widgets", body=widget("c", True), group="example.com")
    assert err.message.endswith('spec.port: Invalid value: "boolean": spec.port in body must be '
                                'of type integer,string: "boolean"')


def test_a_lease_time_far_ahead_is_a_time() -> None:
    # MicroTime.UnmarshalJSON parses RFC 3339 with microseconds: year 9999 is a time like any
    # other (ValidateLeaseSpec has no rule on renewTime); a year past 9999 does not parse.
    env = Env()
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
            "spec": {"renewTime": "9999-01-01T00:00:00.000000Z"}}
    assert env.create("leases", body, group="coordination.k8s.io")["spec"]["renewTime"] == \
        "9999-01-01T00:00:00.000000Z"
    body["metadata"]["name"] = "m"
    body["spec"]["renewTime"] = "10000-01-01T00:00:00.000000Z"
    assert env.error("create", "leases", body=body, group="coordination.k8s.io").code == 400
