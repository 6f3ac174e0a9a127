"""List with selectors and paging, and the watch cache: resourceVersions, selector transitions,
410 after compaction, the node index, faults (stop/start, interceptor, broken callbacks)."""

from __future__ import annotations

from typing import Any

import pytest
from test_apiserver_support import Env, config_map, node, pod

from kubelab.api.errors import ApiError
from kubelab.api.request import Request, WatchEvent


@pytest.fixture
def env() -> Env:
    return Env()


class Recorder:
    def __init__(self) -> None:
        self.events: list[WatchEvent] = []
        self.closed = 0

    def __call__(self, event: WatchEvent) -> None:
        self.events.append(event)

    def close(self) -> None:
        self.closed += 1

    def seen(self) -> list[tuple[str, str]]:
        return [(e["type"], e["object"].get("metadata", {}).get("name", "")) for e in self.events]


def watch(env: Env, resource: str = "configmaps", namespace: str = "default",
          token: str | None = None, **kwargs: Any) -> tuple[Recorder, Any]:
    rec = Recorder()
    handle = env.server.watch(Request("watch", resource, namespace=namespace,
                                      token=env.admin if token is None else token, **kwargs),
                              rec, rec.close)
    return rec, handle


def labelled(name: str, **labels: str) -> dict[str, Any]:
    body = config_map(name)
    body["metadata"]["labels"] = labels
    return body


# ------------------------------------------------------------------ list


