"""kubectl over the client: the verbs the course uses, printing what kubectl prints.

`cluster.kubectl("get pods -o wide")` returns the text kubectl would show; errors come back the
way kubectl shows them (`Error from server (NotFound): pods "x" not found`) with exit_code 1.
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Callable
from typing import Any

from kubelab.api.errors import ApiError, ParseError
from kubelab.api.resources import ResourceInfo
from kubelab.api.yamlio import dump, load_objects
from kubelab.client.apply import apply_objects
from kubelab.client.client import Client
from kubelab.kubectl_printers import table
from kubelab.kubectl_rollout import rollout
from kubelab.kubectl_taint import taint

__all__ = ["KubectlError", "Output", "kubectl"]

Object = dict[str, Any]


class Output(str):
    """kubectl's printed text, with the exit code kubectl would return."""

    exit_code: int = 0

    def __new__(cls, text: str, exit_code: int = 0) -> Output:
        out = super().__new__(cls, text)
        out.exit_code = exit_code
        return out


class KubectlError(Exception):
    """A usage error, reported as kubectl does (`error: ...`)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise KubectlError(message)


def _parser() -> _Parser:
    p = _Parser(prog="kubectl", add_help=False)
    p.add_argument("verb")
    p.add_argument("args", nargs="*")
    p.add_argument("-n", "--namespace", default="default")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-o", "--output", default="")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("--field-selector", default="")
    p.add_argument("--sort-by", default="")
    p.add_argument("--no-headers", action="store_true")
    p.add_argument("-f", "--filename", default="")
    p.add_argument("--image", default="")
    p.add_argument("--labels", default="")
    p.add_argument("--replicas", type=int)
    p.add_argument("--cascade", default="background", choices=["background", "foreground", "orphan"])
    p.add_argument("--grace-period", type=int)
    p.add_argument("--now", action="store_true")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--to-revision", type=int, default=0)
    p.add_argument("--revision", type=int, default=0)
    return p


def kubectl(client: Client, command: str, now: float = 0.0, stdin: str = "") -> Output:
    """Run one kubectl command line against `client`."""
    try:
        words = shlex.split(command)
        if words and words[0] == "kubectl":
            words = words[1:]
        args, _ = _parser().parse_known_args(words)
        handler = _VERBS.get(args.verb)
        if handler is None:
            raise KubectlError(f'unknown command "{args.verb}" for "kubectl"')
        return Output(handler(client, args, now, stdin).rstrip("\n"))
    except ApiError as err:
        return Output(err.kubectl_message(), 1)
    except (KubectlError, ParseError, ValueError) as err:
        return Output(f"error: {err}", 1)


def _resources(client: Client, spec: str) -> tuple[ResourceInfo, list[str]]:
    """`pods`, `pod/web`, `deployments.apps web` -> (resource, names)."""
    kind, _, name = spec.partition("/")
    return client.resource(kind), [name] if name else []


def _namespace(args: argparse.Namespace, info: ResourceInfo) -> str:
    return "" if (args.all_namespaces or not info.namespaced) else args.namespace


def _get(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError("You must specify the type of resource to get.")
    info, names = _resources(client, args.args[0])
    names += args.args[1:]
    ns = _namespace(args, info)
    if names:
        objects = [client.get(info.resource, n, ns or "default") for n in names]
    else:
        objects = client.list(info.resource, ns, label_selector=args.selector,
                              field_selector=args.field_selector)["items"]
    if args.sort_by:
        path = args.sort_by.strip("{}").lstrip(".").split(".")
        objects.sort(key=lambda o: _sort_key(o, path))
    if args.output in ("json", "yaml"):
        item: Any = objects[0] if len(names) == 1 else {
            "apiVersion": "v1", "kind": "List", "items": objects, "metadata": {"resourceVersion": ""}}
        return json.dumps(item, indent=4) if args.output == "json" else dump(item)
    if args.output == "name":
        prefix = f"{info.singular}.{info.group}" if info.group else info.singular
        return "\n".join(f"{prefix}/{o['metadata']['name']}" for o in objects)
    if args.output not in ("", "wide"):
        raise KubectlError(f'unable to match a printer suitable for the output format "{args.output}"')
    if not objects:
        where = f"in {ns} namespace" if ns else ""
        return f"No resources found {where}".rstrip() + "."
    return table(info.resource, objects, now, wide=args.output == "wide",
                 namespace_column=args.all_namespaces and info.namespaced,
                 no_headers=args.no_headers)


def _sort_key(obj: Object, path: list[str]) -> tuple[int, Any]:
    value: Any = obj
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return (0, value) if isinstance(value, (int, float)) else (1, str(value or ""))


def _apply(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.filename:
        raise KubectlError("must specify one of -f and -k")
    source = stdin if args.filename == "-" else args.filename
    objects = load_objects(source)
    for obj in objects:
        obj.setdefault("metadata", {}).setdefault("namespace", args.namespace)
    if args.verb == "apply":
        return "\n".join(apply_objects(client, objects))
    lines = []
    for obj in objects:
        created = client.create(obj, args.namespace)
        info = client.resource_for(created)
        prefix = f"{info.singular}.{info.group}" if info.group else info.singular
        lines.append(f"{prefix}/{created['metadata']['name']} created")
    return "\n".join(lines)


def _delete(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError("You must provide one or more resources by argument or filename.")
    info, names = _resources(client, args.args[0])
    names += args.args[1:]
    ns = _namespace(args, info) or "default"
    if not names and args.selector:
        names = [o["metadata"]["name"] for o in
                 client.list(info.resource, ns, label_selector=args.selector)["items"]]
    grace = 0 if args.now else args.grace_period
    policy = {"background": "Background", "foreground": "Foreground", "orphan": "Orphan"}[args.cascade]
    prefix = f"{info.singular}.{info.group}" if info.group else info.singular
    lines = []
    for name in names:
        client.delete(info.resource, name, ns, propagation_policy=policy, grace_period_seconds=grace)
        lines.append(f'{prefix} "{name}" deleted')
    return "\n".join(lines) or "No resources found"


def _run(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args or not args.image:
        raise KubectlError("NAME and --image are required: kubectl run NAME --image=image")
    name = args.args[0]
    labels = dict(kv.split("=", 1) for kv in args.labels.split(",") if kv) or {"run": name}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": args.namespace, "labels": labels},
           "spec": {"containers": [{"name": name, "image": args.image}]}}
    client.create(pod, args.namespace)
    return f"pod/{name} created"


def _scale(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if args.replicas is None or not args.args:
        raise KubectlError("required flag(s) \"replicas\" not set")
    if args.replicas < 0:
        raise KubectlError("The --replicas=COUNT flag is required, and COUNT must be greater than "
                           "or equal to 0")
    info, names = _resources(client, args.args[0])
    names += args.args[1:]
    lines = []
    for name in names:
        client.scale(info.resource, name, args.replicas, args.namespace)
        lines.append(f"{info.singular}.{info.group}/{name} scaled" if info.group
                     else f"{info.singular}/{name} scaled")
    return "\n".join(lines)


def _label(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    info, names = _resources(client, args.args[0])
    rest = args.args[1:]
    if not names:
        names, rest = rest[:1], rest[1:]
    field = "labels" if args.verb == "label" else "annotations"
    changes: dict[str, str | None] = {}
    for item in rest:
        if item.endswith("-"):
            changes[item[:-1]] = None
        else:
            key, _, value = item.partition("=")
            changes[key] = value
    ns = _namespace(args, info) or "default"
    current = client.get(info.resource, names[0], ns)
    existing = (current["metadata"].get(field) or {})
    for key, value in changes.items():
        if value is not None and key in existing and existing[key] != value and not args.overwrite:
            raise KubectlError(f"'{key}' already has a value ({existing[key]}), and --overwrite is false")
    client.patch(info.resource, names[0], {"metadata": {field: changes}}, ns)
    verb = "labeled" if field == "labels" else "annotated"
    return f"{info.singular}/{names[0]} {verb}"


def _cordon(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    unschedulable = args.verb == "cordon"
    lines = []
    for name in args.args:
        name = name.removeprefix("node/")
        node = client.get("nodes", name, "")
        if bool((node.get("spec") or {}).get("unschedulable")) == unschedulable:
            lines.append(f"node/{name} already {'cordoned' if unschedulable else 'uncordoned'}")
            continue
        client.patch("nodes", name, {"spec": {"unschedulable": unschedulable or None}}, "")
        lines.append(f"node/{name} {'cordoned' if unschedulable else 'uncordoned'}")
    return "\n".join(lines)


def _describe(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    info, names = _resources(client, args.args[0])
    names += args.args[1:]
    ns = _namespace(args, info) or "default"
    out = []
    for name in names:
        obj = client.get(info.resource, name, ns)
        events = client.list("events", ns if info.namespaced else "",
                             field_selector=f"involvedObject.name={name}")["items"]
        out.append(dump(obj).rstrip())
        out.append("Events:")
        out.append(table("events", events, now) if events else "  <none>")
    return "\n".join(out)


_VERBS: dict[str, Callable[[Client, argparse.Namespace, float, str], str]] = {
    "get": _get, "apply": _apply, "create": _apply, "delete": _delete, "run": _run,
    "scale": _scale, "label": _label, "annotate": _label, "cordon": _cordon,
    "uncordon": _cordon, "describe": _describe,
    "taint": lambda client, args, now, stdin: taint(client, args.args, overwrite=args.overwrite),
    "rollout": lambda client, args, now, stdin: rollout(
        client, args.args, args.namespace, now=now, to_revision=args.to_revision, revision=args.revision),
}
