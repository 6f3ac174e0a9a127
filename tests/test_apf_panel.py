"""APFPanel: seats and queues per priority level while a noisy tenant floods."""

from __future__ import annotations

from kubelab import Cluster
from kubelab.widgets import APFPanel


def test_the_panel_shows_a_flood_filling_its_level_while_node_high_carries_on() -> None:
    c = Cluster(nodes=2, seed=1)
    c.apiserver.enable_priority_and_fairness(server_concurrency_limit=25)
    panel = APFPanel(c)  # the notebook's button: 6,000 lists/s of configmaps for 2 s
    assert panel.actions.lines()[0].endswith("priority and fairness is on; no flood is running")
    assert {r[0] for r in panel.rows()} == {"catch-all", "exempt", "global-default",
                                             "leader-election", "node-high", "system",
                                             "workload-high", "workload-low"}
    panel.buttons["noisy tenant: 6000 lists/s of configmaps for 2s"].click()
    panel.controls.advance(1.0)
    rows = {r[0]: r for r in panel.rows()}
    assert int(rows["global-default"][5]) > 0               # the flood is refused ...
    assert int(rows["global-default"][3]) > 0               # ... once its queues are full
    assert rows["node-high"][5] == "0"                      # the kubelets are not
    assert "refused (429)" in panel.status.value and "flooding" in panel.status.value
    panel.buttons["stop the flood"].click()
    assert panel.last.startswith("stopped 1 flood(s);") and "refused with 429" in panel.last
    flood = panel.floods[0]
    assert not flood.running and flood.rejected > 0
    assert [r.verb for r in c.trace.filter(component="faults")] == ["flood"]


def test_the_panel_says_when_priority_and_fairness_is_off() -> None:
    panel = APFPanel(Cluster(nodes=0, components=[]))
    assert "off (Cluster(apf=True) turns it on)" in panel.actions.lines()[0]
    assert panel.rows() == [] and "priority and fairness is off" in panel.status.value


def test_five_hundred_small_lists_a_second_are_not_noisy() -> None:
    # 500 x ~1 ms is half a seat of global-default's 3: a burst of a tick waits a moment for a
    # seat, nothing is refused. A tenant is noisy by the seat-seconds it asks for, which is why
    # the button sends 6,000.
    c = Cluster(nodes=2, seed=1)
    c.apiserver.enable_priority_and_fairness(server_concurrency_limit=25)
    flood = c.faults.flood("polite-tenant", per_second=500, seconds=2, resource="configmaps")
    c.run(3)
    assert flood.sent == flood.answered > 900 and flood.rejected == 0
    fc = c.apiserver.flowcontrol
    assert fc is not None
    waits = [r.wait for r in fc.completed if r.priority_level == "global-default" and r.wait is not None]
    assert len(waits) > 900 and max(waits) < 0.005
