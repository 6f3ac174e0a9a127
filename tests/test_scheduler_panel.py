"""SchedulerPanel driven through its plain methods, as its buttons call them."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.cluster import Cluster
from kubelab.scheduler import Scheduler
from kubelab.widgets.scheduler_panel import SchedulerPanel, strategy_config


def cluster(nodes: Any = 3, **kwargs: Any) -> Cluster:
    """A control plane with only the scheduler (and hollow nodes): the other components are
    other notebooks' business."""
    return Cluster(nodes=nodes, components=["scheduler"], **kwargs)


def spread(panel: SchedulerPanel) -> list[int]:
    return sorted(len(row["pods"]) for row in panel.placement().values())


def test_the_strategy_switch_restarts_the_scheduler_and_changes_placement() -> None:
    c = cluster(nodes=3)
    panel = SchedulerPanel(c)
    panel.create_pods(3, cpu="500m")
    panel.run(1)
    assert spread(panel) == [1, 1, 1]  # LeastAllocated spreads
    old = c.components["scheduler"]
    assert panel.set_strategy("MostAllocated") == ("scheduler restarted with MostAllocated (pack): it "
                                                   "places pods only as virtual time runs (run 1 s)")
    assert c.components["scheduler"] is not old and not old.running
    panel.create_pods(3, cpu="500m")
    panel.run(1)
    rows = panel.placement()
    assert max(len(r["pods"]) for r in rows.values()) == 4  # the new pods packed onto one node
    assert panel.strategy_toggle.value == "MostAllocated"
    assert "latest decision" in panel.explanation.value and "NodeResourcesFit" in panel.explanation.value
    with pytest.raises(ValueError, match='scoring strategy "Random" is not supported'):
        strategy_config("Random")


def test_node_controls_change_where_pods_can_go() -> None:
    c = cluster(nodes=1)
    panel = SchedulerPanel(c)
    assert panel.add_node(cpu="2") == "node/node-2 created"
    assert panel.cordon("node-1") == "node/node-1 cordoned"
    assert panel.taint("node-2", "dedicated=gpu:NoSchedule") == "node/node-2 tainted"
    panel.create_pods(2, cpu="500m")
    panel.run(1)
    assert panel.pending() == ["demo-1", "demo-2"]
    assert panel.untaint("node-2", "dedicated=gpu:NoSchedule") == "node/node-2 untainted"
    panel.run(2)
    rows = panel.placement()
    assert rows["node-2"]["pods"] == ["demo-1", "demo-2"] and rows["node-2"]["cpu"] == 1000
    assert rows["node-2"]["allocatable_cpu"] == 2000 and rows["node-1"]["cordoned"]
    panel._do(lambda: panel.taint("node-2", "a=b:Never"))
    assert "invalid taint effect: Never" in panel.actions.lines()[-1]
    panel.remove_node("node-2")
    panel.refresh()
    assert list(panel.node.options) == ["node-1"]


def test_the_panel_turns_explanations_on_and_survives_a_crashed_scheduler() -> None:
    c = cluster(nodes=2)
    panel = SchedulerPanel(c)
    scheduler = c.components["scheduler"]
    assert isinstance(scheduler, Scheduler) and scheduler.explain_mode
    c.faults.crash("scheduler")
    panel.refresh()
    assert "the scheduler is not running" in panel.explanation.value


def test_buttons_and_the_toggle_call_the_methods() -> None:
    c = cluster(nodes=2)
    panel = SchedulerPanel(c)
    panel.count.value = 2
    panel.buttons["create pods"].click()
    panel.buttons["run 1 s"].click()
    assert panel.pending() == [] and panel.actions.lines()[-1] == "t=1s run 1: ran 1 virtual second(s)"
    panel.strategy_toggle.value = "MostAllocated"
    assert panel.strategy == "MostAllocated"
    assert [r.detail for r in c.trace.filter(component="scheduler-panel")] == [{"strategy": "MostAllocated"}]


def test_the_node_dropdown_starts_on_a_node_and_the_buttons_act_on_it() -> None:
    c = cluster(nodes=2)
    panel = SchedulerPanel(c)
    assert panel.node.value == "node-1"  # not None: cordon used to say nodes "None" not found
    panel.buttons["cordon"].click()
    assert c.get("nodes", "node-1", namespace=None)["spec"]["unschedulable"] is True
    panel.node.value = "node-2"
    panel.buttons["remove node"].click()
    panel.buttons["taint"].click()  # acts on node-1, the one left
    assert panel.node.value == "node-1" and list(panel.node.options) == ["node-1"]
    assert [t["key"] for t in c.get("nodes", "node-1", namespace=None)["spec"]["taints"]] == ["dedicated"]


def test_the_action_log_keeps_the_starting_state_and_every_recent_result() -> None:
    c = cluster(nodes=1)
    panel = SchedulerPanel(c)
    panel.buttons["cordon"].click()
    panel.buttons["cordon"].click()  # the second answer does not hide the first
    panel.remove_node("node-1")
    assert panel.node.value is None
    panel.buttons["uncordon"].click()  # no node left: said, and nothing happens
    lines = panel.actions.lines()
    assert lines[:3] == [
        "start 1 node(s) (node-1), 0 pod(s) bound, 0 pending; the scheduler scores with LeastAllocated",
        "t=0s cordon node-1: node/node-1 cordoned",
        "t=0s cordon node-1: node/node-1 already cordoned"]
    assert lines[3].startswith('t=0s remove node node-1: node "node-1" deleted')
    assert lines[4] == "t=0s uncordon: error: no node chosen: add a node first"
    assert [e.ok for e in panel.actions.entries] == [True, True, True, False]
    assert "no node chosen" in panel.actions.widget.value and "already cordoned" in panel.actions.widget.value


def test_a_high_priority_pod_preempts_and_the_panel_explains_which_victims_and_why() -> None:
    c = cluster(nodes=2)
    panel = SchedulerPanel(c)
    panel.create_pods(8, cpu="1", priority="low")  # 2 nodes x 4 CPUs: full
    panel.run(2)
    assert panel.pending() == [] and panel.preemption_text() == ""
    panel.create_pods(1, cpu="2", priority="high")
    panel.run(5)
    text = panel.preemption_text()
    node = c.get("pods", "demo-9")["spec"]["nodeName"]
    # Each node would lose two 1-CPU pods of priority 100, none started (hollow nodes): a tie
    # on every criterion, so the first candidate of the dry run (from its random offset) wins.
    assert text.startswith(f"preemption: nominated {node} (a tie on every criterion: the first candidate)")
    assert text.count(": evict ") == 2 and f"{node} *: evict" in text
    victims = [e["involvedObject"]["name"] for e in c.events() if e["reason"] == "Preempted"]
    assert len(victims) == 2 and all(f"default/{v} (priority 100)" in text for v in victims)
    assert panel.placement()[node]["cpu"] == 4000 and "latest preemption" in panel.preemption.value
    with pytest.raises(ValueError, match='priority "urgent" is not one of low, high'):
        panel.create_pods(1, priority="urgent")
