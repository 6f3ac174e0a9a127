"""The other verbs: scale, label, annotate, cordon, uncordon, describe, logs, version,
api-resources, and the doors to taint and rollout.

Each follows its k8s.io/kubectl file (pkg/cmd/scale, label, annotate, drain (cordon),
describe, logs, version, apiresources) with its usage errors: `cordon` without a node is
`error: USAGE: cordon NODE [flags]` plus where to find help; `label deploy web` without a
change is `error: at least one label update is required`; `version x` is `error: extra
arguments: [x]`, `api-resources x` a usage error `unexpected arguments: [x]`. describe, scale,
label and annotate go on past a name that is not found (the Builder's ContinueOnError) and
report it after what they did; cordon and uncordon fetch every node first and stop at the
first that is not found, before changing any. `describe pods we` without a pod `we` describes
the pods whose names begin with it (describe.go DescribeMatchingResources); `logs x` reads the
pod first and says where it looked (`pods "x" not found in namespace "default"`); `logs
--timestamps` prefixes each line with the time the kubelet wrote it, `logs -f` lets virtual time
pass until the container ends (at most FOLLOW_LIMIT seconds) and then prints what it wrote.
"""

from __future__ import annotations

import argparse
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.validation import is_valid_label_value
from kubelab.client.client import Client
from kubelab.kubectl.auth import auth
from kubelab.kubectl.common import (
    KubectlError,
    Printed,
    UsageError,
    Verb,
    check_errors,
    expect_args,
    get_object,
    namespace_of,
    prefix,
    resources,
)
from kubelab.kubectl.describe.apps import describe_object
from kubelab.kubectl.explain import explain
from kubelab.kubectl.rollout import rollout
from kubelab.kubectl.taint import taint

__all__ = ["CLIENT_VERSION", "KUSTOMIZE_VERSION", "SERVER_VERSION", "VERBS", "resources_and_pairs"]

# The release kubelab follows. kubelab's API server has no /version endpoint: the server
# version is this release too, printed once a request has reached the server.
CLIENT_VERSION = SERVER_VERSION = "v1.34.0"
KUSTOMIZE_VERSION = "v5.7.1"


