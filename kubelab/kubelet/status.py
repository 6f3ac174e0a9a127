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

from kubelab.api.meta import rfc3339
from kubelab.kubelet.registry import normalize_image
from kubelab.kubelet.runtime import CREATED, EXITED, RUNNING, Container

__all__ = ["KUBELET_CONDITIONS", "container_statuses", "get_phase", "pod_conditions",
           "should_container_be_restarted"]

Object = dict[str, Any]
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
        return {"terminated": {"exitCode": c.exit_code, "reason": c.reason,
                               "startedAt": _rfc3339(c.started_at),
                               "finishedAt": _rfc3339(c.finished_at), "containerID": c.id}}
    return {"waiting": {}}


def container_statuses(pod: Object, specs: list[Object], containers: list[Container],
                       old: list[Object], reasons: dict[str, tuple[str, str]],
                       ready: Callable[[Container], tuple[bool, bool]], *, init: bool) -> list[Object]:
    """convertToAPIContainerStatuses for the init containers (init=True) or the regular ones.

    containers: the runtime's containers of the pod, oldest first; old: the previous statuses;
    reasons: the reason cache (name -> (reason, message)); ready(c) -> (ready, started)."""
    has_init = bool((pod.get("spec") or {}).get("initContainers"))
    default = "PodInitializing" if has_init else "ContainerCreating"
    old_by_name = {s.get("name"): s for s in old}
    deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    out = []
    for spec in specs:
        name = spec.get("name", "")
        mine = [c for c in containers if c.name == name]
        status: Object = {"name": name, "image": spec.get("image", ""), "imageID": "",
                          "state": {"waiting": {"reason": default}}, "lastState": {},
                          "ready": False, "restartCount": 0, "started": False}
        previous = old_by_name.get(name)
        if previous is not None:
            if "terminated" in (previous.get("state") or {}):
                status = copy.deepcopy(previous)
            else:
                status["restartCount"] = previous.get("restartCount", 0)
                status["lastState"] = copy.deepcopy(previous.get("lastState") or {})
        if not mine and previous is not None and "running" in (previous.get("state") or {}) \
                and not (status.get("lastState") or {}).get("terminated"):
            # It ran, and the runtime no longer knows it (the node rebooted): say so, as upstream.
            status["lastState"] = {"terminated": {
                "exitCode": 137, "reason": "ContainerStatusUnknown",
                "message": "The container could not be located when the pod was deleted.  "
                           "The container used to be Running"}}
            if not deleting:
                status["restartCount"] = status.get("restartCount", 0) + 1
        if mine:
            latest = mine[-1]
            status.update(image=normalize_image(latest.image), imageID=latest.image_ref,
                          containerID=latest.id, restartCount=latest.attempt,
                          state=_state(latest), lastState=_state(mine[-2]) if len(mine) > 1 else
                          status.get("lastState") or {})
            if init:  # an init container is "ready" once it has completed (UpdatePodStatus)
                status["ready"] = latest.state == EXITED and latest.exit_code == 0
                status["started"] = latest.state == RUNNING
            else:
                status["ready"], status["started"] = ready(latest)
            if latest.state == RUNNING and not status["lastState"] and previous is not None:
                status["lastState"] = copy.deepcopy(previous.get("lastState") or {})
        latest_c = mine[-1] if mine else None
        skip = init and latest_c is not None and latest_c.state == EXITED and latest_c.exit_code == 0
        if not skip and should_container_be_restarted(pod, latest_c) and name in reasons:
            reason, message = reasons[name]
            if "terminated" in status["state"]:
                status["lastState"] = status["state"]
            status["state"] = {"waiting": {"reason": reason, "message": message}}
        out.append(status)
    if not init:
        out.sort(key=lambda s: str(s["name"]))
    return out


def get_phase(pod: Object, statuses: list[Object], pod_is_terminal: bool) -> str:
    """getPhase, for pods without restartable (sidecar) init containers."""
    spec = pod.get("spec") or {}
    by_name = {s.get("name"): s for s in statuses}
    pending_init = failed_init = 0
    for c in spec.get("initContainers") or []:
        s = by_name.get(c.get("name"))
        state = (s or {}).get("state") or {}
        if s is None or "running" in state:
            pending_init += 1
        elif "terminated" in state:
            failed_init += state["terminated"].get("exitCode", 0) != 0
        elif "waiting" in state:
            last = (s.get("lastState") or {}).get("terminated")
            if last is not None:
                failed_init += last.get("exitCode", 0) != 0
            else:
                pending_init += 1
        else:
            pending_init += 1
    unknown = running = waiting = stopped = succeeded = 0
    for c in spec.get("containers") or []:
        s = by_name.get(c.get("name"))
        if s is None:
            unknown += 1
            continue
        state = s.get("state") or {}
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            succeeded += state["terminated"].get("exitCode", 0) == 0
        elif "waiting" in state:
            if (s.get("lastState") or {}).get("terminated") is not None:
                stopped += 1
            else:
                waiting += 1
        else:
            unknown += 1
    policy = spec.get("restartPolicy") or "Always"
    if failed_init > 0 and policy == "Never":
        return "Failed"
    started_any = any("running" in (by_name.get(c.get("name")) or {}).get("state", {}) or
                      "terminated" in (by_name.get(c.get("name")) or {}).get("state", {})
                      for c in spec.get("containers") or [])
    if (pending_init > 0 and not started_any) or waiting > 0:
        return "Pending"
    if running > 0 and unknown == 0:
        return "Running"
    if running == 0 and stopped > 0 and unknown == 0:
        if pod_is_terminal and not _is_static(pod):
            return "Succeeded" if stopped == succeeded else "Failed"
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        return "Failed" if policy == "Never" else "Running"
    return "Pending"


def _is_static(pod: Object) -> bool:
    source = ((pod.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/config.source")
    return source not in (None, "api")


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def pod_conditions(pod: Object, init_statuses: list[Object], statuses: list[Object], phase: str,
                   sandbox_ready: bool) -> list[Object]:
    """The kubelet-owned conditions, in upstream's order (generate.go)."""
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
    # ContainersReady, and Ready which repeats it (no readiness gates here)
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
    out.append({"type": "Ready", **ready})
    out.append({"type": "ContainersReady", **ready})
    out.append({"type": "PodScheduled", "status": "True"})
    return out
