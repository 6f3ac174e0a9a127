"""The sequence diagram and the timeline, drawn from a small real scenario."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.sim import Record
from kubelab.viz.sequence import PARTICIPANTS, SequenceDiagram, messages, participant_of, render_sequence
from kubelab.viz.timeline import Sample, Timeline, render_timeline

SVG = "{http://www.w3.org/2000/svg}"


def web(replicas: int = 3) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_participants_come_from_the_request_user() -> None:
    assert participant_of("kubernetes-admin") == "kubectl"
    assert participant_of("system:kube-scheduler") == "scheduler"
    assert participant_of("system:kube-controller-manager") == "controller manager"
    assert participant_of("system:node:node-7") == "kubelet"
    assert participant_of("bob") == "bob"  # anyone else gets a lifeline of their own


def test_kubectl_run_tells_the_two_loops_scheduler_then_kubelet() -> None:
    c = Cluster(nodes=2, seed=1)
    c.run(2)
    start = c.clock.now
    c.kubectl("run nginx --image=nginx:1.27")
    c.run(10)
    rows = messages(c.trace, since=start, related="nginx")
    lines = [m.text() for m in rows]
    create = next(m for m in rows if m.kind == "request" and m.verb == "create" and
                  m.object == "pods/default/nginx")
    assert create.source == "kubectl" and create.store == "txn"
    heard = next(m for m in rows if m.kind == "watch" and m.object == "pods/default/nginx")
    assert "scheduler" in heard.targets and heard.label == "ADDED pods/nginx"
    binding = next(m for m in rows if m.object == "pods/default/nginx/binding")
    assert binding.source == "scheduler"
    to_kubelet = next(m for m in rows if m.kind == "watch" and "kubelet" in m.targets)
    kubelet_writes = [m for m in rows if m.kind == "request" and m.source == "kubelet"]
    assert kubelet_writes and all(m.verb == "patch" for m in kubelet_writes), lines
    order = [rows.index(m) for m in (create, heard, binding, to_kubelet, kubelet_writes[0])]
    assert order == sorted(order), lines
    assert any(m.kind == "action" and m.verb == "pull" for m in rows)
    # The drawing: valid SVG, the six participants (top and bottom), one arrow per target.
    svg = SequenceDiagram(c.trace, since=start, related="nginx").svg()
    words = texts(svg)
    for name in PARTICIPANTS:
        assert words.count(name) == 2, name
    arrows = sum(len(m.targets) + (1 if m.store else 0) for m in rows if m.kind in ("request", "watch"))
    assert svg.count("marker-end=") == arrows


def test_faults_are_marked_and_filters_narrow_the_story() -> None:
    c = Cluster(nodes=2, seed=2)
    c.run(2)
    start = c.clock.now
    c.apply(web())
    c.run(3)
    c.faults.crash("scheduler")
    c.kubectl("run lonely --image=nginx:1.27")
    c.run(3)
    everything = messages(c.trace, since=start)
    assert any(m.kind == "fault" and m.label == "crash scheduler" for m in everything)
    # related keeps web's objects and what was made from them, and every fault.
    web_rows = messages(c.trace, since=start, related="web")
    assert web_rows and not any("lonely" in m.object for m in web_rows)
    assert any(m.object.startswith("replicasets/default/web-") for m in web_rows)
    assert any(m.kind == "fault" for m in web_rows)
    # Runs of one step over several objects are merged: three pods created in one row.
    create_pods = [m for m in web_rows if m.verb == "create" and m.object.startswith("pods/")
                   and not m.object.endswith("/binding")]
    assert len(create_pods) == 1 and create_pods[0].count == 3
    assert create_pods[0].label.endswith("+2 more")
    unmerged = messages(c.trace, since=start, related="web", merge=False)
    assert sum(1 for m in unmerged if m.verb == "create" and m.object.count("/") == 2
               and m.object.startswith("pods/")) == 3
    assert not any(m.kind == "watch" for m in messages(c.trace, since=start, watch=False))
    assert not any(m.kind == "action" for m in messages(c.trace, since=start, actions=False))
    window = messages(c.trace, since=start, until=start + 1)
    assert window and all(start <= m.time <= start + 1 for m in window)
    # Events and leases are noise unless asked for.
    assert not any(m.object.startswith(("events/", "leases/")) for m in everything)
    assert any(m.object.startswith("events/") for m in messages(c.trace, since=start, noise=()))
    svg = SequenceDiagram(c.trace, since=start, related="web").svg()
    assert "⚡ fault: crash scheduler" in texts(svg)


def test_unknown_users_get_a_lifeline_and_long_stories_are_cut() -> None:
    c = Cluster(nodes=0, seed=3, components=[])
    start = len(c.trace)
    bootstrap = messages(c.trace)
    assert bootstrap and {m.source for m in bootstrap} <= {"API server", "kubectl"}
    assert "marker-end" in render_sequence(bootstrap)  # API server -> etcd hops only
    bob = c.client_for("bob")
    for i in range(5):
        with pytest.raises(ApiError):
            bob.get("configmaps", f"cm-{i}")
    rows = messages(list(c.trace)[start:], merge=False)
    assert [m.source for m in rows] == ["bob"] * 5 and all(m.failed for m in rows)
    assert rows[0].label == "get configmaps/cm-0 → 403" and rows[0].store == ""  # stopped at RBAC
    svg = render_sequence(rows, limit=2)
    words = texts(svg)
    assert words.count("bob") == 2 and "… 3 more rows" in " ".join(words)


def test_save_writes_svg_and_refuses_other_formats(tmp_path: Path) -> None:
    c = Cluster(nodes=1, seed=4)
    c.run(5)
    diagram = SequenceDiagram(c.trace, title="a node registers")
    path = diagram.save(tmp_path / "seq.svg")
    assert ET.parse(path).getroot().tag == f"{SVG}svg"
    assert diagram._repr_mimebundle_()["image/svg+xml"].startswith("<svg")
    with pytest.raises(ValueError, match=r"only save a sequence diagram as \.svg"):
        diagram.save(tmp_path / "seq.png")


def _kill_scenario(timeline: bool, seed: int = 5) -> tuple[Cluster, Timeline | None, str]:
    c = Cluster(nodes=2, seed=seed)
    c.run(2)
    tl = Timeline(c) if timeline else None
    c.apply(web(2))
    c.run(20)
    victim = c.get("pods")[0]["spec"]["nodeName"]
    c.faults.kill_node(victim)
    c.run(400)
    return c, tl, victim


def test_timeline_samples_changes_and_marks_faults() -> None:
    c, tl, victim = _kill_scenario(timeline=True)
    assert tl is not None
    phases = [s.phases for s in tl.samples]
    assert phases[0] == {} and any(p.get("Running") == 2 for p in phases)
    assert any(p.get("Terminating") for p in phases)  # the evicted pod, stuck on the dead node
    assert all(not a.same_as(b) for a, b in zip(tl.samples, tl.samples[1:], strict=False))
    rs = next(iter(tl.samples[-1].replicas))
    readiness = [s.replicas[rs][0] for s in tl.samples if rs in s.replicas]
    assert max(readiness) == 2 and min(readiness[readiness.index(2):]) < 2  # lost one, got it back
    assert readiness[-1] == 2
    svg = tl.svg()
    words = " ".join(texts(svg))
    assert f"kill_node {victim}" in words and rs in words and "Terminating" in words
    count = len(tl.samples)
    tl.stop()
    c.kubectl("scale deployment web --replicas=4")
    c.run(30)
    assert len(tl.samples) == count  # stopped: no more samples


def test_looking_does_not_change_the_story() -> None:
    """Same seed, with and without a timeline sampling every second: the same trace."""
    with_tl, _, _ = _kill_scenario(timeline=True)
    without, _, _ = _kill_scenario(timeline=False)
    assert with_tl.trace.text() == without.trace.text()


def test_render_timeline_needs_samples_and_reads_faults_from_records() -> None:
    with pytest.raises(ValueError, match="at least one sample"):
        render_timeline([])
    samples = [Sample(0.0, {"Pending": 1}, {"rs-a": (0, 1)}),
               Sample(5.0, {"Running": 1}, {"rs-a": (1, 1)})]
    svg = render_timeline(samples, [Record(3.0, "faults", "partition", "node-1")], end=10.0)
    words = " ".join(texts(svg))
    assert "1  t=3s  ⚡ partition node-1" in words and "rs-a" in words
    with pytest.raises(ValueError, match="interval must be > 0"):
        Timeline(Cluster(nodes=0, components=[]), interval=0)
