"""The death matrix is measured: each cell comes from what the cluster did after one fault."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kubelab.viz.death_matrix import BASELINE, SINGLE_ROWS, DeathMatrix, experiment, single_cluster


@pytest.fixture(scope="module")
def matrix() -> DeathMatrix:
    return DeathMatrix.run(seed=0)


def cells(matrix: DeathMatrix, part: str) -> dict[str, str]:
    row = next(r for r in matrix.rows() if r[0] == part)
    return dict(zip(matrix.headings(), row, strict=True))


def test_the_baseline_does_everything_at_once(matrix: DeathMatrix) -> None:
    assert matrix.baseline is not None
    assert all(at is not None and at <= 5 for at in matrix.baseline.worked_at.values())


def test_without_the_api_server_nothing_changes_but_pods_keep_running(matrix: DeathMatrix) -> None:
    row = cells(matrix, "apiserver")
    assert row["running pods keep running"] == "yes"
    assert row["new pods start"] == row["scaling and self-healing"] == row["kubectl works"] == "no"
    outcome = next(o for o in matrix.outcomes if o.part == "apiserver")
    assert "was refused" in outcome.errors["kubectl"]
    assert outcome.recovery is not None and outcome.recovery > 1  # informers back off, then relist


def test_each_control_plane_part_stops_only_its_own_work(matrix: DeathMatrix) -> None:
    scheduler = cells(matrix, "scheduler")
    assert scheduler["new pods start"] == "no" and scheduler["kubectl works"] == "yes"
    manager = cells(matrix, "controller-manager")
    assert manager["new pods start"] == "yes" and manager["scaling and self-healing"] == "no"


def test_a_dead_node_takes_its_pods_and_they_come_back_after_eviction(matrix: DeathMatrix) -> None:
    node = cells(matrix, "a whole node")
    assert node["running pods keep running"] == "no (1 of 3 died)"
    outcome = next(o for o in matrix.outcomes if o.part == "a whole node")
    healed = outcome.worked_at["scaling"]
    # 50 s to NotReady, 300 s of tolerated NoExecute taint, then a replacement starts
    assert healed is not None and 350 <= healed <= 400
    kubelet = cells(matrix, "a kubelet")
    assert kubelet["running pods keep running"] == "yes"  # nobody stops its containers


def test_same_seed_same_matrix(matrix: DeathMatrix) -> None:
    again = experiment(SINGLE_ROWS[0], single_cluster, seed=0)
    assert again == matrix.outcomes[0]
    assert experiment(BASELINE, single_cluster, seed=0) == matrix.baseline


def test_the_timeline_is_an_svg_with_one_lane_per_row(matrix: DeathMatrix) -> None:
    root = ET.fromstring(matrix.timeline())
    labels = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for outcome in matrix.outcomes:
        assert outcome.part in labels
    assert "<table>" in matrix._repr_html_()
