"""From what the runtime reports to the pod's API status: phase, conditions, containerStatuses.

Pure functions, following pkg/kubelet/kubelet_pods.go (getPhase, generateAPIPodStatus,
convertToAPIContainerStatuses), pkg/kubelet/container/helpers.go (ShouldContainerBeRestarted)
and pkg/kubelet/status/generate.go (the Initialized, ContainersReady and Ready conditions).

A container status says what the runtime knows (running / terminated with exit code and
reason) unless the kubelet is waiting to (re)start it; then it says why it waits:
ContainerCreating or PodInitializing at first, later the reason the last attempt failed
(ErrImagePull, ImagePullBackOff, CrashLoopBackOff, CreateContainerConfigError) with the
previous run kept in lastState.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.meta import rfc3339
from kubelab.kubelet.registry import normalize_image
from kubelab.kubelet.runtime import CREATED, EXITED, RUNNING, Container

__all__ = ["KUBELET_CONDITIONS", "container_statuses", "get_phase", "need_to_reconcile_pod_readiness",
           "pod_conditions", "should_container_be_restarted"]

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                      "PodScheduled")


def _rfc3339(t: float | None) -> str:
    return rfc3339(t or 0.0)


def should_container_be_restarted(pod: Object, c: Container | None) -> bool:
    """ShouldContainerBeRestarted: never for a pod being deleted; yes if it never ran or is
    only created; for an exited one, as the restartPolicy says."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    if c is None or c.state == CREATED:
        return True
    if c.state == RUNNING:
        return False
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    if policy == "Never":
        return False
    return not (policy == "OnFailure" and c.exit_code == 0)


def _state(c: Container) -> Object:
    if c.state == RUNNING:
        return {"running": {"startedAt": _rfc3339(c.started_at)}}
    if c.state == EXITED:
        terminated = {"exitCode": c.exit_code, "reason": c.reason,
                      "startedAt": _rfc3339(c.started_at),
                      "finishedAt": _rfc3339(c.finished_at), "containerID": c.id}
        if c.message:  # what it wrote to terminationMessagePath (or its log's tail)
            terminated["message"] = c.message
        return {"terminated": terminated}
    return {"waiting": {}}


def container_statuses(pod: Object, specs: list[Object], containers: list[Container],
                       old: list[Object], reasons: dict[str, tuple[str, str]],
                       ready: Callable[[Container], tuple[bool, bool]], *, init: bool) -> list[Object]:
    """convertToAPIContainerStatuses for the init containers (init=True) or the regular ones,
    in its passes.

    containers: the runtime's containers of the pod, oldest first; old: the previous statuses;
    reasons: the reason cache (name -> (reason, message)); ready(c) -> (ready, started)."""
    has_init = bool((pod.get("spec") or {}).get("initContainers"))
    old_statuses = {s.get("name"): s for s in old}
    # Set all container statuses to default waiting state (or what the old status says).
    statuses = {spec.get("name", ""): _default_status(spec, old_statuses.get(spec.get("name")),
                                                      has_init) for spec in specs}
    runs = {name: [c for c in containers if c.name == name] for name in statuses}
    # A container that ran and that the runtime no longer knows terminated, code unknown.
    for name, status in statuses.items():
        if not runs[name]:
            _infer_terminated(pod, status, old_statuses.get(name))
    # Set container statuses according to the runtime's: the latest run, and the one before.
    for name, status in statuses.items():
        if runs[name]:
            _convert_container_status(status, runs[name], ready, init=init)
    # Handle the containers failed to be started, which should be in Waiting state.
    for name, status in statuses.items():
        _set_waiting_reason(pod, status, runs[name][-1] if runs[name] else None,
                            reasons.get(name), init=init)
    out = list(statuses.values())
    if not init:  # SortedContainerStatuses: by name (init containers keep the spec's order)
        out.sort(key=lambda s: str(s["name"]))
    return out


def _default_status(spec: Object, previous: Object | None, has_init: bool) -> Object:
    """Waiting to be created (PodInitializing while there are init containers); an old
    terminated status is kept as it is, an old restart count and last state carried over."""
    status: Object = {"name": spec.get("name", ""), "image": spec.get("image", ""), "imageID": "",
                      "state": {"waiting": {"reason": "PodInitializing" if has_init else
                                            "ContainerCreating"}},
                      "lastState": {}, "ready": False, "restartCount": 0, "started": False}
    if previous is None:
        return status
    if "terminated" in (previous.get("state") or {}):
        return copy.deepcopy(previous)
    status["restartCount"] = previous.get("restartCount", 0)
    status["lastState"] = copy.deepcopy(previous.get("lastState") or {})
    return status


