"""What a simulated container does once started: the workload model.

A container runs its command in the process model (kubelab/kubelet/process/). A container
with an annotation follows a small script instead, chosen per pod or per container (first
match wins); its command is not run, but `kubectl exec` into it works as into any other:

    metadata:
      annotations:
        kubelab.dev/behavior: "exit=30,code=0"       # every regular container of the pod
        kubelab.dev/behavior.app: "crash"            # only the container named "app"

Settings, comma-separated:
    run                 runs until stopped (the default for regular containers)
    exit=<s>            exits after <s> seconds, with code=<c> (default 0)
    crash               crashes right after starting: exit=1,code=1
    oom=<s>             is OOMKilled (exit code 137) after <s> seconds
    startup=<s>         needs <s> seconds before any probe succeeds (a slow start)
    unhealthy=<s>       liveness, readiness and startup probes fail from <s> seconds on
    unready=<s>         only readiness probes fail from <s> seconds on
    probe-latency=<s>   answers probes after <s> seconds (a timeout if >= timeoutSeconds)
    shutdown=<s>|never  takes <s> seconds to exit on SIGTERM (default 0); `never` ignores it,
                        so the kubelet's SIGKILL at the end of the grace period stops it (137)
    cpu=<quantity>      uses that much CPU when idle (default 1m; a load adds to it, stats.py)
    memory=<quantity>   has that working set when idle (default 4Mi)

Init containers run to completion by default (exit=1,code=0); a pod-wide annotation does not
apply to them, only their own `kubelab.dev/behavior.<name>`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from kubelab.api.quantity import parse_quantity

__all__ = ["BEHAVIOR_ANNOTATION", "DEFAULT_INIT_BEHAVIOR", "Workload", "has_behavior",
           "parse_behavior", "workload_for"]

BEHAVIOR_ANNOTATION = "kubelab.dev/behavior"
DEFAULT_INIT_BEHAVIOR = "exit=1,code=0"
_SECONDS = ("exit", "oom", "startup", "unhealthy", "unready", "probe-latency", "shutdown")
_KNOWN = "run, crash, exit=<seconds>, code=<exit code>, oom=<seconds>, startup=<seconds>, " \
         "unhealthy=<seconds>, unready=<seconds>, probe-latency=<seconds>, shutdown=<seconds>|never, " \
         "cpu=<quantity>, memory=<quantity>"


@dataclass(frozen=True)
class Workload:
    exit_after: float | None = None     # None: runs until stopped
    exit_code: int = 0
    oom_after: float | None = None
    startup: float = 0.0
    unhealthy_after: float | None = None
    unready_after: float | None = None
    probe_latency: float = 0.0
    shutdown: float | None = 0.0        # None: ignores SIGTERM
    cpu: int | None = None              # idle CPU in nanocores; None: stats.IDLE_CPU
    memory: int | None = None           # idle working set in bytes; None: stats.IDLE_MEMORY
    cpu_limit: int | None = None        # the container's limits.cpu in nanocores (its CFS quota)

    def end(self) -> tuple[float, int, str] | None:
        """(seconds after start, exit code, reason) of the container's own exit, if any."""
        ends = []
        if self.exit_after is not None:
            ends.append((self.exit_after, self.exit_code,
                         "Completed" if self.exit_code == 0 else "Error"))
        if self.oom_after is not None:
            ends.append((self.oom_after, 137, "OOMKilled"))
        return min(ends) if ends else None

    def responds(self, kind: str, running_for: float) -> bool:
        """Would a probe of `kind` (liveness, readiness, startup) succeed after running_for s?"""
        if running_for < self.startup:
            return False
        if self.unhealthy_after is not None and running_for >= self.unhealthy_after:
            return False
        return not (kind == "readiness" and self.unready_after is not None
                    and running_for >= self.unready_after)


def parse_behavior(text: str) -> Workload:
    """The Workload a behavior string describes; ValueError in plain words when it is wrong."""
    settings: dict[str, Any] = {}
    for raw in text.split(","):
        item = raw.strip()
        if not item or item == "run":
            continue
        if item == "crash":
            settings.update(exit_after=1.0, exit_code=1)
            continue
        key, sep, value = item.partition("=")
        key = key.strip()
        if sep and key in ("cpu", "memory"):
            settings[key] = _quantity(text, key, value.strip())
            continue
        if not sep or (key not in _SECONDS and key != "code"):
            raise ValueError(f'invalid behavior "{text}": unknown setting "{item}"; known: {_KNOWN}')
        value = value.strip()
        if key == "shutdown" and value == "never":
            settings["shutdown"] = None
            continue
        if key == "code":
            if not value.lstrip("-").isdigit():
                raise ValueError(f'invalid behavior "{text}": code must be an integer, got "{value}"')
            settings["exit_code"] = int(value)
            continue
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f'invalid behavior "{text}": {key} must be a number of seconds >= 0, '
                             f'got "{value}"')
        field = {"exit": "exit_after", "oom": "oom_after", "unhealthy": "unhealthy_after",
                 "unready": "unready_after", "probe-latency": "probe_latency"}.get(key, key)
        settings[field] = seconds
    return Workload(**settings)


def has_behavior(pod: dict[str, Any], container: dict[str, Any], *, init: bool) -> bool:
    """Does a kubelab.dev/behavior annotation script this container? (Then the script, not
    the container's command, decides when it exits and how it answers probes.)"""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return f"{BEHAVIOR_ANNOTATION}.{container.get('name', '')}" in annotations or \
        (not init and BEHAVIOR_ANNOTATION in annotations)


def _quantity(text: str, key: str, value: str) -> int:
    """cpu= in nanocores, memory= in bytes."""
    try:
        q = parse_quantity(value)
    except ValueError:
        q = None
    if q is None or q.as_decimal() < 0:
        raise ValueError(f'invalid behavior "{text}": {key} must be a quantity >= 0, got "{value}"')
    return q.milli_value() * 1_000_000 if key == "cpu" else q.value()


def cpu_limit_of(container: dict[str, Any]) -> int | None:
    """The container's limits.cpu in nanocores, None without one."""
    limit = ((container.get("resources") or {}).get("limits") or {}).get("cpu")
    if limit is None:
        return None
    try:
        return parse_quantity(limit).milli_value() * 1_000_000
    except ValueError:
        return None


def workload_for(pod: dict[str, Any], container: dict[str, Any], *, init: bool,
                 image_default: str = "") -> tuple[str, Workload]:
    """The behavior string that applies to one container, and its parsed Workload.

    Raises ValueError (with the annotation's name) when the string is wrong."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    name = container.get("name", "")
    own = annotations.get(f"{BEHAVIOR_ANNOTATION}.{name}")
    if own is not None:
        source, text = f"{BEHAVIOR_ANNOTATION}.{name}", own
    elif not init and BEHAVIOR_ANNOTATION in annotations:
        source, text = BEHAVIOR_ANNOTATION, annotations[BEHAVIOR_ANNOTATION]
    elif image_default:
        source, text = "image default", image_default
    else:
        source, text = "default", DEFAULT_INIT_BEHAVIOR if init else "run"
    try:
        workload = parse_behavior(str(text))
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None
    limit = cpu_limit_of(container)
    return text, workload if limit is None else dataclasses.replace(workload, cpu_limit=limit)
