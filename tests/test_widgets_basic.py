"""The store and watch panels: each control changes the cluster and the trace (no browser)."""

from __future__ import annotations

from kubelab.cluster import Cluster
from kubelab.samples.sample_controller import ConfigMapCopier, copies_match
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
    assert panel.actions.lines()[-2:] == [
        "t=0s compact at revision 3: history below revision 3 is gone",
        "t=0s compact at revision 3: refused: mvcc: required revision has been compacted"]
    panel.latency.value = 0.5
    assert store.latency == 0.5
    panel.write_button.click()
    assert "waited 0.5s for the disk" in panel.actions.lines()[-1]
    assert panel.actions.lines()[0] == ("start the store is at revision 1, compacted below 0, 0 key(s) "
                                        "under /registry/")
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
    assert "is not running" in panel.actions.lines()[-1] and not panel.actions.entries[-1].ok
    assert "crashed" in panel.status.value
    assert panel.actions.lines()[0] == ("start copier running; 0 ConfigMap(s) in default, every copy "
                                        "matches; watch events delivered as sent; the store at revision 25")
    restarted = next(line for line in panel.actions.lines() if "restart controller" in line)
    assert restarted.endswith("copier restarted: it lists, watches and catches up only as virtual "
                              "time runs (run 10 s)")


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


def test_apiserver_panel_starts_from_the_state_it_states() -> None:
    """Notebook 02 granted bob a role before the panel: the panel takes it away and says so."""
    from kubelab.widgets.apiserver_panel import ApiServerPanel

    c = Cluster(nodes=0, seed=2, components=[])
    c.apply([{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
              "metadata": {"name": "bob-can-view", "namespace": "default"},
              "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
              "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"}}])
    c.client_for("bob").list("pods", "default")  # he can, before the panel
    panel = ApiServerPanel(c, user="bob")
    assert panel.actions.lines()[0].startswith(
        "start bob has no RoleBinding in default (the panel deleted rolebinding bob-can-view, made "
        "earlier), so listing pods is refused until grant")
    panel.buttons["bob: list pods"].click()
    assert panel.last.startswith("Error from server (Forbidden)")
    assert not panel.actions.entries[-1].ok and "Forbidden" in panel.actions.widget.value


def test_apiserver_panel_watch_from_before_a_compaction_gets_410_and_relists() -> None:
    from kubelab.widgets.apiserver_panel import ApiServerPanel

    c = Cluster(nodes=0, seed=2, components=[])
    panel = ApiServerPanel(c, user="bob")
    start = panel.start_version
    watch = panel.buttons[f"watch pods from rv {start}"]
    panel.buttons["admin: create a pod"].click()
    watch.click()
    assert panel.last == ("the history is still there, "
                          "1 event(s) replayed (ADDED panel-1); no relist needed")
    panel.buttons["compact the store"].click()
    watch.click()
    now = c.store.revision
    assert panel.last == (
        f"ERROR event, 410 Expired: too old resource "
        f"version: {start} ({now}); relist: 1 pods at resourceVersion {now}; watch from {now}: open")
    assert c.clock.now == 0.0  # looking did not move time
    assert len(panel.actions.lines()) == 5  # the start, then four actions, none hidden


def test_watch_panel_watch_from_its_start_relists_after_compaction() -> None:
    c = Cluster(nodes=0, seed=5, components=[])
    c.add_component("copier", ConfigMapCopier)
    panel = WatchPanel(c)
    watch = panel.buttons[f"watch from rv {panel.start_version}"]
    panel.buttons["change a source"].click()
    watch.click()
    assert "2 event(s) replayed (ADDED setting-1, ADDED setting-1-copy)" in panel.actions.last
    panel.buttons["compact store"].click()
    watch.click()
    assert "ERROR event, 410 Expired: too old resource version" in panel.actions.last
    assert "relist: 2 configmaps at resourceVersion" in panel.actions.last  # the source, its copy


def test_panel_tables_have_padded_cells_and_a_header_row_apart_from_the_body() -> None:
    from kubelab.widgets.action_log import html_table

    table = html_table(["create_revision", "mod_revision"], [["2", "<b>"]])
    heads = table.split("<th ")[1:]
    assert len(heads) == 2 and all("padding:2px 10px 2px 0" in h and "border-bottom" in h for h in heads)
    assert "<td style='padding:2px 10px 2px 0" in table and "&lt;b&gt;" in table
    clock = Clock()
    panel = StorePanel(Store(clock, trace=Trace(lambda: clock.now)), clock)
    panel.write()
    assert "<th style=" in panel.status.value and "create_revision</th>" in panel.status.value
