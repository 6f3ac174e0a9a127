"""Metadata helpers, the resource table and YAML loading."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from kubelab.api import ParseError, ResourceTable, dump_all, load_objects
from kubelab.api.meta import (
    get_controller_of,
    micro_time,
    namespace_key,
    new_uid,
    parse_time,
    random_suffix,
    rfc3339,
    split_key,
)

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    created: 2025-01-01
spec:
  containers:
  - name: app
    image: nginx:1.27
"""


def test_keys() -> None:
    assert namespace_key({"metadata": {"namespace": "default", "name": "web"}}) == "default/web"
    assert namespace_key({"metadata": {"name": "node-1"}}) == "node-1"
    assert split_key("default/web") == ("default", "web")
    assert split_key("node-1") == ("", "node-1")
    with pytest.raises(ValueError, match='unexpected key format: "a/b/c"'):
        split_key("a/b/c")


def test_uids_and_suffixes_come_from_the_seed() -> None:
    uid = new_uid(random.Random(1))
    assert uid == new_uid(random.Random(1)) and uid != new_uid(random.Random(2))
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", uid)
    suffix = random_suffix(random.Random(1))
    assert len(suffix) == 5 and not set(suffix) & set("aeiou013")


def test_timestamps_are_virtual() -> None:
    assert rfc3339(0) == "2025-01-01T00:00:00Z"
    assert rfc3339(90.9) == "2025-01-01T00:01:30Z"
    assert micro_time(1.25) == "2025-01-01T00:00:01.250000Z"
    assert parse_time(rfc3339(3600)) == 3600
    assert parse_time(micro_time(1.25)) == 1.25
    assert parse_time("2024-12-31T23:59:59.5Z") == -0.5
    for bad in ("yesterday", "2025-02-30T00:00:00Z", "2025-01-01T00:00:00", "2025-01-01 00:00:00Z",
                "2025-01-01T00:00:00.1234567Z", "\uff12025-01-01T00:00:00Z"):
        with pytest.raises(ValueError, match="RFC 3339"):
            parse_time(bad)


def test_controller_of() -> None:
    pod = {"metadata": {"ownerReferences": [
        {"kind": "ReplicaSet", "name": "a"}, {"kind": "ReplicaSet", "name": "b", "controller": True}]}}
    assert get_controller_of(pod) == {"kind": "ReplicaSet", "name": "b", "controller": True}
    assert get_controller_of({"metadata": {}}) is None


def test_resource_table_lookups() -> None:
    table = ResourceTable()
    for name in ("pods", "pod", "po", "Pod"):
        assert table.lookup(name) is not None and table.lookup(name).resource == "pods"  # type: ignore[union-attr]
    deploy = table.lookup("deploy")
    assert deploy is not None and deploy.qualified == "deployments.apps"
    assert deploy.api_version == "apps/v1"
    assert table.for_kind("apps/v1", "Deployment") is deploy
    assert table.for_kind("apps/v1beta1", "Deployment") is None
    assert table.lookup("widgets") is None
    ns = table.lookup("ns")
    assert ns is not None and not ns.namespaced and ns.name_rule == "label"


def test_load_multi_document_text_and_lists(tmp_path: Path) -> None:
    text = POD + (
        "---\n---\napiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"
    )
    objs = load_objects(text)
    assert [o["kind"] for o in objs] == ["Pod", "ConfigMap"]
    assert objs[0]["metadata"]["annotations"]["created"] == "2025-01-01"  # stays a string
    path = tmp_path / "pod.yaml"
    path.write_text(POD)
    assert load_objects(str(path)) == load_objects(path) == [objs[0]]
    assert load_objects(objs[0]) == [objs[0]]
    assert load_objects(load_objects(dump_all(objs))) == objs


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [", "error converting YAML to JSON: yaml: line"),
        ("kind: Pod\nmetadata: {name: a}\n", "error validating data: apiVersion not set"),
        ("metadata: {name: a}\n", "error validating data: [apiVersion not set, kind not set]"),
        ("- a\n- b\n", "the document is a list, not an object"),
        ("just words", "the document is a str, not an object"),
        ("missing.yaml", 'the path "missing.yaml" does not exist'),
    ],
)
def test_bad_yaml_names_the_problem(source: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        load_objects(source)
    assert message in str(info.value)