def test_list_with_label_and_field_selectors(env: Env) -> None:
    env.create("configmaps", labelled("a", app="web", tier="fe"))
    env.create("configmaps", labelled("b", app="web", tier="be"))
    env.create("configmaps", labelled("c", app="db"))

    def names(**kwargs: Any) -> list[str]:
        return [i["metadata"]["name"] for i in env.req("list", "configmaps", **kwargs)["items"]]

    assert names(label_selector="app=web") == ["a", "b"]
    assert names(label_selector="app in (web,db),tier!=be") == ["a", "c"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(label_selector="app=web", field_selector="metadata.name!=a") == ["b"]


def test_a_list_by_metadata_name_reads_one_key(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """store.go ListPredicate: metadata.name=<name> reads that key, not the whole prefix,
    when the key can be known (a namespaced list across all namespaces cannot)."""
    for n in ("n1", "n2", "n3"):
        env.create("nodes", node(n))
    env.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    env.create("configmaps", config_map("b"))
    env.create("configmaps", config_map("b", "other"), namespace="other")
    env.create("configmaps", labelled("c", app="web"))
    ranges: list[tuple[str, Any]] = []
    real_range = env.store.range

    def spy(key: str, end: Any = None, **kwargs: Any) -> Any:
        ranges.append((key, end))
        return real_range(key, end, **kwargs)
    monkeypatch.setattr(env.store, "range", spy)

    def names(resource: str, namespace: str = "default", **kwargs: Any) -> list[tuple[str, str]]:
        items = env.req("list", resource, namespace, **kwargs)["items"]
        return [(i["metadata"].get("namespace", ""), i["metadata"]["name"]) for i in items]

    assert names("nodes", field_selector="metadata.name=n2") == [("", "n2")]
    assert ranges == [("/registry/minions/n2", "/registry/minions/n2\x00")]
    assert names("configmaps", field_selector="metadata.name=b") == [("default", "b")]
    assert names("configmaps", field_selector="metadata.name=c", label_selector="app=db") == []
    assert names("nodes", field_selector="metadata.name=gone") == []
    assert [r[0] for r in ranges[1:]] == ["/registry/configmaps/default/b",
                                          "/registry/configmaps/default/c", "/registry/minions/gone"]
    ranges.clear()
    assert names("configmaps", "", field_selector="metadata.name=b") == [("default", "b"), ("other", "b")]
    assert ranges == [("/registry/configmaps/", "/registry/configmaps0")]  # every namespace: the prefix


def test_bad_selectors_are_400(env: Env) -> None:
    err = env.error("list", "configmaps", label_selector="app==(")
    assert err.code == 400 and "couldn't parse the selector string" in err.message
    err = env.error("list", "pods", field_selector="spec.foo=bar")
    assert (err.code, err.message) == (400, "field label not supported: spec.foo")


def test_list_pages_with_limit_and_continue(env: Env) -> None:
    for i in range(7):
        env.create("configmaps", config_map(f"cm-{i}"))
    page = env.req("list", "configmaps", limit=3)
    names = [i["metadata"]["name"] for i in page["items"]]
    revision = page["metadata"]["resourceVersion"]
    assert page["metadata"]["remainingItemCount"] == 4
    env.create("configmaps", config_map("cm-late"))  # not in the snapshot the pages show
    while "continue" in page["metadata"]:
        page = env.req("list", "configmaps", limit=3, continue_token=page["metadata"]["continue"])
        names += [i["metadata"]["name"] for i in page["items"]]
        assert page["metadata"]["resourceVersion"] == revision
    assert names == [f"cm-{i}" for i in range(7)]


def test_continue_after_compaction_is_410(env: Env) -> None:
    for i in range(4):
        env.create("configmaps", config_map(f"cm-{i}"))
    page = env.req("list", "configmaps", limit=2)
    env.create("configmaps", config_map("later"))
    env.store.compact(env.store.revision)
    err = env.error("list", "configmaps", limit=2, continue_token=page["metadata"]["continue"])
    assert (err.code, err.reason) == (410, "Expired")
    assert err.message.startswith("The provided continue parameter is too old")


def test_bad_continue_tokens_are_400(env: Env) -> None:
    err = env.error("list", "configmaps", continue_token="!!!")
    assert err.code == 400 and err.message.startswith("invalid continue token: continue key is "
                                                      "not valid")
    err = env.error("list", "configmaps", resource_version="abc")
    assert err.message == ('invalid resource version: strconv.ParseUint: parsing "abc": '
                           "invalid syntax")


# ------------------------------------------------------------------ watch


def test_watch_from_now_sends_current_state_first(env: Env) -> None:
    env.create("configmaps", config_map("a"))
    for rv in ("", "0"):
        rec, _ = watch(env, resource_version=rv)
        assert rec.events == []  # events arrive later, on the clock
        env.settle()
        assert rec.seen() == [("ADDED", "a")]


def test_watch_from_a_resource_version_sends_what_came_after(env: Env) -> None:
    a = env.create("configmaps", config_map("a"))
    env.create("configmaps", config_map("b"))
    a["data"] = {"k": "2"}
    env.update("configmaps", a)
    env.settle()
    rec, _ = watch(env, resource_version=a["metadata"]["resourceVersion"])
    env.delete("configmaps", "b")
    env.settle()
    assert rec.seen() == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in rec.events]
    assert revisions == sorted(revisions)


def test_selector_transitions_become_added_and_deleted(env: Env) -> None:
    rec, _ = watch(env, label_selector="app=web")
    cm = env.create("configmaps", labelled("a", app="db"))
    cm["metadata"]["labels"] = {"app": "web"}
    cm = env.update("configmaps", cm)
    cm["data"] = {"k": "2"}
    cm = env.update("configmaps", cm)
    cm["metadata"]["labels"] = {"app": "db"}
    moved_out = env.update("configmaps", cm)
    env.settle()
    assert [e["type"] for e in rec.events] == ["ADDED", "MODIFIED", "DELETED"]
    deleted = rec.events[-1]["object"]
    assert deleted["metadata"]["labels"] == {"app": "web"}  # the last state it matched in
    assert deleted["metadata"]["resourceVersion"] == moved_out["metadata"]["resourceVersion"]


def test_watch_from_a_compacted_resource_version_gets_410(env: Env) -> None:
    old = env.create("configmaps", config_map("a"))
    env.create("configmaps", config_map("b"))
    env.create("configmaps", config_map("c"))
    env.store.compact(env.store.revision)
    rec, _ = watch(env, resource_version=old["metadata"]["resourceVersion"])
    env.settle()
    assert len(rec.events) == 1 and rec.events[0]["type"] == "ERROR"
    status = rec.events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"] == (f"too old resource version: {old['metadata']['resourceVersion']}"
                                 f" ({env.store.revision})")
    assert rec.closed == 1


def test_watch_older_than_the_cache_window_gets_410(env: Env) -> None:
    first = env.create("configmaps", config_map("a"))
    cacher = env.server.served.cachers[("", "configmaps")]
    cacher.window = type(cacher.window)(cacher.window, maxlen=3)
    for i in range(5):
        env.create("configmaps", config_map(f"x{i}"))
    env.settle()
    rec, _ = watch(env, resource_version=first["metadata"]["resourceVersion"])
    env.settle()
    assert rec.events[0]["type"] == "ERROR" and rec.events[0]["object"]["code"] == 410


