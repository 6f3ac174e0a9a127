"""ControllersPanel: each control drives the cluster through kubectl or kubelab.cluster.faults."""

from __future__ import annotations

from kubelab.widgets.controllers_panel import ControllersPanel
from tests.controllers_helpers import active_pods, cluster, deployment, settle


def test_panel_scales_rolls_out_rolls_back_and_survives_a_crash() -> None:
    c = cluster(nodes=2)
    c.apply(deployment(replicas=2))
    settle(c)
    panel = ControllersPanel(c, hollow=True, graph=False)
    assert panel.scale(3) == "deployment.apps/web scaled"
    panel.run(3)
    assert [r[2:] for r in panel.replica_set_rows()] == [(3, 3, 3, 3)]
    panel.set_image("nginx:1.26")
    panel.run(1)
    panel.crash()  # mid-rollout
    assert "controller-manager" not in c.components
    panel.run(3)
    assert len(panel.replica_set_rows()) == 2  # the new ReplicaSet was created before the crash
    frozen = panel.replica_set_rows()
    panel.run(3)
    assert panel.replica_set_rows() == frozen  # nobody acts while it is down
    panel.restart()
    panel.run(10)
    assert [(r[1], r[2]) for r in panel.replica_set_rows()] == [("1", 0), ("2", 3)]
    assert panel.rollback() == "deployment.apps/web rolled back"
    panel.run(10)
    assert [(r[1], r[2]) for r in panel.replica_set_rows()] == [("3", 3), ("2", 0)]
    victim = sorted(p["metadata"]["name"] for p in active_pods(c))[0]
    assert panel.delete_pod() == f'pod "{victim}" deleted from default namespace'
    panel.run(2)
    assert victim not in {p["metadata"]["name"] for p in active_pods(c)} and len(active_pods(c)) == 3
    panel.refresh()
    assert "ReplicaSet" in panel.status.value and "<th" in panel.status.value


def test_panel_buttons_call_the_methods_and_show_errors() -> None:
    c = cluster(nodes=1)
    c.apply(deployment(replicas=1))
    settle(c)
    panel = ControllersPanel(c, hollow=True)
    panel.buttons["roll back"].click()  # no history yet: kubectl's error, shown, not raised
    assert "no rollout history found" in panel.actions.lines()[-1] and not panel.actions.entries[-1].ok
    assert "<svg" in panel.picture.value or "Graphviz" in panel.picture.value
    panel.replicas.value = 2
    panel.buttons["scale"].click()
    panel.buttons["run 2 s"].click()
    assert len(active_pods(c)) == 2



def test_panel_states_its_start_and_says_that_a_restart_needs_time() -> None:
    c = cluster(nodes=1)
    c.apply(deployment(replicas=2))
    settle(c)
    panel = ControllersPanel(c, hollow=True, graph=False)
    assert panel.actions.lines()[0] == ("start deployment/web wants 2 replica(s) of nginx:1.25; "
                                        "1 ReplicaSet(s), 2 pod(s) ready; controller-manager running")
    panel.buttons["crash controller-manager"].click()
    panel.buttons["restart controller-manager"].click()
    assert panel.actions.lines()[-1].endswith(
        "restart controller-manager: controller-manager restarted: it relists everything and acts "
        "only as virtual time runs (run 2 s)")
    assert len(panel.actions.lines()) == 3


def test_panel_shows_each_controllers_work_and_the_throttling_message() -> None:
    c = cluster(nodes=2)
    c.apply(deployment(replicas=2))
    settle(c)
    panel = ControllersPanel(c, hollow=True, graph=False)
    # At start the shared informers' LISTs and WATCHes (two requests per kind, on the manager's
    # own 20/30 bucket) wait about a second, as kube-controller-manager's log shows on kind; two
    # pods make no controller wait.
    assert "GET:" in panel.throttling() and "POST:" not in panel.throttling()
    assert {r[0]: r for r in panel.controller_rows()}["replicaset-controller"][5] == 0
    panel.replicas.max = 100
    panel.scale(80)  # 80 creates at 20/30: the ReplicaSet controller's client waits
    panel.run(1)
    rows = {r[0]: r for r in panel.controller_rows()}
    assert rows["replicaset-controller"][1] == 5 and rows["replicaset-controller"][4] == "20/30"
    assert rows["replicaset-controller"][5] > 0 and rows["deployment-controller"][5] == 0
    assert "due to client-side throttling, not priority and fairness, request: POST:" in panel.throttling()
    panel.refresh()
    assert "client-side throttling" in panel.status.value and "qps/burst" in panel.status.value
