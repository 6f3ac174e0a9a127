"""x-kubernetes-validations: every CEL path, in upstream's words (modelled on
pkg/apiserver/schema/cel/validation_test.go), through the API server."""

from __future__ import annotations

from typing import Any

import pytest
from test_apiserver_support import Env
from test_crd_schema import crd, widget

from kubelab.apiserver.cel import CelCompileError, CelEvalError, compile_expression

Object = dict[str, Any]
HEAD = 'Widget.example.com "w" is invalid: '


def spec_with(*rules: Object, **properties: Object) -> Object:
    return {"type": "object", "x-kubernetes-validations": list(rules),
            "properties": properties or {"replicas": {"type": "integer"},
                                         "max": {"type": "integer"},
                                         "name": {"type": "string"}}}


def serve(spec: Object) -> Env:
    env = Env()
    env.create("customresourcedefinitions", crd(spec), namespace="", group="apiextensions.k8s.io")
    return env


def create_error(env: Env, spec: Object) -> str:
    err = env.error("create", "widgets", body=widget(spec), group="example.com")
    assert err.code == 422
    return err.message


def test_a_failing_rule_names_itself() -> None:
    env = serve(spec_with({"rule": "self.replicas <= self.max"}))
    assert create_error(env, {"replicas": 3, "max": 2}) == \
        HEAD + 'spec: Invalid value: "object": failed rule: self.replicas <= self.max'
    env.create("widgets", widget({"replicas": 2, "max": 2}), group="example.com")


@pytest.mark.parametrize(("rule", "message"), [
    ({"rule": "self.replicas <= self.max", "message": "replicas must not exceed max"},
     'spec: Invalid value: "object": replicas must not exceed max'),
    ({"rule": "self.replicas <= self.max", "message": "too many",
      "messageExpression": "'replicas ' + string(self.replicas) + ' > ' + string(self.max)"},
     'spec: Invalid value: "object": replicas 3 > 2'),
    ({"rule": "self.replicas <= self.max", "messageExpression": "''", "message": "fallback"},
     'spec: Invalid value: "object": fallback'),
    ({"rule": "self.replicas <= self.max", "reason": "FieldValueForbidden", "message": "no"},
     "spec: Forbidden: no"),
    ({"rule": "self.replicas <= self.max", "reason": "FieldValueRequired", "message": "need"},
     "spec: Required value: need"),
    ({"rule": "self.replicas <= self.max", "reason": "FieldValueDuplicate"},
     'spec: Duplicate value: "object"'),
    ({"rule": "self.replicas <= self.max", "fieldPath": ".replicas", "message": "lower it"},
     'spec.replicas: Invalid value: "object": lower it'),
    ({"rule": "self.missing == 1"},
     'spec: Invalid value: "object": no such key: missing evaluating rule: self.missing == 1'),
    ({"rule": "self.name + 1 == 2"},
     "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a "
     "supported operator, function or macro signature for rule: self.name + 1 == 2"),
])
def test_message_reason_field_path_and_errors(rule: Object, message: str) -> None:
    env = serve(spec_with(rule))
    assert create_error(env, {"replicas": 3, "max": 2, "name": "a"}) == HEAD + message


def test_rules_on_scalars_lists_and_maps_see_their_own_value() -> None:
    spec = spec_with(
        name={"type": "string", "x-kubernetes-validations": [
            {"rule": "self.startsWith('web-') && self.lowerAscii() == self"}]},
        ports={"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self > 0 && self < 65536"}]},
            "x-kubernetes-validations": [{"rule": "self.all(p, p != 22)",
                                          "message": "no ssh"}, {"rule": "size(self) <= 2"}]},
        labels={"type": "object", "additionalProperties": {"type": "string"},
                "x-kubernetes-validations": [{"rule": "has(self.team)"}]})
    env = serve(spec)
    assert create_error(env, {"name": "Web-1", "ports": [22, 0, 80], "labels": {}}) == HEAD + (
        '[spec.labels: Invalid value: "object": failed rule: has(self.team), '
        "spec.name: Invalid value: \"string\": failed rule: self.startsWith('web-') && "
        "self.lowerAscii() == self, "
        'spec.ports: Invalid value: "array": no ssh, '
        'spec.ports: Invalid value: "array": failed rule: size(self) <= 2, '
        'spec.ports[1]: Invalid value: "integer": failed rule: self > 0 && self < 65536]')
    env.create("widgets", widget({"name": "web-1", "ports": [80], "labels": {"team": "a"}}),
               group="example.com")


