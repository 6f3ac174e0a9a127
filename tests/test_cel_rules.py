"""x-kubernetes-validations: every CEL path, in upstream's words (modelled on
pkg/apiserver/schema/cel/validation_test.go), through the API server."""

from __future__ import annotations

import math
from typing import Any

import pytest
from test_apiserver_support import Env
from test_crd_schema import crd, widget

from kubelab.api.errors import ApiError
from kubelab.apiserver import cel_check
from kubelab.apiserver.apiextensions.schema.rules import CostBudget, validate_rules
from kubelab.apiserver.cel import CelCompileError, CelCostError, CelEvalError, compile_expression
from kubelab.apiserver.cel_check import RUNTIME_CEL_COST_BUDGET

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
])
def test_message_reason_field_path_and_errors(rule: Object, message: str) -> None:
    env = serve(spec_with(rule))
    assert create_error(env, {"replicas": 3, "max": 2, "name": "a"}) == HEAD + message


@pytest.mark.parametrize(("rule", "message"), [
    # a declared field the object does not set
    ({"rule": "self.missing == 1"},
     'spec: Invalid value: "object": no such key: missing evaluating rule: self.missing == 1'),
    # int-or-string is dyn: only the value, when the rule runs, shows the overload is missing
    ({"rule": "self.port + 1 == 2"},
     "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a "
     "supported operator, function or macro signature for rule: self.port + 1 == 2"),
])
def test_errors_when_the_rule_runs(rule: Object, message: str) -> None:
    env = serve(spec_with(rule, missing={"type": "integer"},
                          port={"x-kubernetes-int-or-string": True}))
    assert create_error(env, {"port": "http"}) == HEAD + message


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


# ------------------------------------------- compiled when the CRD is written (compilation.go)

P = "spec.versions[0].schema.openAPIV3Schema.properties[spec]"
CUBIC = "self.items.all(a, self.items.all(b, self.items.all(c, a + b + c >= 0)))"
COST_HINT = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where "
             "arrays, maps, and strings are declared)")


def crd_error(spec: Object) -> str:
    env = Env()
    err = env.error("create", "customresourcedefinitions", "", body=crd(spec),
                    group="apiextensions.k8s.io")
    assert err.code == 422
    assert env.req("list", "customresourcedefinitions", namespace="",
                   group="apiextensions.k8s.io")["items"] == []
    return err.message.split(" is invalid: ", 1)[1]


def items(**bounds: int) -> Object:
    return {"type": "array", "items": {"type": "integer"}, **bounds}


@pytest.mark.parametrize(("bounds", "factor"), [({}, "more than 100x"), ({"maxItems": 300}, "")])
def test_a_cubic_rule_is_refused_by_its_estimated_cost(bounds: dict[str, int], factor: str) -> None:
    """An unbounded list is as long as a 3 MiB request allows (10^6 integers); 300^3 steps are
    still over StaticEstimatedCostLimit (10^7). Its cost alone also passes the schema's total."""
    errors = crd_error(spec_with({"rule": CUBIC}, items=items(**bounds))).strip("[]").split(
        ", spec.")
    assert errors[0].startswith(f"{P}.x-kubernetes-validations[0].rule: Forbidden: estimated rule "
                                f"cost exceeds budget by factor of {factor}")
    assert errors[0].endswith(f"x {COST_HINT}")
    assert errors[-1].startswith("versions[0].schema.openAPIV3Schema: Forbidden: "
                                 "x-kubernetes-validations estimated rule cost total")


def test_the_same_rule_over_a_short_list_is_admitted() -> None:
    env = serve(spec_with({"rule": CUBIC}, items=items(maxItems=10)))
    env.create("widgets", widget({"items": [1, 2, 3]}), group="example.com")
    assert "-1" not in str(cel_check.check(CUBIC, {"self": cel_check.schema_type(
        spec_with({"rule": CUBIC}, items=items(maxItems=10)))}).max_cost)


