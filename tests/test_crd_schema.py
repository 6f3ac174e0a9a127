"""Custom objects against their CRD's schema, in upstream's words (tables modelled on
apiextensions-apiserver's pkg/apiserver/validation/validation_test.go and kube-openapi's
pkg/validation/validate tests), through the API server."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_apiserver_support import Env

from kubelab.apiserver.apiextensions.schema.validate import go_float

Object = dict[str, Any]


def crd(spec_schema: Object, *, status: Object | None = None, **version: Any) -> Object:
    root: Object = {"type": "object", "properties": {"spec": spec_schema}}
    if status is not None:
        root["properties"]["status"] = status
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": root}, **version}]}}


def widget(spec: Any, name: str = "w") -> Object:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def serve(schema: Object, **version: Any) -> Env:
    env = Env()
    env.create("customresourcedefinitions", crd(schema, **version), namespace="",
               group="apiextensions.k8s.io")
    return env


def refused(env: Env, obj: Object) -> str:
    err = env.error("create", "widgets", body=copy.deepcopy(obj), group="example.com")
    assert err.code == 422, err.message
    return err.message


def prop(schema: Object) -> Object:
    return {"type": "object", "properties": {"x": schema}}


# (the schema of spec.x, a bad value, the message after `Widget.example.com "w" is invalid: `)
CASES = [
    ({"type": "integer"}, "3",
     'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'),
    ({"type": "string"}, None,
     'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"'),
    ({"type": "integer", "minimum": 0}, -1,
     "spec.x: Invalid value: -1: spec.x in body should be greater than or equal to 0"),
    ({"type": "integer", "minimum": 0, "exclusiveMinimum": True}, 0,
     "spec.x: Invalid value: 0: spec.x in body should be greater than 0"),
    ({"type": "number", "maximum": 1.5}, 2,
     "spec.x: Invalid value: 2: spec.x in body should be less than or equal to 1.5"),
    ({"type": "integer", "maximum": 1000000, "exclusiveMaximum": True}, 1000000,
     "spec.x: Invalid value: 1000000: spec.x in body should be less than 1e+06"),
    ({"type": "integer", "multipleOf": 5}, 7,
     "spec.x: Invalid value: 7: spec.x in body should be a multiple of 5"),
    ({"type": "string", "enum": ["a", "b"]}, "x",
     'spec.x: Unsupported value: "x": supported values: "a", "b"'),
    ({"type": "integer", "enum": [1, 2]}, 3,
     'spec.x: Unsupported value: 3: supported values: "1", "2"'),
    ({"type": "integer", "enum": [1, 2]}, "1",  # the type and the enum both fail, as upstream
     '[spec.x: Invalid value: "string": spec.x in body must be of type integer: "string", '
     'spec.x: Unsupported value: "1": supported values: "1", "2"]'),
    ({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}},
      "minProperties": 2}, {"a": -1},  # too few properties ends the object's check
     "spec.x: Invalid value: 1: spec.x in body should have at least 2 properties"),
    ({"type": "string", "maxLength": 3}, "abcd",
     "spec.x: Too long: may not be more than 3 bytes"),
    ({"type": "string", "minLength": 2}, "a",
     'spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long'),
    ({"type": "string", "pattern": "^[a-z]+$"}, "A1",
     "spec.x: Invalid value: \"A1\": spec.x in body should match '^[a-z]+$'"),
    ({"type": "string", "format": "uuid"}, "nope",
     'spec.x: Invalid value: "nope": spec.x in body must be of type uuid: "nope"'),
    ({"type": "string", "format": "date-time"}, "yesterday",
     'spec.x: Invalid value: "yesterday": spec.x in body must be of type date-time: "yesterday"'),
    ({"type": "string", "format": "date"}, "2026-13-01",
     'spec.x: Invalid value: "2026-13-01": spec.x in body must be of type date: "2026-13-01"'),
    ({"type": "string", "format": "ipv4"}, "10.0.0.256",
     'spec.x: Invalid value: "10.0.0.256": spec.x in body must be of type ipv4: "10.0.0.256"'),
    ({"type": "string", "format": "ipv6"}, "10.0.0.1",
     'spec.x: Invalid value: "10.0.0.1": spec.x in body must be of type ipv6: "10.0.0.1"'),
    ({"type": "string", "format": "cidr"}, "10.0.0.0",
     'spec.x: Invalid value: "10.0.0.0": spec.x in body must be of type cidr: "10.0.0.0"'),
    ({"type": "string", "format": "hostname"}, "-bad-",
     'spec.x: Invalid value: "-bad-": spec.x in body must be of type hostname: "-bad-"'),
    ({"type": "string", "format": "byte"}, "!!",
     'spec.x: Invalid value: "!!": spec.x in body must be of type byte: "!!"'),
    ({"type": "array", "items": {"type": "string"}, "minItems": 1}, [],
     "spec.x: Invalid value: 0: spec.x in body should have at least 1 items"),
    ({"type": "array", "items": {"type": "string"}, "maxItems": 1}, ["a", "b"],
     "spec.x: Too many: 2: must have at most 1 items"),
    ({"type": "array", "items": {"type": "integer"}}, [1, "2"],
     'spec.x[1]: Invalid value: "string": spec.x[1] in body must be of type integer: "string"'),
    ({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}, ["a", "a"],
     'spec.x[1]: Duplicate value: "a"'),
    ({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
      "items": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
     [{"name": "a", "port": 1}, {"name": "a", "port": 2}],
     'spec.x[1]: Duplicate value: {"name":"a"}'),
    ({"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
     {"a": "1", "b": "2"}, "spec.x: Too many: 2: must have at most 1 items"),
    ({"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 2},
     {"a": "1"}, "spec.x: Invalid value: 1: spec.x in body should have at least 2 properties"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"a": "1"},
     'spec.x.a: Invalid value: "string": spec.x.a in body must be of type integer: "string"'),
    ({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}, {},
     "spec.x.name: Required value"),
    ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
      "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": "1", "b": "2"},
     '<nil>: Invalid value: "": spec.x must validate one and only one schema (oneOf). Found 2 '
     "valid alternatives"),
    ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
      "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {},
     '[<nil>: Invalid value: "": spec.x must validate at least one schema (anyOf), '
     "spec.x.a: Required value]"),
    ({"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^a"}]}, "b",
     "[spec.x: Invalid value: \"b\": spec.x in body should be at least 2 chars long, "
     "spec.x: Invalid value: \"b\": spec.x in body should match '^a', "
     '<nil>: Invalid value: "": spec.x must validate all the schemas (allOf). None validated]'),
    ({"type": "string", "not": {"enum": ["root"]}}, "root",
     '<nil>: Invalid value: "": spec.x must not validate the schema (not)'),
    ({"x-kubernetes-int-or-string": True}, True,
     'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"'),
    ({"type": "object", "x-kubernetes-embedded-resource": True,
      "x-kubernetes-preserve-unknown-fields": True}, {"metadata": {}},
     "[spec.x.apiVersion: Required value: must not be empty, "
     "spec.x.kind: Required value: must not be empty]"),
]


@pytest.mark.parametrize(("schema", "value", "message"), CASES,
                         ids=[str(i) for i in range(len(CASES))])
def test_each_schema_rule_refuses_in_upstream_words(schema: Object, value: Any,
                                                    message: str) -> None:
    env = serve(prop(schema))
    text = refused(env, widget({"x": value}))
    assert text == f'Widget.example.com "w" is invalid: {message}'
    assert env.req("list", "widgets", group="example.com")["items"] == []  # nothing stored


GOOD = [
    ({"type": "number", "maximum": 2}, 2), ({"type": "integer"}, 2.0),
    ({"type": "string", "nullable": True}, None), ({"x-kubernetes-int-or-string": True}, "50%"),
    ({"x-kubernetes-int-or-string": True}, 3), ({"type": "string", "format": "uuid"},
                                                "6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
    ({"type": "string", "format": "date-time"}, "2026-12-01T09:00:00Z"),
    ({"type": "string", "format": "cidr"}, "10.0.0.0/8"),
    ({"type": "string", "format": "hostname"}, "web-1.example.com"),
    ({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}, ["a", "b"]),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
     "25%"),
    ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
      "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"b": "2"}),
]


@pytest.mark.parametrize(("schema", "value"), GOOD, ids=[str(i) for i in range(len(GOOD))])
def test_valid_values_are_stored(schema: Object, value: Any) -> None:
    env = serve(prop(schema))
    created = env.create("widgets", widget({"x": value}), group="example.com")
    assert created["spec"]["x"] == value


def test_required_at_the_top_and_several_errors_at_once() -> None:
    schema = {"type": "object", "required": ["size", "image"],
              "properties": {"size": {"type": "integer", "minimum": 1},
                             "image": {"type": "string"}}}
    env = serve(schema)
    assert refused(env, widget({"size": 0})) == (
        'Widget.example.com "w" is invalid: [spec.size: Invalid value: 0: spec.size in body '
        "should be greater than or equal to 1, spec.image: Required value]")


def test_update_is_checked_too() -> None:
    env = serve(prop({"type": "integer", "minimum": 0}))
    w = env.create("widgets", widget({"x": 1}), group="example.com")
    w["spec"]["x"] = -5
    err = env.error("update", "widgets", name="w", body=w, group="example.com")
    assert err.code == 422 and err.message.endswith(
        "spec.x: Invalid value: -5: spec.x in body should be greater than or equal to 0")
    assert env.get("widgets", "w", group="example.com")["spec"]["x"] == 1


def test_unknown_fields_are_refused_as_a_strict_decoder_refuses_them() -> None:
    env = serve(prop({"type": "integer"}))
    err = env.error("create", "widgets", body=widget({"x": 1, "y": 2, "z": {"a": 1}}),
                    group="example.com")
    assert (err.code, err.message) == (400, 'Widget in version "v1" cannot be handled as a '
                                       'Widget: strict decoding error: unknown field "spec.y", '
                                       'unknown field "spec.z"')
    top = env.error("create", "widgets", body={**widget({"x": 1}), "extra": True},
                    group="example.com")
    assert 'unknown field "extra"' in top.message


def test_preserve_unknown_fields_keeps_them() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "properties": {"x": {"type": "integer"}}}
    env = serve(schema)
    created = env.create("widgets", widget({"x": 1, "free": {"a": [1]}}), group="example.com")
    assert created["spec"] == {"x": 1, "free": {"a": [1]}}
    # Known fields inside are still checked.
    assert "spec.x in body must be of type integer" in refused(env, widget({"x": "1"}))


def test_defaults_fill_absent_and_null_fields_on_create_and_update() -> None:
    schema = {"type": "object", "default": {},
              "properties": {"replicas": {"type": "integer", "default": 1},
                             "mode": {"type": "string", "default": "fast"},
                             "note": {"type": "string", "nullable": True, "default": "n"},
                             "ports": {"type": "array", "items": {
                                 "type": "object", "properties": {
                                     "port": {"type": "integer"},
                                     "protocol": {"type": "string", "default": "TCP"}}}}}}
    env = serve(schema)
    created = env.create("widgets", widget({"mode": None, "note": None, "ports": [{"port": 80}]}),
                         group="example.com")
    assert created["spec"] == {"replicas": 1, "mode": "fast", "note": None,
                               "ports": [{"port": 80, "protocol": "TCP"}]}
    w = widget({"replicas": 3})
    w["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    updated = env.update("widgets", w, group="example.com")
    assert updated["spec"] == {"replicas": 3, "mode": "fast", "note": "n"}
    # A whole absent object is defaulted from its own default, then inside.
    bare = widget({})
    del bare["spec"]
    bare["metadata"]["name"] = "bare"
    assert env.create("widgets", bare, group="example.com")["spec"] == {"replicas": 1,
                                                                        "mode": "fast",
                                                                        "note": "n"}


@pytest.mark.parametrize(("value", "text"), [(0, "0"), (1.5, "1.5"), (100000, "100000"),
                                             (1e6, "1e+06"), (1234567, "1.234567e+06"),
                                             (0.0001, "0.0001"), (0.00001, "1e-05"), (-3, "-3")])
def test_numbers_print_as_go_prints_a_float64(value: float, text: str) -> None:
    assert go_float(value) == text


def test_defaults_also_apply_on_read_to_objects_stored_before_them() -> None:
    from kubelab.api.request import Request
    env = serve(prop({"type": "integer"}))
    env.create("widgets", widget({"x": 1}), group="example.com")
    definition = env.get("customresourcedefinitions", "widgets.example.com", "",
                         group="apiextensions.k8s.io")
    spec = definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["mode"] = {"type": "string", "default": "fast"}
    env.update("customresourcedefinitions", definition, group="apiextensions.k8s.io")
    assert env.get("widgets", "w", group="example.com")["spec"] == {"x": 1, "mode": "fast"}
    assert env.req("list", "widgets", group="example.com")["items"][0]["spec"]["mode"] == "fast"
    events: list[Any] = []
    env.server.watch(Request("watch", "widgets", namespace="default", group="example.com",
                             token=env.admin), events.append)
    env.settle()
    assert events[0]["object"]["spec"] == {"x": 1, "mode": "fast"}
    stored = env.store.range("/registry/example.com/widgets/default/w").kvs[0].value
    assert b"mode" not in stored
