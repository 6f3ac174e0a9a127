"""kubectl's JSONPath templates, after client-go's util/jsonpath/jsonpath_test.go cases."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.jsonpath import JSONPathError, execute, relaxed

STORE: dict[str, Any] = {
    "kind": "List",
    "items": [
        {"metadata": {"name": "a", "labels": {"app": "web", "app.kubernetes.io/name": "x"}},
         "spec": {"replicas": 1, "ready": True}, "status": {"conditions": [
             {"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}},
        {"metadata": {"name": "b", "labels": {}}, "spec": {"replicas": 3, "ready": False},
         "status": {"conditions": [{"type": "Ready", "status": "False"}]}},
    ],
}


@pytest.mark.parametrize(("template", "text"), [
    ("{.kind}", "List"),
    ("kind is {.kind}!", "kind is List!"),
    ("{.items[*].metadata.name}", "a b"),
    ("{.items[0].metadata.name}", "a"),
    ("{.items[-1].metadata.name}", "b"),
    ("{.items[0:1].metadata.name}", "a"),
    ("{.items[*].spec.replicas}", "1 3"),
    ("{.items[*].spec.ready}", "true false"),
    ("{.items[0].metadata.labels}", '{"app":"web","app.kubernetes.io/name":"x"}'),
    ("{.items[0].metadata.labels['app.kubernetes.io/name']}", "x"),
    ("{.items[?(@.spec.replicas>2)].metadata.name}", "b"),
    ('{.items[*].status.conditions[?(@.type=="Ready")].status}', "True False"),
    ("{.items[?(@.metadata.labels.app)].metadata.name}", "a"),  # existence
    ("{..name}", "a b"),
    ("{.items[*].nothing}", ""),
    ("{.items[*].nothing[0]}", ""),  # nothing found, nothing to index
    ("{.items[2:2]}", ""),  # a slice of nothing is allowed, even past the end
    ("{.items[-1:]}", '{"metadata":{"labels":{},"name":"b"},"spec":{"ready":false,"replicas":3},'
                      '"status":{"conditions":[{"status":"False","type":"Ready"}]}}'),
    ('{range .items[*]}{.metadata.name}{"\\t"}{.spec.replicas}{"\\n"}{end}', "a\t1\nb\t3\n"),
    ("{range .items[*]}[{.metadata.name}]{end}", "[a][b]"),
])
def test_templates_print_what_kubectl_prints(template: str, text: str) -> None:
    assert execute(template, STORE) == text


@pytest.mark.parametrize(("value", "text"), [
    ({"note": "<a&b>", "name": "café"}, '{"name":"café","note":"\\u003ca\\u0026b\\u003e"}'),  # json.Marshal
    (1e6, "1e+06"),  # fmt's %v of a float64
    (0.5, "0.5"),
    (3, "3"),
    (True, "true"),
    ("<a&b>", "<a&b>"),  # a string prints bare
])
def test_values_print_as_go_prints_them(value: Any, text: str) -> None:
    assert execute("{.v}", {"v": value}) == text


@pytest.mark.parametrize(("template", "message"), [
    ("{.kind", "unclosed action"),
    ("{end}", "not in range, nothing to end"),
    ("{range .items[*]}{.kind}", "unclosed action"),
    ("{.items[5]}", "array index out of bounds: index 5, length 2"),
    ("{.items[x]}", "invalid array index x"),
    # Run-time errors (jsonpath.go evalArray, evalFilter), with Go's slice arithmetic.
    ("{.items[-3]}", "array index out of bounds: index -1, length 2"),
    ("{.items[0:3]}", "array index out of bounds: index 2, length 2"),
    ("{.items[1:0]}", "starting index 1 is greater than ending index 0"),
    ("{.items[::0]}", "step must be > 0"),
    ("{.kind[0]}", "string is not array or slice"),
    ("{.items[0].spec.replicas[0]}", "int64 is not array or slice"),
    ("{.items[0].metadata[0]}", "map[string]interface {} is not array or slice"),
    ("{.items[1].metadata[?(@.x)]}", "map[labels:map[] name:b] is not array or slice and cannot be filtered"),
])
def test_bad_templates_fail_in_client_gos_words(template: str, message: str) -> None:
    with pytest.raises(JSONPathError, match=message.replace("[", r"\[")):
        execute(template, STORE)


def test_custom_columns_paths_are_relaxed() -> None:
    assert relaxed(".metadata.name") == "{.metadata.name}"
    assert relaxed("metadata.name") == "{.metadata.name}"
    assert relaxed("{.metadata.name}") == "{.metadata.name}"
