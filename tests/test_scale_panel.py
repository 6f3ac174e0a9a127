"""The scale panel's controls, driven without a browser."""

from __future__ import annotations

from kubelab import Cluster
from kubelab.widgets.scale_panel import ScalePanel


def test_panel_shows_fanout_relists_and_etcd_and_its_buttons_act() -> None:
    c = Cluster(nodes=4)
    c.run(20)
    labels = {"app": "web"}
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 8, "selector": {"matchLabels": labels},
                      "template": {"metadata": {"labels": labels},
                                   "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    c.run(9)
    panel = ScalePanel(c, window=10)
    events, lists, etcd = panel.rows()
    assert {r[0] for r in events} >= {"kubelets", "controller-manager"}
    assert lists == []  # everyone is watching: no LISTs once started
    panel.restart_apiservers()
    panel.run(60)
    panel.window = 60
    events, lists, etcd = panel.rows()
    served = {(r[0], r[1]) for r in lists}
    assert ("kubelets", "watch-cache") in served and ("scheduler", "etcd") in served
    assert sum(int(r[2]) for r in lists if r[0] == "kubelets") >= 8  # pods and node, 4 kubelets
    before = c.store.db_size
    panel.compact()
    panel.defragment()
    assert c.store.db_size < before
    assert etcd[0][2] == "2048.0 MiB" and etcd[0][5] == "none"
    panel.disarm()
    texts = [e.result for e in panel.actions.entries]
    assert any("open watches ended" in t for t in texts)
    assert any("given back" in t for t in texts)
    assert "etcd DB SIZE" in panel.status.value


def test_panel_and_maintenance_faults_on_a_store_without_a_quota() -> None:
    import pytest

    c = Cluster(nodes=1, components=[])

    class Bare:  # a Backend with no quota (a Raft cluster of stores, a real etcd)
        revision, compact_revision = 7, 0

    c.store = Bare()  # type: ignore[assignment]
    panel = ScalePanel(c)
    assert panel.rows()[2] == [["-", "-", "-", "7", "0", "-"]]
    with pytest.raises(ValueError, match="has no defragment"):
        c.faults.defragment()
