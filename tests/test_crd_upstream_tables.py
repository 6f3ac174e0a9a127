"""apiextensions-apiserver's own test tables, as data, run against kubelab:
pkg/apiserver/schema/defaulting/algorithm_test.go TestDefault and
pkg/apiserver/schema/pruning/algorithm_test.go TestPrune (Structural schemas written as the
openAPIV3Schema they come from)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubelab.apiserver.apiextensions.schema import apply_defaults, prune

OBJ = {"type": "object"}
PRESERVE = {"x-kubernetes-preserve-unknown-fields": True}
EMBEDDED = {"x-kubernetes-embedded-resource": True}


def d(value: Any) -> dict[str, Any]:
    return {"default": value}


# TestDefault: (json, schema, expected json)
@pytest.mark.parametrize(("given", "schema", "expected"), [
    pytest.param("null", None, "null", id="empty"),
    pytest.param("4", d("foo"), "4", id="scalar"),
    pytest.param("[1,2]", {"items": d("foo")}, "[1,2]", id="scalar array"),
    pytest.param('[{"a":1},{"b":1},{"c":1}]',
                 {"items": {"properties": {"a": d("A"), "b": d("B"), "c": d("C")}}},
                 '[{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}]',
                 id="object array"),
    pytest.param('{"array":[{"a":1},{"b":2}],"object":{"a":1},'
                 '"additionalProperties":{"x":{"a":1},"y":{"b":2}}}',
                 {"properties": {
                     "array": {"items": {"properties": {"a": d("A"), "b": d("B")}}},
                     "object": {"properties": {"a": d("N"), "b": d("O")}},
                     "additionalProperties": {"additionalProperties": {
                         "properties": {"a": d("alpha"), "b": d("beta")}}},
                     "foo": d("bar")}},
                 '{"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"O"},'
                 '"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"}',
                 id="object array object"),
    pytest.param('[{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]',
                 {"items": {"properties": {"a": d("A")}}},
                 '[{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}]',
                 id="empty and null"),
    pytest.param("[null]", {"nullable": True, "items": {"properties": {"a": d("A")}}}, "[null]",
                 id="null in nullable list"),
    pytest.param("[null]", {"nullable": False, "items": d("A")}, '["A"]',
                 id="null in non-nullable list"),
    pytest.param('{"a": null}', {"properties": {"a": {"nullable": True, "default": "A"}}},
                 '{"a": null}', id="null in nullable object"),
    pytest.param('{"a": null}', {"properties": {"a": {"nullable": False, "default": "A"}}},
                 '{"a": "A"}', id="null in non-nullable object"),
    pytest.param('{"a": null}', {"additionalProperties": {"nullable": True, "default": "A"}},
                 '{"a": null}', id="null in nullable object with additionalProperties"),
    pytest.param('{"a": null}', {"additionalProperties": {"nullable": False, "default": "A"}},
                 '{"a": "A"}', id="null in non-nullable object with additionalProperties"),
    pytest.param('{"a": null}', {"additionalProperties": True}, '{"a": null}',
                 id="null unknown field"),
])
def test_default(given: str, schema: dict[str, Any] | None, expected: str) -> None:
    value = json.loads(given)
    apply_defaults(value, schema)  # in place, as Default on a Go map or slice
    assert value == json.loads(expected)


NESTED_PRESERVE_IN = """{
  "unspecified": "bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": {"unspecified": "bar"},
  "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
              "pruning": {"unspecified": "bar"}, "apiVersion": "unknown",
              "preserving": {"unspecified": "bar"}},
  "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                 "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"},
                 "preservingUnknownType": [{"foo": true}, {"bar": true}]},
  "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
    "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
  "preservingAdditionalPropertiesKeyPruneValues": {
    "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}}
}"""
NESTED_PRESERVE_OUT = """{
  "unspecified": "bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": {"unspecified": "bar"},
  "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
  "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"}, "pruning": {},
                 "preserving": {"unspecified": "bar"},
                 "preservingUnknownType": [{"foo": true}, {"bar": true}]},
  "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {}}},
  "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}}
}"""
SPECIFIED_ONLY = {**OBJ, "additionalProperties": {**OBJ, "properties": {"specified": OBJ}}}
NESTED_PRESERVE_SCHEMA = {**OBJ, **PRESERVE, "properties": {
    "alpha": {"type": "string"}, "beta": {"type": "number"},
    "pruning": {**OBJ, "properties": {"preserving": {**OBJ, **PRESERVE}, "pruning": OBJ}},
    "preserving": {**OBJ, **PRESERVE, "properties": {
        "preserving": {**OBJ, **PRESERVE}, "preservingUnknownType": PRESERVE, "pruning": OBJ}},
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {**PRESERVE, **SPECIFIED_ONLY},
    "preservingAdditionalPropertiesKeyPruneValues": SPECIFIED_ONLY}}


def resource(meta: dict[str, Any], *, spec: dict[str, Any] | None = None, unspecified: bool = True,
             **fields: Any) -> dict[str, Any]:
    """An embedded object as the embedded-resource cases write it."""
    obj: dict[str, Any] = {"apiVersion": "foo/v1", "kind": "Foo", "metadata": dict(meta)}
    if unspecified:
        obj["unspecified"] = "bar"
    obj["spec"] = {"unspecified": "bar"} if spec is None else spec
    obj["spec"].update(fields)
    return obj


def embedded_case(meta: dict[str, Any], root: bool) -> tuple[Any, ...]:
    given = {"apiVersion": "foo/v1", "kind": "Foo", "metadata": {**meta, "unspecified": "bar"},
             "unspecified": "bar", "pruned": resource(meta), "preserving": resource(meta),
             "nested": resource(meta, embedded=resource(meta))}
    want: dict[str, Any] = {
        "pruned": resource(meta, spec={}, unspecified=False), "preserving": resource(meta),
        "nested": resource(meta, spec={}, unspecified=False,
                           embedded=resource(meta, spec={}, unspecified=False))}
    if root:  # the root's apiVersion, kind and metadata stay
        want = {**{k: given[k] for k in ("apiVersion", "kind", "metadata")}, **want}
    for obj in (given, want):
        for key in ("pruned", "preserving", "nested"):
            obj[key]["metadata"]["unspecified"] = "bar"
        obj["nested"]["spec"]["embedded"]["metadata"]["unspecified"] = "bar"
    with_meta = {"metadata": OBJ} if root else {}
    schema = {**OBJ, "properties": {
        **with_meta,
        "pruned": {**OBJ, **EMBEDDED, "properties": {**with_meta, "spec": OBJ}},
        "preserving": {**OBJ, **EMBEDDED, **PRESERVE},
        "nested": {**OBJ, **EMBEDDED, "properties": {"spec": {**OBJ, "properties": {
            "embedded": {**OBJ, **EMBEDDED, "properties": {**with_meta, "spec": OBJ}}}}}}}}
    return (json.dumps(given), root, schema, json.dumps(want),
            ["nested.spec.embedded.spec.unspecified", "nested.spec.embedded.unspecified",
             "nested.spec.unspecified", "nested.unspecified", "pruned.spec.unspecified",
             "pruned.unspecified", "unspecified"])


# TestPrune: (json, isResourceRoot, schema, expected json, expected pruned paths)
@pytest.mark.parametrize(("given", "root", "schema", "expected", "pruned"), [
    pytest.param("null", False, None, "null", [], id="empty"),
    pytest.param("4", False, {}, "4", [], id="scalar"),
    pytest.param("[1,2]", False, {"items": {}}, "[1,2]", [], id="scalar array"),
    pytest.param('[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', False,
                 {"items": {"properties": {"a": {}, "c": {}}}}, '[{"a":1},{},{"a":1,"c":3}]',
                 ["[1].b", "[2].b"], id="object array"),
    pytest.param('[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', False, None, "[{},{},{}]",
                 ["[0].a", "[1].b", "[2].a", "[2].b", "[2].c"], id="object array with nil schema"),
    pytest.param('{"array":[{"a":1},{"b":1},{"a":1,"b":2,"c":3}],"unspecified":{"a":1},'
                 '"specified":{"a":1,"b":2,"c":3}}', False,
                 {"properties": {"array": {"items": {"properties": {"a": {}, "c": {}}}},
                                 "specified": {"properties": {"a": {}, "c": {}}}}},
                 '{"array":[{"a":1},{},{"a":1,"c":3}],"specified":{"a":1,"c":3}}',
                 ["array[1].b", "array[2].b", "specified.b", "unspecified"], id="object array object"),
    pytest.param(NESTED_PRESERVE_IN, False, NESTED_PRESERVE_SCHEMA, NESTED_PRESERVE_OUT, [
        "preserving.pruning.unspecified",
        "preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified",
        "preservingAdditionalPropertiesKeyPruneValues.foo.unspecified",
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified",
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified",
        "pruning.apiVersion", "pruning.pruning.unspecified", "pruning.unspecified",
        "pruning.unspecifiedObject"], id="nested x-kubernetes-preserve-unknown-fields"),
    pytest.param('{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1}}}', False,
                 {"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}},
                 '{"a":1,"c":{"a":1,"b":2,"c":{}}}', ["b", "c.c.a"],
                 id="additionalProperties with schema"),
    pytest.param('{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1, "apiVersion": "unknown"}}}', False,
                 {"properties": {"a": {}, "c": {"additionalProperties": False}}},
                 '{"a":1,"c":{"a":1,"b":2,"c":{}}}', ["b", "c.c.a", "c.c.apiVersion"],
                 id="additionalProperties with bool"),
    pytest.param(*embedded_case({"name": "instance"}, False), id="x-kubernetes-embedded-resource"),
    pytest.param(*embedded_case({"name": "instance", "namespace": "myns", "labels": {"foo": "bar"}}, True),
                 id="x-kubernetes-embedded-resource, with root=true"),
])
def test_prune(given: str, root: bool, schema: dict[str, Any] | None, expected: str,
               pruned: list[str]) -> None:
    value = json.loads(given)
    assert prune(value, schema, root=root) == pruned
    assert value == json.loads(expected)
    assert prune(value, schema, root=root) == []  # pruning again finds nothing
