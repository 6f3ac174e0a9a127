"""ComponentStatus (kubelab/apiserver/registry/componentstatus.py): deprecated, served, probed.

`kubectl get cs` on kind prints the deprecation warning, then the scheduler, the controller
manager and etcd-0 as Healthy. Here a crashed scheduler is Unhealthy with the dial error its
probe gets, etcd without quorum fails its health check, and an unknown name is upstream's plain
500. kubectl's -o json and -o yaml are Go's (kubelab/kubectl/printers.py): keys sorted, strings
double-quoted, HTML-safe JSON."""

from __future__ import annotations

import json

import yaml

from kubelab import Cluster
from kubelab.kubectl.printers import to_json, to_yaml


def rows(text: str) -> dict[str, list[str]]:
    lines = text.splitlines()
    assert lines[0] == "Warning: v1 ComponentStatus is deprecated in v1.19+"
    assert lines[1].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    return {line.split()[0]: line.split(None, 2)[1:] for line in lines[2:]}


def test_a_healthy_control_plane_and_a_crashed_scheduler() -> None:
    c = Cluster(nodes=1)
    assert rows(c.kubectl("get cs")) == {"controller-manager": ["Healthy", "ok"],
                                         "etcd-0": ["Healthy", "ok"], "scheduler": ["Healthy", "ok"]}
    c.faults.crash("scheduler")
    got = rows(c.kubectl("get componentstatuses"))
    assert got["scheduler"] == ["Unhealthy", 'Get "https://127.0.0.1:10259/healthz": dial tcp '
                                "127.0.0.1:10259: connect: connection refused"]
    assert got["controller-manager"] == ["Healthy", "ok"]
    status = c.client.get("componentstatuses", "scheduler", namespace="")
    assert status["conditions"] == [{"type": "Healthy", "status": "False", "error": got["scheduler"][1]}]
    c.faults.restart("scheduler")
    assert rows(c.kubectl("get cs"))["scheduler"] == ["Healthy", "ok"]


def test_each_api_server_probes_its_own_control_plane_node() -> None:
    c = Cluster(nodes=1, replicas={"apiserver": 2, "scheduler": 2, "controller-manager": 2})
    c.faults.crash("scheduler-2")
    assert c.apiservers[0].component_probe is not None and c.apiservers[1].component_probe is not None
    assert c.apiservers[0].component_probe("scheduler") == ""
    assert c.apiservers[1].component_probe("scheduler") == "connection refused"


def test_etcd_without_quorum_and_an_unknown_component() -> None:
    c = Cluster(nodes=1, etcd_members=3)
    c.run(1)
    c.faults.lose_etcd_quorum()
    assert rows(c.kubectl("get cs"))["etcd-0"][0] == "Unhealthy"
    out = c.kubectl("get cs nope")
    assert out.splitlines() == ["Warning: v1 ComponentStatus is deprecated in v1.19+",
                                "Error from server: Component not found: nope"]
    assert out.exit_code == 1


def test_kubectls_json_and_yaml_sort_keys_and_quote_as_go_does() -> None:
    obj = {"metadata": {"name": "web", "resourceVersion": "43"}, "apiVersion": "v1",
           "kind": "Pod", "data": {"page": "<b>&</b>", "multi": "a\nb\n", "on": "true", "é": "ü"}}
    text = to_json(obj)
    assert json.loads(text) == obj and text.index('"apiVersion"') < text.index('"kind"')
    assert '"page": "\\u003cb\\u003e\\u0026\\u003c/b\\u003e"' in text and '"é": "ü"' in text
    assert text.splitlines()[1] == '    "apiVersion": "v1",'
    text = to_yaml(obj)
    assert yaml.safe_load(text) == obj
    assert text.splitlines()[:3] == ["apiVersion: v1", "data:", "  multi: |"]
    assert '  "on": "true"' in text and '  resourceVersion: "43"' in text