def _scale(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if args.replicas is None:
        raise KubectlError('required flag(s) "replicas" not set')
    if args.replicas < 0:
        raise KubectlError("The --replicas=COUNT flag is required, and COUNT must be greater than "
                           "or equal to 0")
    if not args.args:
        raise KubectlError("You must provide one or more resources by argument or filename.")
    infos, names = resources(client, args.args[0])
    names += args.args[1:]
    if not names:
        raise KubectlError("resource(s) were provided, but no name was specified")
    info, found, errors = infos[0], [], []
    ns = namespace_of(args, info) or "default"
    for name in names:  # the Builder's Infos: each object is read first
        try:
            found.append(get_object(client, info, name, ns)["metadata"]["name"])
        except ApiError as err:
            errors.append(err)
    if not found:
        why = errors[0].message if len(errors) == 1 else f"[{', '.join(e.message for e in errors)}]"
        raise KubectlError(f"no objects passed to scale {why}")
    lines = []
    for name in found:
        try:
            client.scale(info.resource, name, args.replicas, ns)
            lines.append(f"{prefix(info)}/{name} scaled")
        except ApiError as err:
            errors.append(err)
    return check_errors(lines, errors)


def resources_and_pairs(words: list[str], what: str) -> tuple[list[str], list[str]]:
    """GetResourcesAndPairs: resources first, then key=value / key- changes."""
    found, targets, changes = False, [], []
    for word in words:
        change = ("=" in word and not word.startswith("=")) or (word.endswith("-") and word != "-")
        if change:
            found = True
            changes.append(word)
        elif found:
            raise KubectlError(f"all resources must be specified before {what} changes: {word}")
        else:
            targets.append(word)
    return targets, changes


def _label(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    field, what = ("labels", "label") if args.verb == "label" else ("annotations", "annotation")
    targets, changes = resources_and_pairs(args.args, what)
    updates: dict[str, str | None] = {}
    removed: list[str] = []
    for spec in changes:
        if "=" in spec and not spec.startswith("="):
            key, _, value = spec.partition("=")
            if field == "labels":
                if spec.count("=") != 1:
                    raise KubectlError(f"invalid label spec: {spec}")
                if errs := is_valid_label_value(value):
                    raise KubectlError(f'invalid label value: "{spec}": {";".join(errs)}')
            updates[key] = value
        else:
            removed.append(spec[:-1])
    if any(key in updates for key in removed):
        both = ", ".join(k for k in removed if k in updates)
        raise KubectlError("can not both modify and remove a label in the same command"
                           if field == "labels" else "can not both modify and remove the following "
                           f"annotation(s) in the same command: {both}")
    updates.update(dict.fromkeys(removed))
    if not targets:
        raise KubectlError("one or more resources must be specified as <resource> <name> or "
                           "<resource>/<name>")
    if not updates:
        raise KubectlError(f"at least one {what} update is required")
    infos, names = resources(client, targets[0])
    names += targets[1:]
    if not names:
        raise KubectlError("resource(s) were provided, but no name was specified")
    info, lines, errors = infos[0], [], []
    ns = namespace_of(args, info) or "default"
    for name in names:
        try:
            existing = get_object(client, info, name, ns)["metadata"].get(field) or {}
        except ApiError as err:
            errors.append(err)
            continue
        for key, new in updates.items():
            if new is not None and key in existing and existing[key] != new and not args.overwrite:
                raise KubectlError(f"'{key}' already has a value ({existing[key]}), and --overwrite "
                                   "is false")
        client.patch(info.resource, name, {"metadata": {field: updates}}, ns)
        lines.append(f"{prefix(info)}/{name} {'labeled' if field == 'labels' else 'annotated'}")
    return check_errors(lines, errors)


def _cordon(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args and not args.selector:
        raise UsageError(args.verb, f"USAGE: {args.verb} NODE [flags]")
    unschedulable = args.verb == "cordon"
    names = [n.removeprefix("node/").removeprefix("nodes/") for n in args.args] or [
        n["metadata"]["name"] for n in client.list("nodes", label_selector=args.selector)["items"]]
    nodes = [(name, client.get("nodes", name, "")) for name in names]  # the first error stops it
    lines = []
    for name, node in nodes:
        done = "cordoned" if unschedulable else "uncordoned"
        if bool((node.get("spec") or {}).get("unschedulable")) == unschedulable:
            lines.append(f"node/{name} already {done}")
            continue
        client.patch("nodes", name, {"spec": {"unschedulable": unschedulable or None}}, "")
        lines.append(f"node/{name} {done}")
    return "\n".join(lines)


def _describe(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError('You must specify the type of resource to describe. Use "kubectl '
                           'api-resources" for a complete list of supported resources.')
    infos, names = resources(client, args.args[0])
    names += args.args[1:]
    out: list[str] = []
    errors: list[Exception] = []
    for info in infos:
        ns = namespace_of(args, info)
        objects = []
        if names:
            for name in names:
                try:
                    objects.append(get_object(client, info, name, ns or "default"))
                except ApiError as err:
                    errors.append(err)
        else:
            objects = client.list(info.resource, ns, label_selector=args.selector)["items"]
        out += [describe_object(client, info, obj, now) for obj in objects]
    if len(args.args) == 2 and len(infos) == 1 and not out and errors and \
            all(isinstance(e, ApiError) and e.code == 404 for e in errors):
        # DescribeMatchingResources: `describe pods we`, not found, describes the pods whose
        # names begin with it (one blank line between them), else the NotFound stands.
        info = infos[0]
        matching = [o for o in client.list(info.resource, namespace_of(args, info))["items"]
                    if o["metadata"]["name"].startswith(args.args[1])]
        if matching:
            return "\n\n".join(describe_object(client, info, obj, now) for obj in matching)
    if not out and not errors:
        return f"No resources found in {args.namespace} namespace."
    return check_errors(["\n\n\n".join(out)] if out else [], errors)


def _logs(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise UsageError("logs", "expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\n"
                         "POD or TYPE/NAME is a required argument for the logs command")
    if len(args.args) > 2:
        raise UsageError("logs", "expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\n"
                         "POD or TYPE/NAME is a required argument for the logs command")
    target = args.args[0]
    container = args.container or (args.args[1] if len(args.args) == 2 else "")
    kind, _, name = target.partition("/")
    info = client.resource(kind if name else "pods")
    note = ""
    try:  # the Builder reads the object first; logs.go names the namespace when it is not there
        if info.resource != "pods":
            name, note = pod_for(client, info.resource, name, args.namespace)
        else:
            get_object(client, info, name or target, args.namespace)
    except ApiError as err:
        if err.code != 404:
            raise
        raise KubectlError(f"error from server (NotFound): {err.message} in namespace "
                           f'"{args.namespace}"') from None
    pod_name = name or target

    def read() -> str:
        return client.get_logs(pod_name, args.namespace, container=container,
                               previous=args.previous, tail_lines=args.tail if args.tail >= 0 else None,
                               timestamps=args.timestamps)
    text = read()
    if args.follow and args.wait is not None and not args.previous:
        # -f: the stream stays open while the container runs. kubelab's kubectl lets virtual
        # time pass until the container ends (at most FOLLOW_LIMIT seconds), then prints it all.
        waited = 0.0
        while waited < FOLLOW_LIMIT and _still_running(client, pod_name, args.namespace, container):
            args.wait(1.0)
            waited += 1.0
        text = read()
    return note + text


FOLLOW_LIMIT = 300.0


def _still_running(client: Client, name: str, namespace: str, container: str) -> bool:
    status = client.get("pods", name, namespace).get("status") or {}
    statuses = [*(status.get("containerStatuses") or ()), *(status.get("initContainerStatuses") or ())]
    cs: dict[str, Any] = next((s for s in statuses if not container or s.get("name") == container), {})
    return "running" in (cs.get("state") or {}) or ("terminated" not in (cs.get("state") or {}) \
        and status.get("phase") in ("Pending", "Running"))


def pod_for(client: Client, resource: str, name: str, namespace: str) -> tuple[str, str]:
    """logsforobject.go: the most active pod the object selects (podutils.ActivePods,
    reversed), and the stderr line kubectl prints when there was a choice."""
    if resource not in ("deployments", "replicasets", "services"):
        raise KubectlError(f"cannot get the logs from {client.resource(resource).qualified}: "
                           "selector for it is not implemented")
    obj = get_object(client, client.resource(resource), name, namespace)
    if resource == "services":  # SelectorsForObject: a Service selects by a plain label map
        labels = (obj.get("spec") or {}).get("selector") or {}
        if not labels:
            raise KubectlError(f"invalid service '{name}': Service is defined without a selector")
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    else:
        selector = str(selector_from_label_selector(obj["spec"].get("selector")))
    pods = client.list("pods", namespace, label_selector=selector)["items"]
    if not pods:
        raise KubectlError("timed out waiting for the condition")

    def activeness(pod: dict[str, Any]) -> tuple[Any, ...]:
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        ready: dict[str, Any] = next((c for c in status.get("conditions") or ()
                                      if c.get("type") == "Ready"), {})
        restarts = max((int(s.get("restartCount", 0)) for s in status.get("containerStatuses") or ()),
                       default=0)
        since = ready.get("lastTransitionTime") or "" if ready.get("status") == "True" else ""
        return (bool(spec.get("nodeName")), {"Unknown": 1, "Running": 2}.get(status.get("phase", ""), 0),
                ready.get("status") == "True", [-ord(ch) for ch in since], -restarts,
                pod["metadata"].get("creationTimestamp") or "")

    pod = max(pods, key=activeness)["metadata"]["name"]
    return pod, (f"Found {len(pods)} pods, using pod/{pod}\n" if len(pods) > 1 else "")


def _version(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if args.args:
        raise KubectlError(f"extra arguments: [{' '.join(args.args)}]")
    head = f"Client Version: {CLIENT_VERSION}\nKustomize Version: {KUSTOMIZE_VERSION}"
    try:
        client.list("namespaces", limit=1)  # reaches the server, or says why not
    except ApiError as err:
        raise Printed(f"{head}\n{err.kubectl_message()}") from None
    return f"{head}\nServer Version: {SERVER_VERSION}"


def _api_resources(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    """NAME SHORTNAMES APIVERSION NAMESPACED KIND, ordered by group as upstream sorts."""
    expect_args(args, 0, message="unexpected arguments")
    client.discover()  # kubectl asks the server's discovery each time: a new CRD is listed at once
    infos = sorted(client.resources, key=lambda i: (i.group, i.resource))
    rows = [["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]]
    rows += [[i.resource, ",".join(i.short_names), i.api_version, str(i.namespaced).lower(), i.kind]
             for i in infos]
    if args.no_headers:
        rows = rows[1:]
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    return "\n".join("   ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


VERBS: dict[str, Verb] = {
    "scale": _scale, "label": _label, "annotate": _label, "cordon": _cordon, "uncordon": _cordon,
    "describe": _describe, "logs": _logs, "version": _version, "api-resources": _api_resources,
    "explain": explain, "auth": auth,
    "taint": lambda client, args, now, stdin: taint(client, args.args, overwrite=args.overwrite),
    "rollout": lambda client, args, now, stdin: rollout(
        client, args.args, args.namespace, now=now, to_revision=args.to_revision, revision=args.revision),
}
