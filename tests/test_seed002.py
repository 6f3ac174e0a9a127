"""The course step kubelab grew from, run as a learner runs it: seed 002's commands.sh
(tests/data/seed002_commands.sh), unchanged, with the real kubectl against `kubelab serve`.

Its first half shows the cluster's anatomy (the control plane as pods on the control-plane
node, kube-proxy and kindnet once on every node), its second half the reconciliation loop (a
deleted pod comes back, the events in order, scale to zero). `bash -x` writes each command
before its output on the same pipe, so each command's output is read after its line.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import KUBECTL, Served, serving

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (make installs it)")

SCRIPT = Path(__file__).parent / "data" / "seed002_commands.sh"
NODES = ["control-plane", "node-1", "node-2"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("seed002"), "--nodes", "2", "--speed", "4")


def _sections(output: str) -> list[tuple[str, list[str]]]:
    """(command line, its output lines) for each command bash -x traced."""
    sections: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if line.startswith("+ "):
            sections.append((line[2:], []))
        elif line.startswith("++ "):
            sections.append((line[3:], []))
        elif sections:
            sections[-1][1].append(line)
    # bash -x traces both ends of a pipeline (`kubectl ... | grep ...`) as they start, in either
    # order, so the pipeline's output follows whichever came last: when the filter's line came
    # first, its output is under the kubectl line right after it.
    for (cmd, out), (_, next_out) in itertools.pairwise(sections):
        if cmd.startswith(("grep ", "tail ")) and not out:
            out.extend(next_out)
    return sections


def _rows(lines: list[str]) -> list[list[str]]:
    return [line.split() for line in lines if line.strip() and not line.startswith("NAME")]


def test_commands_sh_shows_the_anatomy_and_the_reconciliation_loop(served: Served) -> None:
    # A learner runs the step on a cluster that is up: its kube-system pods are Ready.
    served.kubectl("wait", "--for=condition=Ready", "pods", "--all", "-n", "kube-system",
                   "--timeout=90s", timeout=120)
    done = subprocess.run(["bash", "-x", str(SCRIPT)], env=served.env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=240)
    assert done.returncode == 0, done.stdout
    sections = _sections(done.stdout)
    greps = [out for cmd, out in sections if cmd.startswith("grep -E")]
    assert len(greps) == 2, done.stdout

    # [2-1] the brain on the control-plane node: its four static pods, named after it.
    control = {row[0]: row for row in _rows(greps[0])}
    node_ip = served.kubectl("get", "node", "control-plane", "-o",
                             "jsonpath={.status.addresses[?(@.type==\"InternalIP\")].address}").stdout
    assert sorted(control) == ["etcd-control-plane", "kube-apiserver-control-plane",
                               "kube-controller-manager-control-plane",
                               "kube-scheduler-control-plane"], greps[0]
    for row in control.values():
        assert row[1:3] == ["1/1", "Running"] and row[6] == "control-plane", row
        assert row[5] == node_ip  # hostNetwork: the node's address

    # ... and the network parts once on every node, control-plane included.
    network = _rows(greps[1])
    for prefix in ("kube-proxy-", "kindnet-"):
        mine = [row for row in network if row[0].startswith(prefix)]
        assert sorted(row[6] for row in mine) == NODES, greps[1]
        assert all(row[1:3] == ["1/1", "Running"] for row in mine), greps[1]

    # The full listing holds those and coredns, nothing else.
    listing = next(out for cmd, out in sections if cmd == "kubectl get pods -n kube-system -o wide")
    names = sorted(row[0] for row in _rows(listing))
    assert len([n for n in names if n.startswith("coredns-")]) == 2
    assert len(names) == 4 + 2 * len(NODES) + 2, listing

    # [2-5] three pods of web, one deleted, three again (a new name among them).
    gets = [out for cmd, out in sections
            if cmd.startswith("kubectl -n step02 get pods") and "jsonpath" not in cmd]
    first, after_delete = (_rows(out) for out in gets[:2])
    victim = next(line for cmd, out in sections if cmd.startswith("echo '>>> ") for line in out)
    victim = victim.rsplit(" ", 1)[-1]
    assert len(first) == 3 and victim in {row[0] for row in first}
    assert all(row[6].startswith("node-") for row in first)  # never on the tainted control plane
    names_after = {row[0] for row in after_delete if row[2] != "Terminating"}
    assert len(names_after) == 3 and victim not in names_after, after_delete
    # The events, in order: each pod scheduled, its image pulled, its container started.
    events = next(out for cmd, out in sections if cmd.startswith("tail -15"))
    reasons = [row[2] for row in _rows(events)]
    assert {"Scheduled", "Started"} <= set(reasons) and ("Pulled" in reasons or "Pulling" in reasons), events
    # Scaled to zero, the pods really go.
    assert gets[2] == ["No resources found in step02 namespace."], gets[2]
    assert served.kubectl("get", "namespace", "step02", check=False).returncode == 1
