"""getReplicaSetFraction's own test table (pkg/controller/deployment/util/deployment_util_test.go,
TestGetReplicaSetFraction): a missing or zero max-replicas annotation and a zero status.replicas
never divide by zero."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.controllers.deployment.replicas import get_proportion, get_replica_set_fraction

MAX = "deployment.kubernetes.io/max-replicas"


def _deployment(replicas: int, status_replicas: int = 0, surge: int = 0) -> dict[str, Any]:
    return {"metadata": {"name": "nginx"}, "status": {"replicas": status_replicas},
            "spec": {"replicas": replicas, "strategy": {
                "type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": 1}}}}


def _rs(replicas: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "nginx-1", "annotations": annotations}, "spec": {"replicas": replicas}}


@pytest.mark.parametrize(("d_replicas", "status_replicas", "surge", "rs_replicas", "annotations",
                          "fraction"), [
    (0, 0, 0, 10, None, -10),                # an empty deployment always scales to 0
    (10, 0, 0, 5, None, 0),                  # annotation removed, status.replicas 0: no scaling
    (10, 0, 0, 5, {MAX: "0"}, 0),            # annotation set to 0 by a third party: no scaling
    (120, 100, 0, 50, None, 10),             # annotation removed: status.replicas is the base
    (120, 100, 0, 50, {MAX: "0"}, 10),       # annotation 0: status.replicas is the base
    (120, 0, 0, 50, {MAX: "100"}, 10),
    (120, 0, 10, 50, {MAX: "110"}, 9),       # surge pods scale proportionally too
    (10, 0, 0, 6, {MAX: "12"}, -1),
    (100, 0, 10, 50, {MAX: "130"}, -8),
])
def test_replica_set_fraction_follows_upstream_table(
        d_replicas: int, status_replicas: int, surge: int, rs_replicas: int,
        annotations: dict[str, str] | None, fraction: int) -> None:
    d = _deployment(d_replicas, status_replicas, surge)
    assert get_replica_set_fraction(_rs(rs_replicas, annotations), d) == fraction


def test_proportion_with_no_base_adds_nothing_either_way() -> None:
    rs = _rs(5, {MAX: "0"})
    assert get_proportion(rs, _deployment(10), 5, 0) == 0
    assert get_proportion(rs, _deployment(3), -2, 0) == 0