def test_each_watcher_gets_its_own_copy(env: Env) -> None:
    a, _ = watch(env)
    b, _ = watch(env)
    env.create("configmaps", config_map("x"))
    env.settle()
    a.events[0]["object"]["data"]["k"] = "mutated"
    assert b.events[0]["object"]["data"]["k"] == "v"


def test_watchers_with_selectors_get_their_own_copies_too(env: Env) -> None:
    # The copy decoded to test the selectors goes to one watcher only; the others (and the
    # selector tests that follow) get their own.
    recs = [watch(env, label_selector="app=web")[0] for _ in range(3)]
    env.create("configmaps", labelled("x", app="web"))
    env.settle()
    recs[0].events[0]["object"]["metadata"]["labels"]["app"] = "mutated"
    env.req("update", "configmaps", name="x", body=labelled("x", app="db"))  # stops matching
    env.settle()
    assert [r.seen() for r in recs] == [[("ADDED", "x"), ("DELETED", "x")]] * 3
    objects = [e["object"] for r in recs for e in r.events]
    assert len({id(o) for o in objects}) == 6
    assert [o["metadata"]["labels"]["app"] for o in objects[2:]] == ["web"] * 4


def spy_on_indexed_watchers(cacher: Any) -> list[str]:
    """The field selectors of the indexed watchers each event is offered to, in order."""
    offered: list[str] = []
    for watchers in cacher.by_trigger.values():
        for w in watchers.values():
            original = w.offer

            def spy(ev: Any, w: Any = w, original: Any = original) -> None:
                offered.append(w.info.field_selector)
                original(ev)
            w.offer = spy
    return offered


def test_kubelet_watches_are_indexed_by_node(env: Env) -> None:
    for i in range(3):
        env.create("pods", pod(f"p{i}"))
    recs = {n: watch(env, "pods", "", field_selector=f"spec.nodeName={n}")[0]
            for n in ("node-1", "node-2")}
    unassigned, _ = watch(env, "pods", "", field_selector="spec.nodeName=")
    cacher = env.server.served.cachers[("", "pods")]
    assert set(cacher.by_trigger) == {"node-1", "node-2", ""} and not cacher.watchers
    offered = spy_on_indexed_watchers(cacher)
    env.settle()
    for i in range(3):
        env.req("create", "pods", name=f"p{i}", subresource="binding", body={
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": f"p{i}"},
            "target": {"name": "node-1"}})
    env.settle()
    assert "spec.nodeName=node-2" not in offered
    assert recs["node-1"].seen() == [("ADDED", "p0"), ("ADDED", "p1"), ("ADDED", "p2")]
    assert recs["node-2"].events == []
    assert [t for t, _ in unassigned.seen()] == ["ADDED"] * 3 + ["DELETED"] * 3


def test_kubelet_node_watches_are_indexed_by_name(env: Env) -> None:
    # Upstream's node storage indexes watchers by metadata.name: a thousand kubelets each
    # watching their own Node are not each offered every Node's heartbeat.
    for n in ("node-1", "node-2"):
        env.create("nodes", node(n))
    recs = {n: watch(env, "nodes", "", field_selector=f"metadata.name={n}")[0]
            for n in ("node-1", "node-2")}
    everyone, _ = watch(env, "nodes", "")
    env.settle()  # the creates reach the cache (each offered to its own node's watcher only)
    cacher = env.server.served.cachers[("", "nodes")]
    assert set(cacher.by_trigger) == {"node-1", "node-2"} and list(cacher.watchers) == [everyone_id(env)]
    offered = spy_on_indexed_watchers(cacher)
    env.req("patch", "nodes", name="node-1", subresource="status",
            body={"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    env.req("delete", "nodes", name="node-1")
    env.settle()
    assert offered == ["metadata.name=node-1", "metadata.name=node-1"]
    assert recs["node-1"].seen() == [("ADDED", "node-1"), ("MODIFIED", "node-1"), ("DELETED", "node-1")]
    assert recs["node-2"].seen() == [("ADDED", "node-2")]
    assert [t for t, _ in everyone.seen()] == ["ADDED", "ADDED", "MODIFIED", "DELETED"]


def bind(env: Env, name: str, node_name: str, namespace: str = "default") -> None:
    env.req("create", "pods", namespace, name=name, subresource="binding", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"name": node_name}})