def _infer_terminated(pod: Object, status: Object, previous: Object | None) -> None:
    """It was running and the runtime no longer knows it (the node rebooted): it stopped, code
    unknown; the last termination says so, and a pod not being deleted counts a restart."""
    if previous is None or "running" not in (previous.get("state") or {}) or \
            (status.get("lastState") or {}).get("terminated"):
        return
    status["lastState"] = {"terminated": {
        "exitCode": 137, "reason": "ContainerStatusUnknown",
        "message": "The container could not be located when the pod was deleted.  "
                   "The container used to be Running"}}
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        status["restartCount"] = status.get("restartCount", 0) + 1


def _convert_container_status(status: Object, runs: list[Container],
                              ready: Callable[[Container], tuple[bool, bool]], *,
                              init: bool) -> None:
    """convertContainerStatus of the latest run; the run before it is the last state."""
    latest = runs[-1]
    status.update(image=normalize_image(latest.image), imageID=latest.image_ref,
                  containerID=latest.id, restartCount=latest.attempt, state=_state(latest),
                  lastState=_state(runs[-2]) if len(runs) > 1 else status.get("lastState") or {})
    if init:  # an init container is "ready" once it has completed (UpdatePodStatus)
        status["ready"] = latest.state == EXITED and latest.exit_code == 0
        status["started"] = latest.state == RUNNING
    else:
        status["ready"], status["started"] = ready(latest)


def _set_waiting_reason(pod: Object, status: Object, latest: Container | None,
                        reason: tuple[str, str] | None, *, init: bool) -> None:
    """A container the next sync will (re)start waits, for the reason its last start failed
    (the reason cache); without a reason, it keeps the state it has."""
    if init and latest is not None and latest.state == EXITED and latest.exit_code == 0:
        return  # an init container that succeeded is not started again
    if reason is None or not should_container_be_restarted(pod, latest):
        return
    if "terminated" in status["state"]:
        status["lastState"] = status["state"]
    status["state"] = {"waiting": {"reason": reason[0], "message": reason[1]}}


def get_phase(pod: Object, statuses: list[Object], pod_is_terminal: bool) -> str:
    """getPhase. A sidecar (restartable init container) keeps the pod Pending until it runs;
    after that only the regular containers decide (a Job's pod completes while its sidecar
    still runs, and the kubelet then stops the sidecar)."""
    spec = pod.get("spec") or {}
    by_name = {s.get("name"): s for s in statuses}  # podutil.GetContainerStatus
    pending_init, failed_initialization = _count_init_containers(spec, by_name)
    unknown, running, waiting, stopped, succeeded = _count_containers(spec, by_name)
    policy = spec.get("restartPolicy") or "Always"
    if failed_initialization > 0 and policy == "Never":
        return "Failed"
    if (pending_init > 0 and not _has_any_regular_container_started(spec, by_name)) or \
            waiting > 0:
        return "Pending"  # one or more containers has not been started
    if running > 0 and unknown == 0:
        return "Running"  # all have been started, and at least one is running
    if running == 0 and stopped > 0 and unknown == 0:
        # The pod is terminal: its containers won't be restarted, whatever the policy.
        if pod_is_terminal and not _is_static(pod):
            return "Succeeded" if stopped == succeeded else "Failed"
        if policy == "Always":
            return "Running"  # all containers are in the process of restarting
        if stopped == succeeded:
            return "Succeeded"
        return "Failed" if policy == "Never" else "Running"  # OnFailure: restarting
    return "Pending"


def _state_of(status: Object | None) -> str:
    """Which member of the ContainerState is set, as Go's switch tests them ("" for none)."""
    state = (status or {}).get("state") or {}
    return next((k for k in ("running", "terminated", "waiting") if k in state), "")


def _last_terminated(status: Object) -> Object | None:
    return (status.get("lastState") or {}).get("terminated")


def _count_init_containers(spec: Object, by_name: dict[Any, Object]) -> tuple[int, int]:
    """getPhase's first loop: (pending, failed) init containers."""
    pending = failed = 0
    for c in spec.get("initContainers") or []:
        s = by_name.get(c.get("name"))
        state = _state_of(s)
        if c.get("restartPolicy") == "Always":  # a sidecar: pending until it first runs
            pending += s is None or (state != "running" and _last_terminated(s) is None
                                     and state != "terminated")
            continue
        if s is None or state in ("running", ""):
            pending += 1
        elif state == "terminated":
            failed += s["state"]["terminated"].get("exitCode", 0) != 0
        elif (last := _last_terminated(s)) is not None:  # waiting to restart
            failed += last.get("exitCode", 0) != 0
        else:
            pending += 1
    return pending, failed


