"""The Raft panel: its buttons crash, partition and heal etcd members through c.faults (no browser)."""

from __future__ import annotations

import pytest

import kubelab
from kubelab.widgets import RaftPanel


def test_raft_panel_loses_and_regains_the_quorum() -> None:
    c = kubelab.Cluster(etcd_members=3, components=[], nodes=0)
    panel = RaftPanel(c)
    assert panel.actions.lines()[0] == "start 3 of 3 etcd member(s) up, leader etcd-1, a quorum"
    assert "<b style='color:#1e8449'>leader</b>" in panel.table.value
    panel.buttons["write a key"].click()
    assert panel.actions.entries[-1].ok and "raft-panel-1 created" in panel.actions.last
    panel.buttons["crash etcd-1"].click()                  # the leader
    assert panel.buttons["crash etcd-1"].description == "restart etcd-1"
    assert "<b style='color:#c0392b'>down</b>" in panel.table.value
    panel.buttons["run 10 s"].click()
    assert "t = 10.0 s" in panel.run_controls.time.value  # the run controls' clock moved too
    assert c.etcd is not None and c.etcd.leader in ("etcd-2", "etcd-3")
    assert "became leader at term" in panel.timeline.value
    panel.buttons["write a key"].click()                   # two of three: writes go on
    assert panel.actions.entries[-1].ok
    other = "etcd-3" if c.etcd.leader == "etcd-2" else "etcd-2"
    panel.buttons[f"partition {other}"].click()
    assert "no quorum" in panel.table.value
    assert panel.buttons[f"partition {other}"].description == "heal network"
    panel.buttons["write a key"].click()
    assert panel.actions.lines()[-1].endswith("write a key: Error from server: etcdserver: request timed out")
    assert not panel.actions.entries[-1].ok
    panel.buttons[f"partition {other}"].click()            # heals
    panel.buttons["crash etcd-1"].click()                  # now labelled "restart etcd-1"
    assert "t=10s restart etcd-1: etcd-1 restarted" in panel.actions.lines()[-1]
    panel.buttons["run 10 s"].click()
    statuses = c.etcd.status()
    assert len({s.applied for s in statuses}) == 1 and "no quorum" not in panel.table.value
    faults = [r.verb for r in c.trace.filter(component="faults")]
    assert faults == ["crash_etcd_member", "partition_etcd", "heal_etcd", "restart_etcd_member"]


def test_raft_panel_needs_an_etcd_cluster() -> None:
    with pytest.raises(ValueError, match="etcd_members=3"):
        RaftPanel(kubelab.Cluster(components=[], nodes=0))
