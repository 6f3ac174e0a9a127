"""Watch fan-out counters, list paths, and the relist storm after every API server restarts."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.apiserver.storage.fanout import watcher_class
from kubelab.client.client import ConnectionRefused


def cm(name: str, value: str = "v") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"k": value}}


def test_watcher_classes() -> None:
    assert watcher_class("system:node:node-7") == "kubelets"
    assert watcher_class("system:kube-scheduler") == "scheduler"
    assert watcher_class("system:kube-controller-manager") == "controller-manager"
    assert watcher_class("kubernetes-admin") == "kubectl"
    assert watcher_class("alice") == "alice"


def test_every_event_is_counted_per_watcher_class_and_encoded_once() -> None:
    c = Cluster(nodes=0, components=[])
    got: list[Any] = []
    for user in ("alice", "alice", "bob"):
        client = c.client_for(user)
        c.apiserver.add_token(f"token-{user}", user, ["system:masters"])
        client.watch("configmaps", got.append, "default")
    c.run(1)
    c.apiserver.fanout.reset()
    for i in range(3):
        c.client.create(cm(f"c{i}", "x" * 10 * (i + 1)))
    c.client.delete("configmaps", "c0", "default")
    c.run(1)
    sizes = [len(c.store.range(f"/registry/configmaps/default/c{i}").kvs[0].value)
             for i in (1, 2)]
    first = len(got) and sum(1 for e in got if e["type"] == "ADDED")
    assert first == 9 and len(got) == 12
    totals = c.apiserver.fanout.totals()
    assert totals["events"] == {"alice": 8, "bob": 4}
    # c0 went out twice (ADDED, then its last state with DELETED)
    c0 = totals["bytes"]["bob"] - sum(sizes)
    assert c0 > 0 and totals["bytes"]["alice"] == 2 * totals["bytes"]["bob"]
    assert totals["encoded"]["all"] == sum(sizes) + c0  # once per event, not per watcher


def test_lists_say_which_path_served_them() -> None:
    c = Cluster(nodes=2, components=["kubelet"])
    c.run(5)
    c.apiserver.fanout.reset()
    kubelet = c.client_for("system:node:node-1")
    c.apiserver.add_token("token-system:node:node-1", "system:node:node-1", ["system:nodes"])
    kubelet.list("pods", "", field_selector="spec.nodeName=node-1")
    c.client.list("pods", "")
    assert c.apiserver.fanout.totals()["lists"] == {"kubelets/watch-cache": 1, "kubectl/etcd": 1}


def test_per_second_series() -> None:
    c = Cluster(nodes=0, components=[])
    c.client.watch("configmaps", lambda e: None, "default")
    c.run(1.5)
    start = int(c.clock.now)
    c.client.create(cm("a"))
    c.run(2)
    c.client.create(cm("b"))
    c.client.create(cm("c"))
    c.run(1)
    series = c.apiserver.fanout.series("events", start, start + 3)
    assert series == {"kubectl": [1, 0, 2]}


def test_restarting_every_api_server_makes_every_reflector_relist_spread_by_backoff() -> None:
    c = Cluster(nodes=6)
    c.run(30)
    t0 = c.clock.now
    watches = c.faults.restart_apiservers()
    assert watches > 12  # every kubelet watches its pods and its node, and more
    c.run(60)
    lists = [r for r in c.apiserver.audit if r.verb == "list" and r.time >= t0]
    kubelet_lists = [r for r in lists if r.user.startswith("system:node:")]
    assert len(kubelet_lists) >= 12
    times = sorted(r.time for r in lists)
    # backoff: nobody relists at the instant of the restart; jitter: not all at one instant
    assert times[0] >= t0 + 0.8 and len(set(times)) > len(times) // 2
    # each reflector waits its backoff between the 410 and its relist (wait.BackoffUntil)
    last_error: dict[tuple[str, str], float] = {}
    waits = []
    for r in c.trace:
        if r.time >= t0 and r.verb == "watch-error":
            last_error[r.component, r.object] = r.time
        elif r.time >= t0 and r.verb == "list" and (r.component, r.object) in last_error:
            waits.append(r.time - last_error.pop((r.component, r.object)))
    assert len(waits) >= 12 and min(waits) >= 0.8 and len(set(waits)) == len(waits)
    totals = c.apiserver.fanout.totals()["lists"]
    assert totals["kubelets/watch-cache"] + totals.get("kubelets/etcd", 0) >= 6
    # and the cluster still works afterwards
    c.apply(cm("after"))
    assert c.get("configmaps", "after")["data"] == {"k": "v"}


def test_restart_apiservers_with_downtime_refuses_requests_meanwhile() -> None:
    c = Cluster(nodes=1)
    c.run(5)
    c.faults.restart_apiservers(down=10)
    with pytest.raises(ConnectionRefused):
        c.client.list("pods", "")
    c.run(11)
    assert c.client.list("pods", "default")["items"] == []  # kube-system holds the anatomy's
    with pytest.raises(ValueError):
        c.faults.restart_apiservers(down=-1)


def test_paged_lists_of_one_nodes_pods_go_where_should_delegate_list_sends_them() -> None:
    """delegator.ShouldDelegateList: the cache serves a consistent list and its first page; a
    legacy exact list (a limit and a resourceVersion) and a continued one go to etcd. The
    work estimator asks the same question, so it agrees with the path that served."""
    from kubelab.api.request import Request
    from kubelab.apiserver.flowcontrol.work_estimator import _list_from_storage

    c = Cluster(nodes=2, components=["kubelet"])
    c.run(5)
    for i in range(3):
        c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                         "spec": {"nodeName": "node-1",
                                  "containers": [{"name": "c", "image": "x"}]}},
                        "default")
    c.run(1)
    kubelet = c.client_for("system:node:node-1")
    c.apiserver.add_token("token-system:node:node-1", "system:node:node-1", ["system:nodes"])
    asks = [{}, {"limit": 2}]
    first = kubelet.list("pods", "", field_selector="spec.nodeName=node-1", limit=2)
    rv = first["metadata"]["resourceVersion"]
    asks += [{"limit": 2, "resource_version": rv},
             {"limit": 2, "continue_token": first["metadata"]["continue"]}]
    c.apiserver.fanout.reset()
    paths = []
    for ask in asks:
        kubelet.list("pods", "", field_selector="spec.nodeName=node-1", **ask)
        lists = c.apiserver.fanout.totals()["lists"]
        paths.append("etcd" if lists.get("kubelets/etcd") else "watch-cache")
        c.apiserver.fanout.reset()
        request = Request("list", "pods", field_selector="spec.nodeName=node-1", **ask)
        assert _list_from_storage(request) == (paths[-1] == "etcd"), ask
    assert paths == ["watch-cache", "watch-cache", "etcd", "etcd"]
