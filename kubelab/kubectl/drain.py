"""`kubectl drain NODE`: cordon the node, then evict its pods, waiting as a disruption budget
asks (k8s.io/kubectl pkg/cmd/drain/drain.go and pkg/drain: drain.go GetPodsForDeletion and
evictPods, filters.go's daemonSetFilter, mirrorPodFilter, unreplicatedFilter,
localStorageFilter).

Each pod is evicted through pods/<name>/eviction. An eviction refused with 429 (a
PodDisruptionBudget that allows no disruption now) is reported in upstream's words,

    error when evicting pods/"web-1" -n "default" (will retry after 5s): Cannot evict pod as
    it would violate the pod's disruption budget.       (one line)

and tried again 5 s later; an evicted pod is waited for until it is gone (polled every
second), then `pod/web-1 evicted`. Upstream runs one goroutine per pod; here each round tries
every pod still waiting, then sleeps 5 s: the same requests at the same times.

kubelab's kubectl has no clock of its own: it sleeps through the `wait` it is handed
(Cluster.kubectl hands it the cluster's run, so the simulation goes on meanwhile). Without one,
drain makes a single pass and says which pods it would still retry, as `rollout status` prints
one line and returns. --timeout (0: no limit, as upstream) bounds the waiting.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.duration import human_duration
from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, Printed, UsageError

__all__ = ["drain"]

RETRY_AFTER = 5.0   # evictPods: time.Sleep(5 * time.Second) after a 429
POLL = 1.0          # waitForDelete's poll interval
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def _ref(pod: Object) -> str:
    return f"{pod['metadata'].get('namespace', '')}/{pod['metadata']['name']}"


def get_pods_for_deletion(client: Client, node: str, args: argparse.Namespace
                          ) -> tuple[list[Object], list[str], list[str]]:
    """GetPodsForDeletion: (the pods to evict, warnings, errors), through the filters."""
    pods = client.list("pods", "", field_selector=f"spec.nodeName={node}")["items"]
    to_evict: list[Object] = []
    daemon_warn: list[str] = []
    daemon_err: list[str] = []
    unmanaged_warn: list[str] = []
    unmanaged_err: list[str] = []
    local_err: list[str] = []
    for pod in sorted(pods, key=_ref):
        meta, spec = pod["metadata"], pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
            continue  # mirrorPodFilter: the kubelet's own, never deleted through the API
        finished = phase in ("Succeeded", "Failed")
        owner = next((o for o in meta.get("ownerReferences") or () if o.get("controller")), None)
        if owner is not None and owner.get("kind") == "DaemonSet" and not finished:
            (daemon_warn if args.ignore_daemonsets else daemon_err).append(_ref(pod))
            continue
        if owner is None and not finished:
            (unmanaged_warn if args.force else unmanaged_err).append(_ref(pod))
            if not args.force:
                continue
        if any("emptyDir" in v for v in spec.get("volumes") or ()) and not finished and \
                not args.delete_emptydir_data:
            local_err.append(_ref(pod))
            continue
        to_evict.append(pod)
    errors = []
    if daemon_err:
        errors.append("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): "
                      + ", ".join(daemon_err))
    if unmanaged_err:
        errors.append("cannot delete Pods that declare no controller (use --force to override): "
                      + ", ".join(unmanaged_err))
    if local_err:
        errors.append("cannot delete Pods with local storage (use --delete-emptydir-data to "
                      "override): " + ", ".join(local_err))
    warnings = []
    if daemon_warn:
        warnings.append("Warning: ignoring DaemonSet-managed Pods: " + ", ".join(daemon_warn))
    if unmanaged_warn:
        warnings.append("Warning: deleting Pods that declare no controller: " + ", ".join(unmanaged_warn))
    return to_evict, warnings, errors


def _evict(client: Client, pod: Object) -> None:
    """EvictPod: POST the policy/v1 Eviction."""
    meta = pod["metadata"]
    client._send(client._request(
        "create", client.resource("pods"), meta.get("namespace", ""), meta["name"],
        subresource="eviction", body={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {
            "name": meta["name"], "namespace": meta.get("namespace", "")}}))


def _gone(client: Client, pod: Object) -> bool:
    """waitForDelete's condition: not found, or a new pod under the same name."""
    meta = pod["metadata"]
    try:
        live = client.get("pods", meta["name"], meta.get("namespace", ""))
    except ApiError as err:
        if err.code == 404:
            return True
        raise
    return bool(live["metadata"].get("uid") != meta.get("uid"))


