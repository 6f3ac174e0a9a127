"""Field selectors, checked against apimachinery pkg/fields/selector_test.go and the field
label conversions of kubernetes pkg/apis/core/v1/conversion.go."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelab.api import fields
from kubelab.api.errors import ParseError
from kubelab.api.fields import (
    FieldSelector,
    Requirement,
    escape_value,
    field_value,
    one_term_equal_selector,
    parse_field_selector,
)

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "default"},
    "spec": {"nodeName": "node-1", "restartPolicy": "Always", "schedulerName": "default-scheduler"},
    "status": {"phase": "Running", "podIP": "10.0.0.7"},
}


@pytest.mark.parametrize(("text", "canonical"), [
    ("", ""), ("a=b", "a=b"), ("a==b", "a=b"), ("a!=b", "a!=b"), ("x=a,y=b,z=c", "x=a,y=b,z=c"),
    ("z=c,x=a", "x=a,z=c"),  # upstream sorts the terms
    ("a=", "a="), ("a=b,,", "a=b"), ("=", ""), ("!=", ""),  # empty terms are dropped
    ("=x", "=x"), ("a=!b", "a=!b"), (r"a=b\,c", r"a=b\,c"), (r"a=\=\\", r"a=\=\\"),
    ("spec.nodeName=node-1,status.phase!=Running", "spec.nodeName=node-1,status.phase!=Running"),
])
def test_parse_and_string(text: str, canonical: str) -> None:
    selector = parse_field_selector(text)
    assert str(selector) == canonical
    assert str(parse_field_selector(canonical)) == canonical
    assert selector.empty() is (canonical == "")


@pytest.mark.parametrize(("text", "error"), [
    ("a", "invalid selector: 'a'; can't understand 'a'"),
    ("x,y=z", "invalid selector: 'x,y=z'; can't understand 'x'"),
    ("a=b=c", "invalid selector: 'a=b=c'; invalid field selector: unescaped character in value: 61"),
    ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
    (r"a=b\x", r"invalid selector: 'a=b\x'; invalid field selector: invalid escape sequence: \x"),
    ("a=b\\", "invalid selector: 'a=b\\'; invalid field selector: invalid escape sequence: \\"),
])
def test_parse_errors(text: str, error: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_field_selector(text)
    assert str(info.value) == error


def test_requirements_and_exact_value() -> None:
    selector = parse_field_selector(r"b!=2,a==1,c=x\,y")
    assert selector.requirements == (Requirement("a", "=", "1"), Requirement("b", "!=", "2"),
                                     Requirement("c", "=", "x,y"))
    assert selector.exact_value("a") == "1"
    assert selector.exact_value("c") == "x,y"
    assert selector.exact_value("b") is None  # != is not an exact match
    assert selector.exact_value("d") is None
    kubelet = one_term_equal_selector("spec.nodeName", "node-1")
    assert str(kubelet) == "spec.nodeName=node-1"
    assert kubelet.exact_value("spec.nodeName") == "node-1"
    assert FieldSelector().empty() and FieldSelector().matches(POD)


@pytest.mark.parametrize(("text", "want"), [
    ("", True), ("metadata.name=web-1", True), ("metadata.name=web-2", False),
    ("spec.nodeName=node-1,metadata.namespace=default", True),
    ("spec.nodeName=node-1,status.phase!=Running", False), ("status.phase!=Pending", True),
    ("status.podIP=10.0.0.7", True), ("spec.hostNetwork=false", True),
    ("status.nominatedNodeName=", True), ("spec.serviceAccountName!=", False),
])
def test_matches_pod(text: str, want: bool) -> None:
    assert parse_field_selector(text).matches(POD) is want


def test_field_values_as_the_api_server_computes_them() -> None:
    assert field_value(POD, "spec.nodeName") == "node-1"
    assert field_value({"spec": {}}, "spec.nodeName") == ""  # an unscheduled pod
    assert field_value({"spec": {"unschedulable": True}}, "spec.unschedulable") == "true"
    assert field_value({"spec": {}}, "spec.unschedulable") == "false"
    assert field_value({"status": {"replicas": 3}}, "status.replicas") == "3"
    assert field_value({}, "status.replicas") == "0"
    event = {"source": {"component": "kubelet"}, "reportingController": "kubelet",
             "involvedObject": {"kind": "Pod", "name": "web-1"}}
    assert field_value(event, "source") == "kubelet"
    assert field_value(event, "reportingComponent") == "kubelet"
    assert field_value(event, "involvedObject.kind") == "Pod"
    assert field_value({"metadata": "oops"}, "metadata.name") == ""  # wrong shapes never raise


@pytest.mark.parametrize(("resource", "text", "error"), [
    ("pods", "spec.nodeName=n,status.phase=Running,metadata.name=x", None),
    ("pods", "foo=bar", "field label not supported: foo"),
    ("events", "involvedObject.name=web-1,reason=Scheduled,source=kubelet,type=Normal", None),
    ("events", "message=whatever", "field label not supported: message"),
    ("nodes", "spec.unschedulable=true", None),
    ("nodes", "metadata.namespace=default", "field label not supported: metadata.namespace"),
    ("namespaces", "status.phase=Active", None),
    ("deployments", "metadata.namespace=default", None),
    ("deployments", "spec.replicas=1",
     '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'),
])
def test_validate_for(resource: str, text: str, error: str | None) -> None:
    selector = parse_field_selector(text)
    if error is None:
        selector.validate_for(resource)
        return
    with pytest.raises(ParseError) as info:
        selector.validate_for(resource)
    assert str(info.value) == error


def test_supported_fields_table() -> None:
    assert {"metadata.name", "metadata.namespace"} == fields.DEFAULT_FIELDS
    assert {"spec.nodeName", "status.phase", "metadata.namespace"} <= fields.SUPPORTED_FIELDS["pods"]
    assert "metadata.namespace" not in fields.SUPPORTED_FIELDS["nodes"]


def test_all_is_curated() -> None:
    assert set(fields.__all__) == {
        "DEFAULT_FIELDS", "SUPPORTED_FIELDS", "FieldSelector", "Requirement", "escape_value",
        "field_value", "one_term_equal_selector", "parse_field_selector"}
    assert all(hasattr(fields, name) for name in fields.__all__)


@settings(deadline=None)
@given(st.text(max_size=12))
def test_escaped_values_parse_back_unchanged(value: str) -> None:
    selector = parse_field_selector(f"spec.nodeName={escape_value(value)}")
    assert selector.exact_value("spec.nodeName") == value
    assert str(parse_field_selector(str(selector))) == str(selector)


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b.c", "d"]), st.text(max_size=5), max_size=3),
       st.dictionaries(st.sampled_from(["a", "b.c", "d"]), st.sampled_from(["=", "!="]),
                       max_size=3))
def test_round_trip_keeps_matching(values: dict[str, str], ops: dict[str, str]) -> None:
    terms = [f"{f}{ops.get(f, '=')}{escape_value(v)}" for f, v in values.items()]
    selector = parse_field_selector(",".join(terms))
    again = parse_field_selector(str(selector))
    obj = {"a": "x", "b": {"c": ""}, "d": "="}
    assert again.matches(obj) == selector.matches(obj)
    assert again == selector


@settings(deadline=None)
@given(st.one_of(st.text(max_size=16), st.text(alphabet="ab=!,\\ .", max_size=16)))
def test_parse_succeeds_or_raises_parse_error(text: str) -> None:
    try:
        selector = parse_field_selector(text)
    except ParseError as err:
        assert f"'{text}'" in str(err)
    else:
        assert selector.matches(POD) in (True, False)
