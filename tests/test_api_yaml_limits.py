"""YAML, apply and client input that used to raise Python errors or hang: go-yaml's limits and words.

sigs.k8s.io/yaml reads YAML with go-yaml v2, which refuses a value that contains itself, more
nesting than it allows, and documents whose values come mostly from aliases (billion laughs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kubelab
from kubelab.api import ApiError, ParseError, load_objects
from kubelab.api.yamlio import MAX_DEPTH

HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
PREFIX = "error parsing <input>: error converting YAML to JSON: yaml: "


def laughs(levels: int) -> str:
    text = HEAD + 'data:\n  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    previous = "a"
    for name in "bcdefghijklmn"[:levels - 1]:
        text += f"  {name}: &{name} [{', '.join(['*' + previous] * 9)}]\n"
        previous = name
    return text


def message(source: Any) -> str:
    with pytest.raises(ParseError) as info:
        load_objects(source)
    return str(info.value)


@pytest.mark.parametrize("levels", [5, 9])
def test_billion_laughs_is_refused_before_it_expands(levels: int) -> None:
    assert message(laughs(levels)) == PREFIX + "document contains excessive aliasing"


def test_a_few_aliases_are_fine() -> None:
    [obj] = load_objects(HEAD + "data: {a: &v hello, b: *v}\n")
    assert obj["data"] == {"a": "hello", "b": "hello"}
    assert len(load_objects(laughs(2))) == 1  # under 1000 values: go-yaml does not count


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    assert message(HEAD + "data: &a [*a]\n") == PREFIX + "anchor 'a' value contains itself"


@pytest.mark.parametrize("text", [
    "a: " + "[" * 600 + "]" * 600,
    "".join("  " * i + "a:\n" for i in range(600)),
])
def test_deep_nesting_is_refused(text: str) -> None:
    assert message(text).endswith(f"exceeded max depth of {MAX_DEPTH}")


def test_nesting_within_the_limit_is_read() -> None:
    depth = MAX_DEPTH - 5
    [obj] = load_objects(HEAD + "spec: " + "[" * depth + "]" * depth + "\n")
    assert isinstance(obj["spec"], list)


def test_deep_or_self_sharing_python_objects_are_bounded() -> None:
    deep: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap"}
    cursor = deep
    for _ in range(2000):
        cursor["a"] = {}
        cursor = cursor["a"]
    assert message(deep).endswith(f"exceeded max depth of {MAX_DEPTH}")
    shared: list[Any] = ["x"] * 10
    for _ in range(7):
        shared = [shared] * 10
    assert message({"apiVersion": "v1", "kind": "ConfigMap", "data": shared}).endswith(
        "document contains excessive aliasing")


def test_long_text_is_text_not_a_path() -> None:
    # Path("<300 characters, no '/'>").is_file() raises OSError (File name too long).
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
            "data": {"k": "v" * 400}}
    assert load_objects(json.dumps(body)) == [body]
    assert "the document is a str" in message("y" * 400)
    assert message("bad\x00name.yaml").startswith('error reading "bad')


def test_a_path_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text(HEAD)
    assert load_objects(str(path))[0]["metadata"]["name"] == "x"


@pytest.mark.parametrize(("source", "expected"), [
    (None, "must specify one of -f and -k"),
    (5, "cannot read objects from a int"),
    ("apiVersion: v1\nkind: List\nitems: 5\n", 'unable to decode "<input>": json: cannot '
     "unmarshal number into Go struct field decodeList.items of type []json.RawMessage"),
])
def test_what_cannot_hold_objects_is_a_parse_error(source: Any, expected: str) -> None:
    assert message(source).startswith(expected)


def test_apply_and_the_client_check_their_arguments() -> None:
    c = kubelab.Cluster(nodes=1, seed=0)
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                  "metadata": {"labels": {"app": "web"}},
                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}
    cases = [
        (lambda: c.apply({**deploy, "metadata": {"name": "web", "namespace": 3}}),
         "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.namespace of "
         "type string"),
        (lambda: c.apply({**deploy, "metadata": "x"}),
         "json: cannot unmarshal string into Go struct field Deployment.metadata of type "
         "v1.ObjectMeta"),
        (lambda: c.client.create({**deploy, "metadata": "x"}), "Deployment.metadata of type"),
        (lambda: c.client.delete("pods", 5), "invalid resource name 5: must be a string"),  # type: ignore[arg-type]
        (lambda: c.client.get("pods", "web", None), "invalid namespace None"),  # type: ignore[arg-type]
    ]
    for call, expected in cases:
        with pytest.raises(ApiError) as info:
            call()
        assert info.value.code == 400 and expected in info.value.message, info.value.message
    assert c.get("deployments") == []
