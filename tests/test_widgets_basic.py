"""The store and watch panels: each control changes the cluster and the trace (no browser)."""

from __future__ import annotations

from kubelab.cluster import Cluster
from kubelab.controllers.sample import ConfigMapCopier, copies_match
from kubelab.sim import Clock, Trace
from kubelab.store import Store
from kubelab.widgets import StorePanel
from kubelab.widgets.watch_panel import WatchPanel


def test_store_panel_buttons_write_compact_and_slow_the_disk() -> None:
    clock = Clock()
    store = Store(clock, trace=Trace(lambda: clock.now))
    panel = StorePanel(store, clock)
    panel.write_button.click()
    panel.write_button.click()
    assert store.revision == 3
    assert "revision <b>3</b>" in panel.status.value
    panel.compact_button.click()
    assert store.compact_revision == 3
    panel.compact_button.click()  # a second compaction at the same revision is refused, shown
    assert "compact refused" in panel.log.value
    panel.latency.value = 0.5
    assert store.latency == 0.5
    panel.write_button.click()
    assert "waited 0.5s for the disk" in panel.log.value
    panel.run_button.click()
    assert clock.now == 1.0 and "t=1.0s" in panel.status.value


def test_watch_panel_faults_are_recorded_and_the_copier_heals() -> None:
    c = Cluster(nodes=0, seed=5, components=[])
    c.add_component("copier", ConfigMapCopier)
    panel = WatchPanel(c)
    panel.buttons["change a source"].click()
    panel.buttons["run 10 s"].click()
    assert copies_match(c.get("configmaps")) and "desired == actual" in panel.status.value
    panel.buttons["drop events"].click()
    for _ in range(3):
        panel.buttons["change a source"].click()
    panel.buttons["run 10 s"].click()
    assert "dropped" in panel.status.value
    panel.buttons["crash controller"].click()
    assert "copier" not in c.components and "crashed" in panel.status.value
    panel.buttons["restart controller"].click()
    panel.buttons["heal watch"].click()
    panel.buttons["run 10 s"].click()
    panel.buttons["run 10 s"].click()
    assert copies_match(c.get("configmaps")), panel.status.value
    faults = [r.verb for r in c.trace.filter(component="faults")]
    assert faults == ["drop_watch_events", "crash", "restart", "heal_watch_events"]
    panel.buttons["crash controller"].click()
    panel.buttons["crash controller"].click()  # crashing twice is an error shown in the panel
    assert "is not running" in panel.status.value


def test_apiserver_panel_grant_revoke_and_slow_disk() -> None:
    from kubelab.widgets.apiserver_panel import ApiServerPanel

    c = Cluster(nodes=1, seed=2, components=[])
    panel = ApiServerPanel(c, user="bob")
    panel.buttons["bob: list pods"].click()
    assert 'User "bob" cannot list resource "pods"' in panel.last
    assert "authorization" in panel.status.value  # the audit table names the stage
    panel.buttons["grant bob pod reader"].click()
    panel.buttons["admin: create a pod"].click()
    panel.buttons["bob: list pods"].click()
    assert panel.last == "bob sees 1 pod(s)"
    panel.buttons["revoke bob's role"].click()
    panel.buttons["bob: list pods"].click()
    assert panel.last.startswith("Error from server (Forbidden)")
    panel.latency.value = 0.5
    assert c.store.latency == 0.5
    panel.buttons["admin: create a pod"].click()
    assert "the store made it wait 0.5s" in panel.last
    panel.buttons["compact the store"].click()
    assert c.store.compact_revision == c.store.revision
    assert [r.verb for r in c.trace.filter(component="faults")] == ["slow_store", "compact"]
