"""The kubelet's pure parts: getPhase, conditions, back-off arithmetic, behaviors, durations."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.kubelet import Backoff, go_duration, normalize_image, parse_behavior
from kubelab.kubelet.status import get_phase, need_to_reconcile_pod_readiness, pod_conditions
from kubelab.kubelet.workload import workload_for
from kubelab.sim import Clock


def running(name: str) -> dict[str, Any]:
    return {"name": name, "state": {"running": {"startedAt": "x"}}}


def exited(name: str, code: int) -> dict[str, Any]:
    return {"name": name, "state": {"terminated": {"exitCode": code}}}


def waiting(name: str, last_code: int | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name, "state": {"waiting": {"reason": "X"}}}
    if last_code is not None:
        s["lastState"] = {"terminated": {"exitCode": last_code}}
    return s


def pod(policy: str = "Always", containers: tuple[str, ...] = ("a", "b"),
        init: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"metadata": {"name": "p", "uid": "u"},
            "spec": {"restartPolicy": policy, "containers": [{"name": n} for n in containers],
                     "initContainers": [{"name": n} for n in init]}}


# (restartPolicy, statuses, podIsTerminal, expected phase): the cases of kubelet_pods.go getPhase.
PHASES = [
    ("Always", [running("a"), running("b")], False, "Running"),
    ("Always", [running("a")], False, "Pending"),                  # b unknown: not all started
    ("Always", [running("a"), waiting("b")], False, "Pending"),    # b never ran
    ("Always", [running("a"), waiting("b", 1)], False, "Running"),  # b crash-looping
    ("Always", [exited("a", 0), exited("b", 1)], False, "Running"),  # all restarting
    ("Always", [exited("a", 0), exited("b", 1)], True, "Failed"),   # terminal: one failure
    ("Always", [exited("a", 0), exited("b", 0)], True, "Succeeded"),
    ("OnFailure", [exited("a", 0), exited("b", 0)], False, "Succeeded"),
    ("OnFailure", [exited("a", 0), exited("b", 1)], False, "Running"),  # b will restart
    ("Never", [exited("a", 0), exited("b", 1)], False, "Failed"),
    ("Never", [exited("a", 0), exited("b", 0)], False, "Succeeded"),
    ("Never", [running("a"), exited("b", 1)], False, "Running"),
    ("Always", [waiting("a"), waiting("b")], False, "Pending"),
    ("Always", [], False, "Pending"),
]


@pytest.mark.parametrize(("policy", "statuses", "terminal", "phase"), PHASES)
def test_get_phase_follows_upstream_table(policy: str, statuses: list[dict[str, Any]], terminal: bool,
                                          phase: str) -> None:
    assert get_phase(pod(policy), statuses, terminal) == phase


def test_init_containers_hold_the_pod_pending_and_a_failed_one_fails_a_never_pod() -> None:
    p = pod("Always", ("app",), ("init",))
    assert get_phase(p, [running("init"), waiting("app")], False) == "Pending"
    assert get_phase(p, [exited("init", 0), running("app")], False) == "Running"
    never = pod("Never", ("app",), ("init",))
    assert get_phase(never, [exited("init", 1), waiting("app")], False) == "Failed"
    # With restarts allowed, a failing init container keeps the pod Pending (Init:CrashLoopBackOff).
    assert get_phase(p, [waiting("init", 1), waiting("app")], False) == "Pending"


def test_conditions_name_the_unready_containers_as_go_prints_a_slice() -> None:
    p = pod("Always", ("a", "b"), ("setup",))
    statuses = [{"name": "a", "state": {"running": {}}, "ready": True},
                {"name": "b", "state": {"running": {}}, "ready": False}]
    conditions = {c["type"]: c for c in pod_conditions(p, [{"name": "setup", "ready": True}], statuses,
                                                        "Running", True)}
    assert [c for c in conditions] == ["PodReadyToStartContainers", "Initialized", "Ready",
                                       "ContainersReady", "PodScheduled"]
    assert conditions["Ready"] == {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                                   "message": "containers with unready status: [b]"}
    pending = pod_conditions(p, [{"name": "setup", "ready": False}], [], "Pending", False)
    assert pending[1]["message"] == "containers with incomplete status: [setup]"
    done = pod_conditions(p, [], statuses, "Succeeded", False)
    assert done[2]["reason"] == "PodCompleted" and done[2]["status"] == "False"


def _gate(kind: str, status: str) -> dict[str, Any]:
    return {"type": kind, "status": status}


# generate_test.go TestGeneratePodReadyCondition: (gates, their conditions, containers ready,
# expected Ready (status, reason, message)).
READY = [
    ([], [], True, ("True", None, None)),
    (["gate1"], [], True, ("False", "ReadinessGatesNotReady",
                           'corresponding condition of pod readiness gate "gate1" does not exist.')),
    (["gate1"], [_gate("gate1", "False")], True,
     ("False", "ReadinessGatesNotReady",
      'the status of pod readiness gate "gate1" is not "True", but False')),
    (["gate1"], [_gate("gate1", "True")], True, ("True", None, None)),
    (["gate1", "gate2"], [_gate("gate1", "True")], True,
     ("False", "ReadinessGatesNotReady",
      'corresponding condition of pod readiness gate "gate2" does not exist.')),
    (["gate1", "gate2"], [_gate("gate1", "Unknown"), _gate("gate2", "False")], True,
     ("False", "ReadinessGatesNotReady",
      'the status of pod readiness gate "gate1" is not "True", but Unknown, '
      'the status of pod readiness gate "gate2" is not "True", but False')),
    (["gate1", "gate2"], [_gate("gate1", "True"), _gate("gate2", "True")], True, ("True", None, None)),
    # ContainersReady not True: Ready repeats it, whatever the gates say
    (["gate1"], [_gate("gate1", "True")], False,
     ("False", "ContainersNotReady", "containers with unready status: [a]")),
]


@pytest.mark.parametrize(("gates", "others", "containers_ready", "expected"), READY)
def test_ready_follows_the_readiness_gates(gates: list[str], others: list[dict[str, Any]],
                                           containers_ready: bool, expected: tuple[Any, ...]) -> None:
    p = pod("Always", ("a",))
    p["spec"]["readinessGates"] = [{"conditionType": g} for g in gates]
    statuses = [{"name": "a", "state": {"running": {}}, "ready": containers_ready}]
    conditions = {c["type"]: c for c in pod_conditions(p, [], statuses, "Running", True, others)}
    ready = conditions["Ready"]
    assert (ready["status"], ready.get("reason"), ready.get("message")) == expected
    assert conditions["ContainersReady"]["status"] == ("True" if containers_ready else "False")


def test_a_readiness_gate_set_by_someone_else_needs_a_sync() -> None:
    """NeedToReconcilePodReadiness: only a pod with gates, and only when Ready disagrees."""
    p = pod("Always", ("a",))
    p["status"] = {"conditions": [{"type": "ContainersReady", "status": "True"},
                                  {"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady",
                                   "message": 'corresponding condition of pod readiness gate "g" does '
                                              "not exist."}]}
    assert not need_to_reconcile_pod_readiness(p)  # no gates
    p["spec"]["readinessGates"] = [{"conditionType": "g"}]
    assert not need_to_reconcile_pod_readiness(p)  # Ready says what the gate says
    p["status"]["conditions"].append({"type": "g", "status": "True"})
    assert need_to_reconcile_pod_readiness(p)


def test_backoff_doubles_to_the_cap_and_forgets_after_twice_the_cap() -> None:
    clock = Clock()
    b = Backoff(clock, 10, 300)
    windows = []
    for _ in range(7):
        b.next("k", clock.now)
        windows.append(b.get("k"))
    assert windows == [10, 20, 40, 80, 160, 300, 300]
    assert b.is_in_back_off_since_update("k", clock.now + 299)
    assert not b.is_in_back_off_since_update("k", clock.now + 300)
    clock.run(until=clock.now + 601)   # quiet for more than 2 x 300 s: the entry has expired
    b.next("k", clock.now)
    assert b.get("k") == 10
    with pytest.raises(ValueError, match="initial <= maximum"):
        Backoff(clock, 10, 5)


@pytest.mark.parametrize(("seconds", "text"), [
    (0.5614, "561ms"), (1.2, "1.2s"), (10, "10s"), (80, "1m20s"), (300, "5m0s"), (3725.5, "1h2m5.5s")])
def test_go_duration_prints_like_time_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_behaviors_parse_and_bad_ones_are_refused_in_plain_words() -> None:
    w = parse_behavior("exit=30,code=3,unready=5")
    assert w.end() == (30.0, 3, "Error") and not w.responds("readiness", 6) and w.responds("liveness", 6)
    assert parse_behavior("crash").end() == (1.0, 1, "Error")
    assert parse_behavior("oom=20,exit=50").end() == (20.0, 137, "OOMKilled")
    assert parse_behavior("shutdown=never").shutdown is None
    with pytest.raises(ValueError, match='unknown setting "explode"'):
        parse_behavior("explode")
    with pytest.raises(ValueError, match="exit must be a number of seconds >= 0"):
        parse_behavior("exit=-3")
    p = {"metadata": {"annotations": {"kubelab.dev/behavior": "crash",
                                      "kubelab.dev/behavior.side": "exit=x"}}}
    assert workload_for(p, {"name": "app"}, init=False)[0] == "crash"
    assert workload_for(p, {"name": "setup"}, init=True)[1].end() == (1.0, 0, "Completed")
    with pytest.raises(ValueError, match=r"kubelab\.dev/behavior\.side"):
        workload_for(p, {"name": "side"}, init=False)


def test_image_names_are_normalized_as_docker_does() -> None:
    assert normalize_image("nginx") == "docker.io/library/nginx:latest"
    assert normalize_image("nginx:1.27") == "docker.io/library/nginx:1.27"
    assert normalize_image("bitnami/redis:7") == "docker.io/bitnami/redis:7"
    assert normalize_image("registry.example.com:5000/team/app") == \
        "registry.example.com:5000/team/app:latest"
