"""Watch faults keep what a real watch guarantees: one watch delivers in resourceVersion order,
and a fault that does reorder it ends the watch so that its client notices (issue 15).

The clusters here have no anatomy (anatomy=False): each watch then sees only the test's own
ConfigMaps, where the anatomy's root-CA publisher puts kube-root-ca.crt in every namespace."""

from __future__ import annotations

from typing import Any

from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.cluster import Cluster

Object = dict[str, Any]


def _cm(name: str) -> Object:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {}}


def _watch(c: Cluster) -> list[tuple[str, str, int]]:
    seen: list[tuple[str, str, int]] = []

    def on_event(event: Object) -> None:
        meta = event["object"].get("metadata") or {}
        if event["type"] == "ERROR":
            seen.append(("ERROR", str(event["object"].get("code")), 0))
        else:
            seen.append((event["type"], meta["name"], int(meta["resourceVersion"])))
    c.client.watch("configmaps", on_event, "default")
    return seen


def test_a_delay_shifts_the_stream_and_healing_it_does_not_reorder() -> None:
    c = Cluster(nodes=0, anatomy=False, seed=1)
    seen = _watch(c)
    c.faults.delay_watch_events(5.0)
    c.client.create(_cm("a"))
    c.run(1)
    c.faults.delay_watch_events(1.0)  # a shorter delay: b still waits for a
    c.client.create(_cm("b"))
    c.faults.heal_watch_events()      # healed: c still waits for a and b
    c.client.create(_cm("c"))
    c.run(1)
    assert seen == []
    c.run(5)
    assert [name for _, name, _ in seen] == ["a", "b", "c"]
    assert [rv for *_, rv in seen] == sorted(rv for *_, rv in seen)


def test_a_reordered_watch_ends_with_410_right_after_its_resource_version_goes_back() -> None:
    broken = 0
    for seed in range(5):
        c = Cluster(nodes=0, anatomy=False, seed=seed)
        seen = _watch(c)
        c.faults.reorder_watch_events(3.0)
        for i in range(10):
            c.client.create(_cm(f"cm-{i}"))
            c.run(0.2)
        c.run(10)
        rvs = [rv for kind, _, rv in seen if kind != "ERROR"]
        back = next((i for i in range(1, len(rvs)) if rvs[i] < max(rvs[:i])), None)
        if back is None:
            assert ("ERROR", "410", 0) not in seen and len(rvs) == 10
            continue
        broken += 1
        assert seen[back + 1:] == [("ERROR", "410", 0)]  # then nothing: the watch is over
    assert broken >= 3


def test_a_client_with_a_reordered_watch_relists_and_its_cache_is_right() -> None:
    c = Cluster(nodes=0, anatomy=False, seed=3)
    informer = SharedInformerFactory(c.client, c.clock, rand=c.rand).informer_for("configmaps")
    informer.run()
    c.faults.reorder_watch_events(3.0)
    for i in range(10):
        c.client.create(_cm(f"cm-{i}"))
        c.client.patch("configmaps", f"cm-{i // 2}", {"data": {"v": str(i)}})
        c.run(0.2)
    c.run(30)
    cached = {(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in informer.indexer.list()}
    truth = {(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in c.get("configmaps")}
    assert cached == truth


def test_a_watch_fault_for_one_user_leaves_the_others_alone() -> None:
    c = Cluster(nodes=0, anatomy=False, seed=2)
    seen = _watch(c)  # the admin's watch
    c.faults.duplicate_watch_events(1.0, user="system:kube-controller-manager")
    c.faults.reorder_watch_events(3.0, user="system:kube-controller-manager")
    for i in range(5):
        c.client.create(_cm(f"cm-{i}"))
    c.run(5)
    assert [name for _, name, _ in seen] == [f"cm-{i}" for i in range(5)]


def test_a_healed_fault_does_not_come_back_with_the_next_one() -> None:
    # Soak seed 190: a drop, healed, then a delay for the controller manager; the delay
    # silently lost a fifth of its events, as the healed drop had been set to.
    c = Cluster(nodes=0, anatomy=False, seed=1)
    seen = _watch(c)
    c.faults.drop_watch_events(1.0)
    c.faults.heal_watch_events()
    c.faults.delay_watch_events(1.0)
    for i in range(5):
        c.client.create(_cm(f"cm-{i}"))
    c.run(5)
    assert [(kind, name) for kind, name, _ in seen] == [("ADDED", f"cm-{i}") for i in range(5)]


def test_a_fault_aimed_elsewhere_replaces_the_one_on() -> None:
    # A drop aimed at the scheduler, then a delay for everyone: the drop is not carried over
    # to every watch (nothing would tell those clients to relist).
    c = Cluster(nodes=0, anatomy=False, seed=1)
    seen = _watch(c)
    c.faults.drop_watch_events(1.0, user="system:kube-scheduler")
    c.faults.delay_watch_events(1.0)
    for i in range(5):
        c.client.create(_cm(f"cm-{i}"))
    c.run(5)
    assert [(kind, name) for kind, name, _ in seen] == [("ADDED", f"cm-{i}") for i in range(5)]


def test_faults_aimed_at_the_same_watches_add_up() -> None:
    c = Cluster(nodes=0, anatomy=False, seed=1)
    seen = _watch(c)
    c.faults.delay_watch_events(2.0)
    c.faults.duplicate_watch_events(1.0)  # still delayed, now twice
    c.client.create(_cm("a"))
    c.run(1)
    assert seen == []
    c.run(2)
    assert [(kind, name) for kind, name, _ in seen] == [("ADDED", "a"), ("ADDED", "a")]