def _count_containers(spec: Object, by_name: dict[Any, Object]) -> tuple[int, int, int, int, int]:
    """getPhase's second loop: (unknown, running, waiting, stopped, succeeded) containers."""
    unknown = running = waiting = stopped = succeeded = 0
    for c in spec.get("containers") or []:
        s = by_name.get(c.get("name"))
        state = _state_of(s)
        if s is None or state == "":
            unknown += 1
        elif state == "running":
            running += 1
        elif state == "terminated":
            stopped += 1
            succeeded += s["state"]["terminated"].get("exitCode", 0) == 0
        elif _last_terminated(s) is not None:  # waiting to restart after a run
            stopped += 1
        else:
            waiting += 1
    return unknown, running, waiting, stopped, succeeded


def _has_any_regular_container_started(spec: Object, by_name: dict[Any, Object]) -> bool:
    """HasAnyRegularContainerStarted: the pod has initialized once (pkg/kubelet/container)."""
    return any(_state_of(by_name.get(c.get("name"))) in ("running", "terminated")
               for c in spec.get("containers") or [])


def _is_static(pod: Object) -> bool:
    source = ((pod.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/config.source")
    return source not in (None, "api")


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def _readiness_gates_unready(pod: Object, conditions: list[Object]) -> list[str]:
    """GeneratePodReadyCondition's look at each spec.readinessGates conditionType."""
    by_type = {c.get("type"): c for c in reversed(conditions)}  # the first of a type counts
    messages = []
    for gate in (pod.get("spec") or {}).get("readinessGates") or ():
        kind = str(gate.get("conditionType", ""))
        condition = by_type.get(kind)
        if condition is None:
            messages.append(f'corresponding condition of pod readiness gate "{kind}" does not exist.')
        elif condition.get("status") != "True":
            messages.append(f'the status of pod readiness gate "{kind}" is not "True", but '
                            f'{condition.get("status", "")}')
    return messages


def _ready_condition(pod: Object, conditions: list[Object], containers_ready: Object) -> Object:
    """GeneratePodReadyCondition: ContainersReady's status, reason and message while it is not
    True; then False with ReadinessGatesNotReady while a readiness gate's condition is missing
    or not True; else True."""
    if containers_ready.get("status") != "True":
        return {"type": "Ready", **{k: v for k, v in containers_ready.items() if k != "type"}}
    unready = _readiness_gates_unready(pod, conditions)
    if unready:
        return {"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady",
                "message": ", ".join(unready)}
    return {"type": "Ready", "status": "True"}


def need_to_reconcile_pod_readiness(pod: Object) -> bool:
    """NeedToReconcilePodReadiness: the pod has readiness gates and its Ready condition is not
    what the gates' conditions (set by someone else) now say."""
    if not (pod.get("spec") or {}).get("readinessGates"):
        return False
    conditions = (pod.get("status") or {}).get("conditions") or []
    current = next((c for c in conditions if c.get("type") == "Ready"), None)
    containers_ready = next((c for c in conditions if c.get("type") == "ContainersReady"),
                            {"status": "False"})
    want = _ready_condition(pod, conditions, containers_ready)
    return current is not None and (current.get("status"), current.get("message")) != \
        (want.get("status"), want.get("message"))


def pod_conditions(pod: Object, init_statuses: list[Object], statuses: list[Object], phase: str,
                   sandbox_ready: bool, others: list[Object] | None = None) -> list[Object]:
    """The kubelet-owned conditions, in upstream's order (generate.go). others: the pod's
    conditions that someone else owns, which its readiness gates are read from."""
    spec = pod.get("spec") or {}
    out: list[Object] = [{"type": "PodReadyToStartContainers",
                          "status": "True" if sandbox_ready else "False"}]
    # Initialized
    by_name = {s["name"]: s for s in init_statuses}
    started = any("running" in s["state"] or "terminated" in s["state"] for s in statuses)
    incomplete = [c["name"] for c in spec.get("initContainers") or []
                  if not by_name.get(c["name"], {}).get("ready")]
    if phase == "Succeeded":
        out.append({"type": "Initialized", "status": "True", "reason": "PodCompleted"})
    elif started or not incomplete:
        out.append({"type": "Initialized", "status": "True"})
    else:
        out.append({"type": "Initialized", "status": "False", "reason": "ContainersNotInitialized",
                    "message": f"containers with incomplete status: {_go_list(incomplete)}"})
    # ContainersReady, and Ready which repeats it unless a readiness gate holds it back
    if phase in ("Succeeded", "Failed"):
        reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        ready = {"status": "False", "reason": reason}
    else:
        names = {s["name"]: s for s in statuses}
        unready = [c["name"] for c in spec.get("containers") or []
                   if not names.get(c["name"], {}).get("ready")]
        ready = {"status": "False", "reason": "ContainersNotReady",
                 "message": f"containers with unready status: {_go_list(unready)}"} if unready \
            else {"status": "True"}
    out.append(_ready_condition(pod, others or [], {"type": "ContainersReady", **ready}))
    out.append({"type": "ContainersReady", **ready})
    out.append({"type": "PodScheduled", "status": "True"})
    return out
