"""Liveness, readiness and startup probes: thresholds, delays, timeouts, and what each one does."""

from __future__ import annotations

from typing import Any

from kubelab.cluster import Cluster
from tests.kubelet_helpers import events, kubelet_cluster, pod, status_of


def probed(name: str, behavior: str, **probes: dict[str, Any]) -> dict[str, Any]:
    body = pod(name, behavior=behavior)
    body["spec"]["containers"][0].update(probes)
    return body


HTTP = {"httpGet": {"path": "/healthz", "port": 8080}}


def ready(c: Cluster, name: str) -> str:
    conditions = c.get("pods", name)["status"].get("conditions") or []
    return next((x["status"] for x in conditions if x["type"] == "Ready"), "")


def test_readiness_moves_the_ready_condition_and_never_restarts() -> None:
    c = kubelet_cluster()
    c.apply(probed("web", "unready=40", readinessProbe={**HTTP, "periodSeconds": 5}))
    c.run(3)
    assert ready(c, "web") == "False"            # readiness starts as Failure until a probe passes
    c.run(10)
    assert ready(c, "web") == "True"
    c.run(60)
    assert ready(c, "web") == "False"
    p = c.get("pods", "web")
    cond = next(x for x in p["status"]["conditions"] if x["type"] == "ContainersReady")
    assert cond["message"] == "containers with unready status: [app]"
    assert p["status"]["phase"] == "Running" and status_of(c, "web")["restartCount"] == 0
    assert events(c, "web", "Unhealthy")[0]["message"] == \
        "Readiness probe failed: HTTP probe failed with statuscode: 503"
    assert not events(c, "web", "Killing")


def test_liveness_failing_failure_threshold_times_restarts_the_container() -> None:
    c = kubelet_cluster()
    c.apply(probed("live", "unhealthy=30", livenessProbe={**HTTP, "periodSeconds": 10}))
    started = c.run_until(lambda: status_of(c, "live").get("started", False), timeout=30)
    c.run_until(lambda: bool(events(c, "live", "Killing")), timeout=120)
    killed_after = c.clock.now - 30 - started
    # Unhealthy from 30 s; the third failing probe (failureThreshold 3, every 10 s) triggers it.
    assert 50 <= killed_after <= 61
    assert events(c, "live", "Killing")[0]["message"] == \
        "Container app failed liveness probe, will be restarted"
    assert len([r for r in c.trace.filter(verb="event") if r.detail.get("reason") == "Unhealthy"]) == 3
    c.run(5)
    cs = status_of(c, "live")
    assert cs["restartCount"] == 1 and cs["lastState"]["terminated"]["exitCode"] == 143


def test_startup_probe_holds_liveness_back_until_the_app_has_started() -> None:
    c = kubelet_cluster()
    patient = {"startupProbe": {**HTTP, "periodSeconds": 10, "failureThreshold": 10},
               "livenessProbe": {**HTTP, "periodSeconds": 5, "failureThreshold": 1}}
    c.apply(probed("slow", "startup=45", **patient))
    c.run(30)
    assert status_of(c, "slow")["started"] is False and ready(c, "slow") == "False"
    c.run(40)
    assert status_of(c, "slow")["started"] is True and ready(c, "slow") == "True"
    assert not events(c, "slow", "Killing")
    assert {e["message"] for e in events(c, "slow", "Unhealthy")} == \
        {"Startup probe failed: HTTP probe failed with statuscode: 503"}
    impatient = {"startupProbe": {**HTTP, "periodSeconds": 10, "failureThreshold": 2}}
    c.apply(probed("gaveup", "startup=45", **impatient))
    c.run_until(lambda: bool(events(c, "gaveup", "Killing")), timeout=60)
    assert events(c, "gaveup", "Killing")[0]["message"] == \
        "Container app failed startup probe, will be restarted"


def test_initial_delay_and_timeouts_as_the_prober_reports_them() -> None:
    c = kubelet_cluster()
    c.apply(probed("delayed", "run", readinessProbe={**HTTP, "periodSeconds": 2,
                                                     "initialDelaySeconds": 20}))
    start = c.run_until(lambda: status_of(c, "delayed").get("started", False), timeout=10)
    c.run_until(lambda: ready(c, "delayed") == "True", timeout=60)
    assert c.clock.now - 30 - start >= 20
    c.apply(probed("laggy", "probe-latency=2", livenessProbe={**HTTP, "timeoutSeconds": 1}))
    c.apply(probed("tcp", "unhealthy=0", readinessProbe={"tcpSocket": {"port": 6379}, "periodSeconds": 5}))
    c.apply(probed("exec", "unhealthy=0", readinessProbe={"exec": {"command": ["cat", "/tmp/ok"]},
                                                          "periodSeconds": 5}))
    c.run(30)
    ip = c.get("pods", "laggy")["status"]["podIP"]
    assert events(c, "laggy", "Unhealthy")[0]["message"] == (
        f'Liveness probe failed: Get "http://{ip}:8080/healthz": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)")
    tcp_ip = c.get("pods", "tcp")["status"]["podIP"]
    assert events(c, "tcp", "Unhealthy")[0]["message"] == \
        f"Readiness probe failed: dial tcp {tcp_ip}:6379: connect: connection refused"
    assert events(c, "exec", "Unhealthy")[0]["message"] == "Readiness probe failed: "