def node_pods(env: Env, node_name: str, namespace: str = "", **kwargs: Any) -> list[str]:
    listing = env.req("list", "pods", namespace, field_selector=f"spec.nodeName={node_name}",
                      **kwargs)
    return [i["metadata"]["name"] for i in listing["items"]]


def test_a_list_of_one_nodes_pods_reads_the_keys_the_index_names(
        env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pod watch cache's spec.nodeName index (pod strategy.go NodeNameIndexFunc): once
    fresh, a kubelet's list reads its own pods' keys and no other pod."""
    for i in range(4):
        env.create("pods", pod(f"p{i}"))
    for i, node_name in enumerate(("node-1", "node-2", "node-1")):
        bind(env, f"p{i}", node_name)
    env.delete("pods", "p2", gracePeriodSeconds=0)
    env.settle()
    cacher = env.server.served.cachers[("", "pods")]
    assert cacher.fresh()
    assert cacher.index == {"node-1": {"/registry/pods/default/p0"},
                            "node-2": {"/registry/pods/default/p1"},
                            "": {"/registry/pods/default/p3"}}
    ranges: list[str] = []
    real_range = env.store.range

    def spy(key: str, end: Any = None, **kwargs: Any) -> Any:
        ranges.append(key)
        return real_range(key, end, **kwargs)
    monkeypatch.setattr(env.store, "range", spy)
    assert node_pods(env, "node-1") == ["p0"]
    assert node_pods(env, "node-1", label_selector="app=db") == []  # the predicate still decides
    assert node_pods(env, "node-2", "other") == []                  # and so does the namespace
    assert node_pods(env, "node-3") == []
    assert ranges == ["/registry/pods/default/p0"] * 2
    initial, _ = watch(env, "pods", "", field_selector="spec.nodeName=node-2")
    env.settle()
    assert initial.seen() == [("ADDED", "p1")] and ranges[2:] == ["/registry/pods/default/p1"]


def test_a_list_before_the_cache_has_caught_up_reads_the_store(env: Env) -> None:
    """A write the cache has not been sent yet: upstream's consistent list would wait for the
    cache; ours reads every pod from the store, and the answer is the same."""
    env.create("pods", pod("p0"))
    env.settle()
    bind(env, "p0", "node-1")
    env.create("pods", pod("p1", nodeName="node-1"))
    cacher = env.server.served.cachers[("", "pods")]
    assert not cacher.fresh() and cacher.by_index("node-1") is None
    assert node_pods(env, "node-1") == ["p0", "p1"]
    env.settle()
    assert cacher.by_index("node-1") == ["/registry/pods/default/p0", "/registry/pods/default/p1"]
    assert node_pods(env, "node-1") == ["p0", "p1"]


def test_only_a_change_to_its_own_keys_leaves_a_cache_behind(env: Env) -> None:
    """The store watch's caught_up (etcd's progress notification): writes to other
    resources do not keep the pod cache from serving."""
    env.create("pods", pod("p0", nodeName="node-1"))
    cacher = env.server.served.cachers[("", "pods")]
    assert not cacher.fresh()
    env.settle()
    env.create("configmaps", config_map("c"))
    assert cacher.fresh() and cacher.by_index("node-1") == ["/registry/pods/default/p0"]
    env.delete("pods", "p0", gracePeriodSeconds=0)
    assert not cacher.fresh()
    env.settle()
    assert cacher.fresh() and cacher.by_index("node-1") == [] and cacher.index == {}


def test_the_index_does_not_depend_on_how_the_bytes_are_laid_out(env: Env) -> None:
    """Pods the store holds in another JSON layout (spaces after colons, as the json module
    writes): a server started on that store indexes them by their decoded spec.nodeName."""
    import json

    from kubelab.apiserver import APIServer

    body = pod("spaced", nodeName="node-1")
    body["metadata"].update(uid="u1", creationTimestamp="2024-01-01T00:00:00Z")
    env.store.put("/registry/pods/default/spaced", json.dumps(body).encode())
    env.server.stop()
    server = APIServer(env.store, env.clock, env.server.rand)
    env.server = server
    assert node_pods(env, "node-1") == ["spaced"]
    rec, _ = watch(env, "pods", "", field_selector="spec.nodeName=node-1")
    env.settle()
    assert rec.seen() == [("ADDED", "spaced")]


def test_list_pages_of_one_nodes_pods_continue_through_the_store(env: Env) -> None:
    for i in range(3):
        env.create("pods", pod(f"p{i}", nodeName="node-1"))
    env.create("pods", pod("q", nodeName="node-2"))
    env.settle()
    first = env.req("list", "pods", "", field_selector="spec.nodeName=node-1", limit=2)
    assert [i["metadata"]["name"] for i in first["items"]] == ["p0", "p1"]
    token = first["metadata"]["continue"]
    rest = env.req("list", "pods", "", field_selector="spec.nodeName=node-1", limit=2,
                   continue_token=token)
    assert [i["metadata"]["name"] for i in rest["items"]] == ["p2"]
    assert "continue" not in rest["metadata"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    last = env.req("list", "pods", "", field_selector="spec.nodeName=node-1", limit=3)
    assert "continue" not in last["metadata"] and len(last["items"]) == 3


def everyone_id(env: Env) -> int:
    return max(env.server.served.cachers[("", "nodes")].watchers)


def test_stop_closes_every_watch_and_start_serves_again(env: Env) -> None:
    rec, _ = watch(env)
    env.create("configmaps", config_map("a"))
    env.settle()
    env.server.stop()
    assert rec.closed == 1
    env.server.start()
    rec2, _ = watch(env, resource_version="")
    env.settle()
    assert rec2.seen() == [("ADDED", "a")]


def test_close_watches_is_the_fault_layers_cable_cut(env: Env) -> None:
    rec, _ = watch(env)
    rec2, _ = watch(env, label_selector="x=y")
    assert env.server.close_watches() == 2
    assert (rec.closed, rec2.closed) == (1, 1)
    env.create("configmaps", config_map("a"))
    env.settle()
    assert rec.events == []


def test_stop_on_a_handle_ends_delivery_without_on_close(env: Env) -> None:
    rec, handle = watch(env)
    handle.stop()
    handle.stop()
    env.create("configmaps", config_map("a"))
    env.settle()
    assert rec.events == [] and rec.closed == 0


def test_a_broken_watcher_is_closed_and_others_go_on(env: Env) -> None:
    def broken(event: WatchEvent) -> None:
        raise RuntimeError("bug in a controller")

    closed: list[bool] = []
    env.server.watch(Request("watch", "configmaps", namespace="default", token=env.admin),
                     broken, lambda: closed.append(True))
    good, _ = watch(env)
    env.create("configmaps", config_map("a"))
    env.create("configmaps", config_map("b"))
    env.settle()
    assert closed == [True]
    assert good.seen() == [("ADDED", "a"), ("ADDED", "b")]
    assert env.trace.filter(verb="watch-callback-error")


def test_watch_interceptor_sees_every_event_and_may_delay_or_drop(env: Env) -> None:
    seen: list[tuple[str, str]] = []

    class Interceptor:
        def __call__(self, info: Any, event: WatchEvent) -> list[tuple[float, WatchEvent]]:
            seen.append((info.user, event["type"]))
            name = event["object"]["metadata"]["name"]
            return [] if name == "dropped" else [(5.0, event)]

        def on_open(self, info: Any) -> bool:
            return False

    env.server.watch_interceptor = Interceptor()
    rec, _ = watch(env)
    env.create("configmaps", config_map("late"))
    env.create("configmaps", config_map("dropped"))
    env.clock.run(until=env.clock.now + 1)
    assert rec.events == [] and seen == [("admin", "ADDED"), ("admin", "ADDED")]
    env.clock.run(until=env.clock.now + 5)
    assert rec.seen() == [("ADDED", "late")]


def test_watch_request_errors_are_raised(env: Env) -> None:
    with pytest.raises(ApiError) as info:
        watch(env, token="")
    assert info.value.code == 403
    with pytest.raises(ApiError) as info:
        watch(env, field_selector="spec.nodeName=x")
    assert info.value.code == 400
    assert env.server.audit[-1].verb == "watch"


def test_watch_deliveries_are_traced(env: Env) -> None:
    watch(env)
    env.create("configmaps", config_map("a"))
    env.settle()
    record = env.trace.filter(verb="watch-event")[-1]
    assert record.object == "configmaps/default/a"
    assert record.detail["type"] == "ADDED" and record.detail["to"] == "admin"
