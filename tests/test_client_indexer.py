"""Indexer, ThreadSafeStore and listers, ported from client-go tools/cache/index_test.go,
thread_safe_store_test.go, store_test.go and listers_test.go."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.client.indexer import (
    NAMESPACE_INDEX,
    Indexer,
    KeyFuncError,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from kubelab.client.listers import GenericLister, list_all, list_all_by_namespace
from kubelab.client.thread_safe_store import ThreadSafeStore


def pod(name: str, namespace: str = "default", node: str = "", labels: dict[str, str] | None = None,
        users: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if users:
        meta["annotations"] = {"users": users}
    spec: dict[str, Any] = {"nodeName": node} if node else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def by_node(obj: Any) -> list[str]:
    """Pods by spec.nodeName; pending pods (no node yet) are not indexed."""
    node = obj["spec"].get("nodeName")
    return [node] if node else []


def by_users(obj: Any) -> list[str]:
    return str(obj["metadata"].get("annotations", {}).get("users", "")).split(",")


def names(objs: list[Any]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


class Eq:
    """A tiny label selector: key=value."""

    def __init__(self, key: str, value: str) -> None:
        self.key, self.value = key, value

    def matches(self, labels: Mapping[str, str]) -> bool:
        return labels.get(self.key) == self.value


# ---------------------------------------------------------------- keys


def test_meta_namespace_key_func() -> None:
    assert meta_namespace_key_func(pod("web", "prod")) == "prod/web"
    assert meta_namespace_key_func({"kind": "Node", "metadata": {"name": "n1"}}) == "n1"
    assert meta_namespace_key_func("already/a-key") == "already/a-key"  # ExplicitKey
    with pytest.raises(ValueError, match="object has no meta"):
        meta_namespace_key_func({"kind": "Pod"})


def test_split_meta_namespace_key() -> None:
    assert split_meta_namespace_key("ns/name") == ("ns", "name")
    assert split_meta_namespace_key("name") == ("", "name")
    with pytest.raises(ValueError, match='unexpected key format: "a/b/c"'):
        split_meta_namespace_key("a/b/c")


# ---------------------------------------------------------------- store basics


def test_store_add_update_delete_get_list() -> None:
    store = Indexer()
    store.add(pod("a"))
    store.add(pod("b"))
    assert store.get_by_key("default/a") == (pod("a"), True)
    assert store.get(pod("b")) == (pod("b"), True)
    assert store.get_by_key("default/zzz") == (None, False)
    store.update(pod("a", node="n1"))
    assert store.get_by_key("default/a")[0]["spec"] == {"nodeName": "n1"}
    store.delete(pod("a"))
    assert store.list_keys() == ["default/b"]
    assert names(store.list()) == ["b"]
    store.delete(pod("never-there"))  # deleting what is not there is fine
    assert len(store) == 1


def test_store_replace() -> None:
    store = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    store.add(pod("old", "ns1"))
    store.replace([pod("x", "ns2"), pod("y", "ns2")], "42")
    assert store.list_keys() == ["ns2/x", "ns2/y"]
    assert store.by_index(NAMESPACE_INDEX, "ns1") == []
    assert names(store.by_index(NAMESPACE_INDEX, "ns2")) == ["x", "y"]


def test_bad_object_raises_key_error_and_changes_nothing() -> None:
    store = Indexer()
    store.add(pod("a"))
    with pytest.raises(KeyFuncError, match="couldn't create key for object"):
        store.add({"kind": "Pod", "spec": {}})
    with pytest.raises(KeyFuncError):
        store.replace([pod("b"), {"kind": "Pod"}])
    assert store.list_keys() == ["default/a"]


# ---------------------------------------------------------------- indices


def test_get_index_func_values() -> None:
    index = Indexer(indexers={"testmodes": lambda o: [o["metadata"]["labels"]["foo"]]})
    index.add(pod("one", labels={"foo": "bar"}))
    index.add(pod("two", labels={"foo": "bar"}))
    index.add(pod("tre", labels={"foo": "biz"}))
    assert sorted(index.list_index_func_values("testmodes")) == ["bar", "biz"]


def test_multi_index_keys() -> None:
    index = Indexer(indexers={"byUser": by_users})
    one, two, tre = pod("one", users="ernie,bert"), pod("two", users="bert,oscar"), \
        pod("tre", users="ernie,elmo")
    for p in (one, two, tre):
        index.add(p)
    expected = {"ernie": {"one", "tre"}, "bert": {"one", "two"}, "elmo": {"tre"},
                "oscar": {"two"}, "elmo1": set()}
    for user, want in expected.items():
        assert set(names(index.by_index("byUser", user))) == want
    assert index.index_keys("byUser", "ernie") == ["default/one", "default/tre"]

    index.delete(tre)
    assert names(index.by_index("byUser", "ernie")) == ["one"]
    assert index.by_index("byUser", "elmo") == []

    index.update(pod("two", users="oscar"))
    assert names(index.by_index("byUser", "bert")) == ["one"]
    # index(): objects sharing any indexed value with the given object.
    assert sorted(names(index.index("byUser", pod("q", users="bert,oscar")))) == ["one", "two"]


def test_pods_by_node_update_moves_index_entries() -> None:
    index = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func, "nodeName": by_node})
    index.add(pod("web-1"))  # pending: not on any node
    index.add(pod("web-2", node="n1"))
    index.add(pod("db-1", "data", node="n1"))
    assert index.list_index_func_values("nodeName") == ["n1"]
    assert names(index.by_index("nodeName", "n1")) == ["web-2", "db-1"]

    index.update(pod("web-1", node="n2"))  # bound by the scheduler
    index.update(pod("web-2", node="n2"))  # (not really possible, but indices must follow)
    assert names(index.by_index("nodeName", "n1")) == ["db-1"]
    assert names(index.by_index("nodeName", "n2")) == ["web-1", "web-2"]
    assert index.index_keys(NAMESPACE_INDEX, "default") == ["default/web-1", "default/web-2"]


def test_delete_removes_index_entries_and_empty_values() -> None:
    # TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex
    index = Indexer(indexers={"nodeName": by_node})
    index.add(pod("a", node="n1"))
    index.add(pod("b", node="n1"))
    index.delete(pod("a"))
    assert names(index.by_index("nodeName", "n1")) == ["b"]  # non-empty set kept
    index.delete(pod("b"))
    assert index.by_index("nodeName", "n1") == []
    assert index.list_index_func_values("nodeName") == []


def test_indexing_functions_with_multiple_values() -> None:
    # TestThreadSafeStoreIndexingFunctionsWithMultipleValues
    store = ThreadSafeStore({"users": by_users})
    store.add("k1", pod("one", users="bert"))
    store.add("k2", pod("two", users="bert,ernie"))
    store.add("k3", pod("tre", users="ernie"))
    assert store.index_keys("users", "bert") == ["k1", "k2"]
    store.update("k2", pod("two", users="bert,oscar"))
    assert store.index_keys("users", "ernie") == ["k3"]
    assert store.index_keys("users", "oscar") == ["k2"]
    store.update("k2", pod("two", users="ernie"))
    assert store.index_keys("users", "bert") == ["k1"]
    assert store.index_keys("users", "ernie") == ["k2", "k3"]
    assert store.index_keys("users", "oscar") == []


def test_unknown_index_is_an_error() -> None:
    index = Indexer()
    with pytest.raises(ValueError, match="Index with name nodeName does not exist"):
        index.by_index("nodeName", "n1")
    with pytest.raises(ValueError, match="does not exist"):
        index.index_keys("nodeName", "n1")


def test_failing_index_func_changes_nothing() -> None:
    index = Indexer(indexers={"nodeName": by_node})
    index.add(pod("a", node="n1"))
    with pytest.raises(ValueError, match='unable to calculate an index entry for key "default/a"'):
        index.update({"kind": "Pod", "metadata": {"name": "a", "namespace": "default"}})
    assert index.get_by_key("default/a")[0] == pod("a", node="n1")
    assert names(index.by_index("nodeName", "n1")) == ["a"]


def test_add_indexers_after_objects_are_stored() -> None:
    index = Indexer()
    index.add(pod("a", node="n1"))
    index.add(pod("b", node="n2"))
    index.add_indexers({"nodeName": by_node})
    assert names(index.by_index("nodeName", "n2")) == ["b"]
    index.add(pod("c", node="n2"))
    assert names(index.by_index("nodeName", "n2")) == ["b", "c"]
    with pytest.raises(ValueError, match=r"indexer conflict: \['nodeName'\]"):
        index.add_indexers({"nodeName": by_node})
    assert sorted(index.get_indexers()) == ["nodeName"]


# ---------------------------------------------------------------- listers


def lister_fixture() -> GenericLister:
    index = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    index.add(pod("web-1", labels={"app": "web"}))
    index.add(pod("web-2", "prod", labels={"app": "web"}))
    index.add(pod("db-1", "prod", labels={"app": "db"}))
    return GenericLister(index, "pods")


def test_lister_list_with_selector() -> None:
    lister = lister_fixture()
    assert names(lister.list()) == ["web-1", "web-2", "db-1"]
    assert names(lister.list(Eq("app", "web"))) == ["web-1", "web-2"]
    assert names(lister.by_namespace("prod").list()) == ["web-2", "db-1"]
    assert names(lister.by_namespace("prod").list(Eq("app", "db"))) == ["db-1"]
    assert names(lister.by_namespace("").list(Eq("app", "web"))) == ["web-1", "web-2"]


def test_lister_namespaced_get_and_not_found() -> None:
    lister = lister_fixture()
    assert lister.by_namespace("prod").get("db-1")["metadata"]["name"] == "db-1"
    with pytest.raises(ApiError) as caught:
        lister.by_namespace("default").get("db-1")
    assert caught.value.code == 404
    assert caught.value.reason == "NotFound"
    assert str(caught.value) == 'pods "db-1" not found'


def test_lister_cluster_scoped_get() -> None:
    nodes = GenericLister(Indexer(), "nodes")
    nodes.indexer.add({"kind": "Node", "metadata": {"name": "n1"}})
    assert nodes.get("n1")["metadata"]["name"] == "n1"
    with pytest.raises(ApiError, match='nodes "n2" not found'):
        nodes.get("n2")
    deployments = GenericLister(Indexer(), "deployments", group="apps")
    with pytest.raises(ApiError, match=r'deployments\.apps "web" not found'):
        deployments.by_namespace("default").get("web")


def test_list_all_by_namespace_without_index_scans() -> None:
    store = Indexer()
    store.add(pod("a", "x"))
    store.add(pod("b", "y"))
    assert names(list_all_by_namespace(store, "y")) == ["b"]
    assert names(list_all(store, Eq("app", "none"))) == []


def test_cache_returns_the_stored_objects_themselves() -> None:
    # Read-only by contract: the lister hands out the cached dict, not a copy.
    lister = lister_fixture()
    first = lister.by_namespace("prod").get("db-1")
    assert first is lister.by_namespace("prod").get("db-1")
