"""`kubectl describe` prints describe.go's layout: tabwriter-aligned fields, sections, and an
event table with Type, Reason, Age, From and Message."""

from __future__ import annotations

from kubelab.cluster import Cluster
from kubelab.kubectl.tabwriter import PrefixWriter, tabbed
from tests.controllers_helpers import deployment, settle


def test_tabwriter_pads_each_column_block_and_never_the_last_cell() -> None:
    lines = [["Name:", "web"], ["Namespace:", "default"], ["Containers:"], ["  app:", "x"],
             ["a", "bb", "tail"], ["ccc", "d", "t"]]
    # Column 0 of the last three lines is one block (each has a cell there), column 1 another.
    assert tabbed(lines) == ["Name:       web", "Namespace:  default", "Containers:", "  app:  x",
                             "a       bb  tail", "ccc     d   t"]
    w = PrefixWriter()
    w.write(0, "Labels:\t")
    w.write(0, "a=1\n")
    w.write(0, "\tb=2\n")
    w.write(1, "IP:\t10.0.0.1\n")
    assert w.text() == "Labels:  a=1\n         b=2\n  IP:    10.0.0.1"


def test_describe_pod_has_describes_sections_and_event_table() -> None:
    c = Cluster(nodes=1, seed=2)
    c.run(2)
    c.kubectl("run web --image=nginx:1.27 --labels=app=web,tier=front")
    c.run(20)
    out = c.kubectl("describe pod web")
    lines = out.splitlines()
    # The anatomy's ServiceAccount admission names the account (and mounts its token); the
    # control-plane node is 172.18.0.2, so node-1 is .3.
    assert lines[:9] == ["Name:             web", "Namespace:        default", "Priority:         0",
                         "Service Account:  default", "Node:             node-1/172.18.0.3",
                         "Start Time:       Wed, 01 Jan 2025 00:00:02 +0000",
                         "Labels:           app=web", "                  tier=front",
                         "Annotations:      <none>"]
    assert "Status:           Running" in lines
    assert any(line.startswith("      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-")
               for line in lines)
    assert "Containers:" in lines and "  web:" in lines
    assert "    Image:          nginx:1.27" in lines
    assert "    State:          Running" in lines and "    Restart Count:  0" in lines
    assert "Conditions:" in lines and lines[lines.index("Conditions:") + 1].split() == ["Type", "Status"]
    assert "QoS Class:                   BestEffort" in lines
    events = out.split("Events:\n")[1].splitlines()
    assert events[0].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert events[1].split() == ["----", "------", "----", "----", "-------"]
    assert events[2].split()[:5] == ["Normal", "Scheduled", "19s", "default-scheduler", "Successfully"]
    assert events[-1].split() == ["Normal", "Started", "17s", "kubelet", "Started", "container", "web"]
    assert "apiVersion" not in out  # not YAML any more


def test_describe_node_deployment_and_replicaset() -> None:
    c = Cluster(nodes=2, seed=3, components=["scheduler", "controller-manager"])
    c.apply(deployment(replicas=2, surge=1, unavailable=0))
    settle(c)
    node = c.kubectl("describe node node-1").splitlines()
    assert node[0].startswith("Name:") and node[0].split() == ["Name:", "node-1"]
    assert node[1].split() == ["Roles:", "<none>"]
    assert any(line.split() == ["Unschedulable:", "false"] for line in node)
    assert any(line.split()[:2] == ["Ready", "True"] for line in node)  # the Conditions table
    assert any(line.startswith("Non-terminated Pods:") for line in node)
    assert any(line.startswith("Allocated resources:") for line in node)
    d = c.kubectl("describe deployment web").splitlines()
    assert d[0].split() == ["Name:", "web"] and d[1].split() == ["Namespace:", "default"]
    assert "Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable" in d
    assert "StrategyType:           RollingUpdate" in d
    assert "RollingUpdateStrategy:  0 max unavailable, 1 max surge" in d
    assert "Pod Template:" in d and "  Containers:" in d and "   app:" in d
    new_rs = [line for line in d if line.startswith("NewReplicaSet:")]
    assert new_rs and new_rs[0].endswith("(2/2 replicas created)")
    assert any(line.startswith("OldReplicaSets:") and line.endswith("<none>") for line in d)
    rs_name = new_rs[0].split()[1]
    rs = c.kubectl(f"describe rs {rs_name}").splitlines()
    assert rs[0].split() == ["Name:", rs_name]
    assert "Controlled By:  Deployment/web" in rs
    assert "Replicas:       2 current / 2 desired" in rs
    assert "Pods Status:    2 Running / 0 Waiting / 0 Succeeded / 0 Failed" in rs
    assert rs[-1].split()[:2] == ["Normal", "SuccessfulCreate"]


def test_describe_without_events_and_of_a_missing_object() -> None:
    c = Cluster(nodes=1, components=[])
    c.kubectl("create configmap cfg")
    out = c.kubectl("describe configmap cfg")
    assert out.splitlines() == ["Name:         cfg", "Namespace:    default", "Labels:       <none>",
                                "Annotations:  <none>", "Events:       <none>"]
    missing = c.kubectl("describe pod nope")
    assert (missing, missing.exit_code) == ('Error from server (NotFound): pods "nope" not found', 1)