def _cordon(client: Client, node: str) -> str:
    """The drain's cordon (drain.RunCordonOrUncordon)."""
    live = client.get("nodes", node, "")
    if (live.get("spec") or {}).get("unschedulable"):
        return f"node/{node} already cordoned"
    client.patch("nodes", node, {"spec": {"unschedulable": True}}, "")
    return f"node/{node} cordoned"


def _failed(node: str, error: str, lines: list[str]) -> Printed:
    """RunDrain's error for one node, as 1.34 prints it."""
    return Printed("\n".join([*lines, f'error: unable to drain node "{node}" due to error: {error}, '
                              "continuing command...", "There are pending nodes to be drained:",
                              f" {node}", error]))


def drain(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if len(args.args) != 1:
        raise UsageError("drain", "USAGE: drain NODE [flags]")
    node = args.args[0].removeprefix("node/").removeprefix("nodes/")
    sleep: Callable[[float], Any] | None = getattr(args, "wait", None)
    timeout = _seconds(args.timeout)
    lines = [_cordon(client, node)]
    pods, warnings, errors = get_pods_for_deletion(client, node, args)
    if errors:
        raise _failed(node, "; ".join(errors) if len(errors) > 1 else errors[0], lines)
    lines += warnings
    waited = 0.0
    pending = list(pods)
    for pod in pending:
        lines.append(f"evicting pod {_ref(pod)}")
    evicted: list[Object] = []
    while pending:
        retry = []
        for pod in pending:
            try:
                _evict(client, pod)
            except ApiError as err:
                if err.code == 404:
                    continue
                meta = pod["metadata"]
                if err.code == 429:
                    lines.append(f'error when evicting pods/"{meta["name"]}" -n '
                                 f'"{meta.get("namespace", "")}" (will retry after 5s): '
                                 f"{err.message}")
                    retry.append(pod)
                    continue
                raise _failed(node, f'error when evicting pods/"{meta["name"]}" -n '
                              f'"{meta.get("namespace", "")}": {err.message}', lines) from None
            evicted.append(pod)
        pending = retry
        if not pending:
            break
        if sleep is None:
            names = ", ".join(_ref(p) for p in pending)
            raise _failed(node, f"kubelab's kubectl has no clock to wait on: still to evict "
                          f"{names} (run the cluster and drain again)", lines)
        if timeout and waited + RETRY_AFTER > timeout:
            first = pending[0]["metadata"]
            raise _failed(node, f'error when evicting pods/"{first["name"]}" -n '
                          f'"{first.get("namespace", "")}": global timeout reached: '
                          f"{human_duration(timeout)}", lines)
        sleep(RETRY_AFTER)
        waited += RETRY_AFTER
    for pod in evicted:
        while sleep is not None and not _gone(client, pod):
            if timeout and waited + POLL > timeout:
                raise _failed(node, f"drain did not complete within {human_duration(timeout)}",
                              lines)
            sleep(POLL)
            waited += POLL
        lines.append(f"pod/{pod['metadata']['name']} evicted")
    lines.append(f"node/{node} drained")
    return "\n".join(lines)


def _seconds(text: str) -> float:
    """--timeout: a Go duration (20s, 2m); 0 is no limit."""
    if not text or text == "0":
        return 0.0
    from kubelab.api.cron import CronError, parse_duration

    try:
        return parse_duration(text)
    except CronError as err:
        raise KubectlError(f'invalid argument "{text}" for "--timeout" flag: {err}') from None
