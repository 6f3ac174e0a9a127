"""The hot paths have shortcuts (issue: performance); each must agree with the general code it
stands for, on inputs chosen to hit the edges."""

from __future__ import annotations

import random
from typing import Any

from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.apiserver.storage.watch_cache import Cacher
from kubelab.sim import Clock, Trace
from kubelab.store import Store


def test_the_watch_window_keeps_bytes_not_decoded_objects() -> None:
    clock = Clock()
    server = APIServer(Store(clock, trace=Trace(lambda: clock.now)), clock, random.Random(0))
    token = server.token_for("admin")
    selected: list[Any] = []
    everything: list[Any] = []
    server.watch(Request("watch", "configmaps", namespace="default", token=token,
                         label_selector="app=x"), selected.append)
    server.watch(Request("watch", "configmaps", namespace="default", token=token), everything.append)
    for i in range(3):
        server.handle(Request("create", "configmaps", namespace="default", token=token, body={
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"c{i}", "labels": {"app": "x" if i else "y"}}}))
    clock.run_until_idle()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in selected] == \
        [("ADDED", "c1"), ("ADDED", "c2")]
    assert [e["object"]["metadata"]["name"] for e in everything] == ["c0", "c1", "c2"]
    assert selected[0]["object"] is not everything[1]["object"]  # each watcher has its own copy
    cacher: Cacher = next(c for c in server.served.cachers.values() if c.resource == "configmaps")
    assert cacher.window and all(ev._obj is None and ev._prev is None for ev in cacher.window)