def test_transition_rules_run_only_on_update() -> None:
    env = serve(spec_with({"rule": "self.name == oldSelf.name", "message": "name is immutable"},
                          {"rule": "self.replicas >= oldSelf.replicas", "fieldPath": ".replicas",
                           "messageExpression": "'cannot shrink from ' + string(oldSelf.replicas)"}))
    w = env.create("widgets", widget({"name": "a", "replicas": 3}), group="example.com")
    w["spec"] = {"name": "b", "replicas": 1}
    err = env.error("update", "widgets", name="w", body=w, group="example.com")
    assert err.message == HEAD + ('[spec: Invalid value: "object": name is immutable, '
                                  'spec.replicas: Invalid value: "object": cannot shrink from 3]')
    w["spec"] = {"name": "a", "replicas": 4}
    assert env.update("widgets", w, group="example.com")["spec"]["replicas"] == 4


def test_transition_rules_correlate_map_list_items_by_key() -> None:
    item = {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}, "port": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port",
                                      "message": "port is immutable"}]}
    env = serve(spec_with(ports={"type": "array", "x-kubernetes-list-type": "map",
                                 "x-kubernetes-list-map-keys": ["name"], "items": item}))
    w = env.create("widgets", widget({"ports": [{"name": "http", "port": 80}]}),
                   group="example.com")
    w["spec"]["ports"] = [{"name": "https", "port": 443}, {"name": "http", "port": 8080}]
    err = env.error("update", "widgets", name="w", body=w, group="example.com")
    assert err.message == HEAD + 'spec.ports[1]: Invalid value: "object": port is immutable'


def test_a_type_error_stops_the_rules_with_upstreams_note() -> None:
    env = serve(spec_with({"rule": "self.replicas <= self.max"}))
    assert create_error(env, {"replicas": "3", "max": 2}) == HEAD + (
        '[spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: '
        '"string", <nil>: Invalid value: "null": some validation rules were not checked because '
        "the object was invalid; correct the existing errors to complete validation]")


def test_library_functions() -> None:
    values = {"s": "a,b", "l": [3, 1, 2], "n": "  x "}
    for text, want in [("self.s.split(',')", ["a", "b"]), ("self.l.isSorted()", False),
                       ("self.l.sum()", 6), ("self.l.min()", 1), ("self.l.max()", 3),
                       ("self.n.trim()", "x"), ("self.s.replace(',', ';')", "a;b"),
                       ("self.s.indexOf('b')", 2), ("['a', 'b'].join('-')", "a-b"),
                       ("self.s.upperAscii()", "A,B"), ("self.l.exists_one(x, x == 1)", True),
                       ("self.l.filter(x, x > 1)", [3, 2]), ("'b' in self.s.split(',')", True),
                       ("self.s.matches('^a')", True), ("self.s.substring(2)", "b"),
                       ("self.s.charAt(0)", "a"), ("self.s.lastIndexOf(',')", 1),
                       ("'a1b22'.find('[0-9]+')", "1"), ("'a1b22'.findAll('[0-9]')", ["1", "2", "2"]),
                       ("'a1b22'.findAll('[0-9]', 2)", ["1", "2"])]:
        assert compile_expression(text).evaluate({"self": values}) == want, text
    with pytest.raises(CelCompileError):
        compile_expression("self.s ==")
    with pytest.raises(CelEvalError, match=r"^undeclared reference to 'nope'$"):
        compile_expression("self.s.nope()").evaluate({"self": values})