def test_a_rule_runs_as_often_as_its_list_has_items() -> None:
    # the rule's cost times the node's cardinality: 3 per rule, 300 items per list, two lists
    rule = {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 0"}]}
    ok = {"type": "array", "maxItems": 300, "items": {
        "type": "array", "maxItems": 300, "items": rule}}
    serve(spec_with(grid=ok))
    unbounded = {"type": "array", "items": {"type": "array", "items": rule}}
    assert crd_error(spec_with(grid=unbounded)).startswith(
        f"[{P}.properties[grid].items.items.x-kubernetes-validations[0].rule: Forbidden: estimated "
        f"rule cost exceeds budget by factor of more than 100x {COST_HINT}")


def test_the_rules_of_a_schema_share_one_total() -> None:
    # each rule costs a tenth of an unbounded string's 3 MiB and three steps, under
    # StaticEstimatedCostLimit; 320 of them pass StaticEstimatedCRDCostLimit (10^8)
    each = 3 + math.ceil((cel_check.MAX_REQUEST_SIZE_BYTES - 2) / 10)
    rules = [{"rule": f"self.name.contains('{i}')"} for i in range(320)]
    parts = crd_error(spec_with(*rules)).strip("[]").split(", spec.")
    assert parts[-1] == ("versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations "
                         "estimated rule cost total for entire OpenAPIv3 schema exceeds budget by "
                         f"factor of {320 * each / 10**8:f}x {COST_HINT}")
    assert sum(p.endswith("Forbidden: contributed to estimated rule cost total exceeding cost "
                          "limit for entire OpenAPIv3 schema") for p in parts) == 4
    assert len(parts) == 5
    serve(spec_with(*rules[:300]))


@pytest.mark.parametrize(("rule", "detail"), [
    ({"rule": "self.x == 1"}, "compilation failed: ERROR: <input>:1:5: undefined field 'x'\n"
     " | self.x == 1\n | ....^"),
    ({"rule": "has(self.nope)"}, "compilation failed: ERROR: <input>:1:9: undefined field "
     "'nope'\n | has(self.nope)\n | ........^"),
    ({"rule": "self.items.all(i, i.size > 0)"}, "compilation failed: ERROR: <input>:1:20: type "
     "'int' does not support field selection\n | self.items.all(i, i.size > 0)\n | "
     "...................^"),
    ({"rule": "self.replicas + 1"}, "cel expression must evaluate to a bool"),
    ({"rule": "self.name"}, "cel expression must evaluate to a bool"),
    ({"rule": "self.name == 1"}, "compilation failed: ERROR: <input>:1:11: found no matching "
     "overload for '_==_' applied to '(string, int)'\n | self.name == 1\n | ..........^"),
    ({"rule": "replicas > 1"}, "compilation failed: ERROR: <input>:1:1: undeclared reference to "
     "'replicas' (in container '')\n | replicas > 1\n | ^"),
])
def test_a_rule_is_type_checked_against_its_schema(rule: Object, detail: str) -> None:
    message = crd_error(spec_with(rule, items=items(maxItems=5), replicas={"type": "integer"},
                                  name={"type": "string"}))
    assert message.startswith(f"{P}.x-kubernetes-validations[0].rule: Invalid value: ")
    assert message.endswith(": " + detail)


def test_a_message_expression_must_be_a_string() -> None:
    message = crd_error(spec_with({"rule": "self.replicas > 0",
                                   "messageExpression": "self.replicas"}))
    assert message.startswith(f"{P}.x-kubernetes-validations[0].messageExpression: Invalid value")
    assert message.endswith(": messageExpression must evaluate to a string")


def test_int_or_string_and_the_root_are_typed_as_upstream() -> None:
    # int-or-string is dyn (checked when the rule runs); the root has apiVersion, kind and
    # metadata.name / generateName only (WithTypeAndObjectMeta)
    root = {"type": "object", "properties": {"spec": spec_with(
        port={"x-kubernetes-int-or-string": True})},
        "x-kubernetes-validations": [{"rule": "self.metadata.name != '' && self.kind == 'Widget'"},
                                     {"rule": "self.spec.port == 80 || self.spec.port == 'http'"}]}
    env = Env()
    definition = crd({"type": "object"})
    definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = root
    env.create("customresourcedefinitions", definition, namespace="", group="apiextensions.k8s.io")
    root["x-kubernetes-validations"] = [{"rule": "self.metadata.labels.size() > 0"}]
    with pytest.raises(ApiError) as info:
        env.create("customresourcedefinitions", {**definition, "metadata": {
            "name": "widgets.example.com"}}, namespace="", group="apiextensions.k8s.io")
    assert "undefined field 'labels'" in info.value.message


# ------------------------------------------------ the runtime cost (validation.go, cel-go)


def test_a_rule_costs_one_unit_per_step_it_takes() -> None:
    program = compile_expression("self.all(a, a >= 0)")
    costs = []
    for n in (10, 20, 40):
        assert program.evaluate({"self": list(range(n))}) is True
        costs.append(program.last_cost)
    assert costs[2] - costs[1] == 2 * (costs[1] - costs[0]) > 0  # linear in the list's length


def test_a_call_past_its_limit_stops_and_no_further_rule_runs() -> None:
    schema = {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.l.all(a, self.l.all(b, a + b >= 0))"}, {"rule": "false"}]}
    errs = validate_rules(schema, {"l": list(range(30))}, path="spec",
                          budget=CostBudget(per_call_limit=500))
    assert [str(e) for e in errs] == [
        "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no "
        "further validation rules will be run due to call cost exceeds limit for rule: "
        "self.l.all(a, self.l.all(b, a + b >= 0))"]
    with pytest.raises(CelCostError):
        compile_expression("self.all(a, a >= 0)").evaluate({"self": list(range(100))}, 50)


def test_the_objects_budget_is_shared_by_every_rule_and_item() -> None:
    schema = {"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [
        {"rule": "self >= 0"}, {"rule": "self < 100"}]}}
    spent = CostBudget()
    assert validate_rules(schema, list(range(50)), path="spec.l", budget=spent) == []
    per_item = (RUNTIME_CEL_COST_BUDGET - spent.remaining) // 50
    budget = CostBudget(remaining=per_item * 10 + 1)
    errs = validate_rules(schema, list(range(50)), path="spec.l", budget=budget)
    assert [str(e) for e in errs] == [
        'spec.l[10]: Invalid value: "integer": validation failed due to running out of cost '
        "budget, no further validation rules will be run"]
    assert budget.stopped
