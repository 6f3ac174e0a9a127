"""The controllers' shortcuts (issue: density): each must agree with the general code it
stands for, and each cache must notice what would make it wrong."""

from __future__ import annotations

import copy
import random
from datetime import timedelta
from typing import Any

import pytest

from kubelab.api.meta import EPOCH, deep_copy, get_controller_of, get_controller_of_no_copy, micro_time
from kubelab.client import events as events_module
from kubelab.client.events import EventRecorder
from kubelab.cluster import Cluster
from kubelab.controllers.deployment.util import equal_ignore_hash

Object = dict[str, Any]


def test_deep_copy_copies_every_json_node_and_hands_the_rest_to_copy_deepcopy() -> None:
    obj: Object = {"a": [1, 2.5, {"b": None, "c": True}], "d": {"e": "f"}, "g": (1, [2])}
    clone = deep_copy(obj)
    assert clone == obj
    clone["a"][2]["b"] = "changed"
    clone["d"]["e"] = "changed"
    clone["g"][1].append(3)
    assert obj == {"a": [1, 2.5, {"b": None, "c": True}], "d": {"e": "f"}, "g": (1, [2])}


def test_get_controller_of_copies_and_no_copy_does_not() -> None:
    ref = {"kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}
    obj = {"metadata": {"ownerReferences": [{"kind": "X", "uid": "v"}, ref]}}
    assert get_controller_of(obj) == ref and get_controller_of(obj) is not ref
    assert get_controller_of_no_copy(obj) is ref
    assert get_controller_of_no_copy({"metadata": {}}) is None


def _reference_without_hash(template: Object | None) -> Object:
    """The upstream way: copy, delete the label, drop what became empty."""
    t = copy.deepcopy(template or {})
    meta = t.setdefault("metadata", {})
    labels = dict(meta.get("labels") or {})
    labels.pop("pod-template-hash", None)
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    if not meta:
        t.pop("metadata")
    return t


def test_equal_ignore_hash_agrees_with_copying_and_deleting_the_label() -> None:
    rand = random.Random(3)

    def template() -> Object | None:
        if rand.random() < 0.05:
            return None
        t: Object = {}
        if rand.random() < 0.8:
            meta: Object = {}
            if rand.random() < 0.8:
                meta["labels"] = {k: rand.choice("xy") for k in rand.sample(
                    ["app", "tier", "pod-template-hash"], rand.randrange(4))}
            if rand.random() < 0.3:
                meta["annotations"] = {"a": rand.choice("xy")} if rand.random() < 0.7 else {}
            t["metadata"] = meta
        if rand.random() < 0.9:
            t["spec"] = {"containers": [{"name": "c", "image": rand.choice(["a", "b"])}]}
        return t
    for _ in range(2000):
        t1, t2 = template(), template()
        assert equal_ignore_hash(t1, t2) == (_reference_without_hash(t1) == _reference_without_hash(t2))


def test_an_event_recorder_remembers_only_the_most_recent_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events_module, "LRU_CACHE_SIZE", 3)
    c = Cluster(nodes=1, components=[])
    recorder = EventRecorder(c.client, "test", c.clock)
    pod = c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    for reason in ("A", "B", "A", "C", "D"):  # A is used again before C and D come: B goes
        recorder.event(pod, "Normal", reason, "m")
    recorder.event(pod, "Normal", "A", "m")  # still remembered: aggregated
    recorder.event(pod, "Normal", "B", "m")  # forgotten: a new Event
    counts = sorted((e["reason"], e["count"]) for e in c.events())
    assert counts == [("A", 3), ("B", 1), ("B", 1), ("C", 1), ("D", 1)]
    assert len(recorder._seen) == 3 and len(recorder._buckets) == 1


def test_micro_time_formats_like_strftime() -> None:
    rand = random.Random(11)
    values = [0, 1.25, -3.5, 86399.9999995, 5e-7, 1.5e-6] + [rand.uniform(-1e6, 1e8) for _ in range(3000)]
    for value in values:
        expected = (EPOCH + timedelta(seconds=value)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert micro_time(value) == expected
