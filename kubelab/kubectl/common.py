"""What every kubectl verb shares: its errors, and resolving `pods`, `pod/web`, `deploy,rs`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from kubelab.api.resources import ResourceInfo
from kubelab.client.client import Client

__all__ = ["KubectlError", "Printed", "UsageError", "Verb", "expect_args", "namespace_of", "prefix",
           "resources"]

Verb = Callable[[Client, argparse.Namespace, float, str], str]


class KubectlError(Exception):
    """An error kubectl reports itself, printed as `error: <message>` with exit code 1."""


class UsageError(KubectlError):
    """cmdutil.UsageErrorf: the message, then where to find the command's help."""

    def __init__(self, verb: str, message: str) -> None:
        super().__init__(f"{message}\nSee 'kubectl {verb} -h' for help and examples")


def expect_args(args: argparse.Namespace, count: int, path: str = "") -> list[str]:
    """`Unexpected args: [x]` (a usage error) unless args.args has exactly `count` words."""
    words: list[str] = args.args
    if len(words) != count:
        raise UsageError(path or args.verb, f"Unexpected args: [{' '.join(words[count:])}]")
    return words


def resources(client: Client, spec: str) -> tuple[list[ResourceInfo], list[str]]:
    """`pods`, `pod/web`, `deployments.apps`, `pods,deployments`, `all` -> (resources, names).

    `all` is the category of upstream's workload kinds; of them, kubelab serves pods,
    deployments and replicasets (in kubectl's order)."""
    kinds, _, name = spec.partition("/")
    infos: list[ResourceInfo] = []
    for kind in kinds.split(","):
        if kind == "all":
            infos += [client.resource(k) for k in ("pods", "deployments", "replicasets")]
        else:
            infos.append(client.resource(kind))
    return infos, [name] if name else []


def namespace_of(args: argparse.Namespace, info: ResourceInfo) -> str:
    """The namespace to send: none for a cluster-scoped kind, none with -A (list them all)."""
    return "" if (args.all_namespaces or not info.namespaced) else str(args.namespace)


def prefix(info: ResourceInfo) -> str:
    """How kubectl names a kind in `<kind>/<name> created`: pod, deployment.apps."""
    return f"{info.singular}.{info.group}" if info.group else info.singular


class Printed(KubectlError):
    """An error kubectl prints in full itself (a hint on stderr before its `error:` line)."""
