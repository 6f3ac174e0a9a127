"""Issue 28: a huge replica count or parallelism never makes one sync create everything.

Upstream's ReplicaSet controller creates at most burstReplicas (500) pods per sync
(pkg/controller/replicaset/replica_set.go manageReplicas) and the Job controller at most
MaxPodCreateDeletePerSync (500) (pkg/controller/job/job_controller.go manageJob), both in
slow-start batches of 1, 2, 4, ... (controller_utils.go slowStartBatch). These tests count the
creates each sync makes, so the controller manager's client runs unthrottled here (UNLIMITED): at
its default 20 QPS the 1,200 creates would take a minute of virtual time, and the cap is what is
tested, not the pacing (tests/test_client_flowcontrol.py tests that). (What a Deployment of
5,000 replicas costs in wall time is benchmarks/bench_bad_input.py's: each pod event is a sync
over every pod, as upstream.)"""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.cluster import Cluster
from kubelab.controllers.controller_utils import PodControl
from kubelab.controllers.job import job_controller
from kubelab.controllers.replicaset.replica_set import ReplicaSetController

Object = dict[str, Any]
UNLIMITED = {"controller-manager": {"qps": -1, "burst": 0}}


def _count_creates_per_sync(monkeypatch: pytest.MonkeyPatch, cls: Any, sync: str) -> list[int]:
    per_sync: list[int] = []
    create = PodControl.create_pods
    original = getattr(cls, sync)

    def counting_create(self: PodControl, namespace: str, *args: Any, **kwargs: Any) -> Any:
        if per_sync and namespace == "default":  # not the anatomy's kube-system pods
            per_sync[-1] += 1
        return create(self, namespace, *args, **kwargs)

    def counting_sync(self: Any, key: str) -> None:
        if not key.startswith("default/"):  # the anatomy's own (coredns's ReplicaSet)
            original(self, key)
            return
        per_sync.append(0)
        original(self, key)
        if per_sync[-1] == 0:
            per_sync.pop()  # a sync that created nothing
    monkeypatch.setattr(PodControl, "create_pods", counting_create)
    monkeypatch.setattr(cls, sync, counting_sync)
    return per_sync


def test_a_replica_set_creates_at_most_burst_replicas_per_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    per_sync = _count_creates_per_sync(monkeypatch, ReplicaSetController, "sync_replica_set")
    c = Cluster(nodes=0, client_connection=UNLIMITED)
    c.client.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                     "spec": {"replicas": 1200, "selector": {"matchLabels": {"app": "rs"}},
                              "template": {"metadata": {"labels": {"app": "rs"}}, "spec": {
                                  "containers": [{"name": "c", "image": "nginx"}]}}}})
    c.run(2)
    assert per_sync == [500, 500, 200]
    assert len(c.get("pods", namespace="default")) == 1200


def test_a_job_creates_at_most_500_pods_per_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[int] = []
    original = job_controller.manage_job.manage_job

    def counting(jm: Any, jctx: Any, backoff: Any) -> Any:
        before = len(jctx.active_pods)
        active, err = original(jm, jctx, backoff)
        created.append(active - before)
        return active, err
    monkeypatch.setattr(job_controller.manage_job, "manage_job", counting)
    c = Cluster(nodes=0, client_connection=UNLIMITED)
    c.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "wide"},
             "spec": {"parallelism": 10**6, "completions": 10**6, "template": {"spec": {
                 "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})
    c.run(2.5)
    # one sync when the Job is added, then one per syncJobBatchPeriod (1 s) of pod events
    assert created == [500, 500, 500]
