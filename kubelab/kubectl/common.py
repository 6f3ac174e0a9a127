"""What every kubectl verb shares: its errors, and resolving `pods`, `pod/web`, `deploy,rs`.

Follows k8s.io/kubectl pkg/cmd/util/helpers.go (checkErr, MultipleErrors: one error is printed
as `error: ...`, several one a line without the prefix) and k8s.io/cli-runtime pkg/resource
(builder.go ResourceTypeOrNameArgs with hasCombinedTypeArgs and splitResourceTypeName;
visitor.go Info.Get: a named object that is not found in a namespace other than default is
reported as the namespace's NotFound when the namespace does not exist either).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.resources import ResourceInfo
from kubelab.client.client import Client

__all__ = [
    "KubectlError",
    "Printed",
    "UsageError",
    "Verb",
    "check_errors",
    "expect_args",
    "get_object",
    "namespace_of",
    "prefix",
    "print_template",
    "resource_args",
    "resources",
]

Verb = Callable[[Client, argparse.Namespace, float, str], str]



class Output(str):
    """kubectl's printed text, with the exit code kubectl would return."""

    exit_code: int = 0

    def __new__(cls, text: str, exit_code: int = 0) -> Output:
        out = super().__new__(cls, text)
        out.exit_code = exit_code
        return out


class KubectlError(Exception):
    """An error kubectl reports itself, printed as `error: <message>` with exit code 1."""


class UsageError(KubectlError):
    """cmdutil.UsageErrorf: the message, then where to find the command's help."""

    def __init__(self, verb: str, message: str) -> None:
        super().__init__(f"{message}\nSee 'kubectl {verb} -h' for help and examples")


def expect_args(args: argparse.Namespace, count: int, path: str = "",
                message: str = "Unexpected args") -> list[str]:
    """`Unexpected args: [x]` (a usage error) unless args.args has exactly `count` words;
    `message` is the command's own words for it (`unexpected arguments` for api-resources)."""
    words: list[str] = args.args
    if len(words) != count:
        raise UsageError(path or args.verb, f"{message}: [{' '.join(words[count:])}]")
    return words


def resources(client: Client, spec: str) -> tuple[list[ResourceInfo], list[str]]:
    """`pods`, `pod/web`, `deployments.apps`, `pods,deployments`, `all` -> (resources, names).

    `all` is the category of upstream's workload kinds; of them, this lists pods,
    replicationcontrollers, deployments, replicasets and statefulsets (in kubectl's order)."""
    kinds, _, name = spec.partition("/")
    infos: list[ResourceInfo] = []
    for kind in kinds.split(","):
        if kind == "all":
            infos += [client.resource(k) for k in ("pods", "replicationcontrollers", "deployments",
                                                   "replicasets", "statefulsets")]
        else:
            infos.append(client.resource(kind))
    return infos, [name] if name else []


def resource_args(client: Client, words: list[str]) -> list[tuple[ResourceInfo, list[str]]]:
    """(resource, names) per kind asked for: `pods a b`, `pods,rs`, `pod/a deploy/b`, checked
    as cli-runtime's Builder.ResourceTypeOrNameArgs checks them (hasCombinedTypeArgs,
    splitResourceTypeName) before anything is sent."""
    if any("/" in word for word in words):
        groups: list[tuple[ResourceInfo, list[str]]] = []
        if not all("/" in word for word in words):
            raise KubectlError("there is no need to specify a resource type as a separate argument "
                               "when passing arguments in resource/name form (e.g. 'kubectl get "
                               "resource/<resource_name>' instead of 'kubectl get resource "
                               "resource/<resource_name>'")
        for word in words:
            kind, *rest = word.split("/")
            if len(rest) != 1:
                raise KubectlError("arguments in resource/name form may not have more than one slash")
            if not kind or not rest[0] or "," in kind:
                raise KubectlError("arguments in resource/name form must have a single resource and name")
        for word in words:
            infos, names = resources(client, word)
            groups += [(info, names) for info in infos]
        return groups
    infos, _ = resources(client, words[0])
    return [(info, words[1:]) for info in infos]


def get_object(client: Client, info: ResourceInfo, name: str, namespace: str,
               **options: Any) -> Object:
    """Info.Get: the named object; when it is not found in a namespace other than default and
    that namespace is not found either, the namespace's NotFound (`namespaces "x" not found`)."""
    try:
        return client.get(info.resource, name, namespace, **options)
    except ApiError as err:
        if err.code != 404 or not info.namespaced or namespace in ("", "default"):
            raise
        try:
            client.get("namespaces", namespace, "")
        except ApiError as missing:
            if missing.code == 404:
                raise missing from None
        raise


def message_for_error(err: Exception) -> str:
    """StandardErrorMessage: an API error in kubectl's words, any other as its text."""
    return err.kubectl_message() if isinstance(err, ApiError) else str(err)


def check_errors(lines: list[str], errors: Sequence[Exception]) -> str:
    """What a verb that goes on past errors prints (ContinueOnError, then checkErr): its output,
    then one error as `error: ...` (an API error in its own words) or several one a line
    (MultipleErrors, no prefix). Returns the output when there was no error."""
    if not errors:
        return "\n".join(lines)
    if len(errors) == 1 and not isinstance(errors[0], ApiError):
        text = str(errors[0])
        last = text if text.startswith("error: ") else f"error: {text}"
    else:
        last = "\n".join(message_for_error(e) for e in errors)
    raise Printed("\n".join([*lines, last]))


def namespace_of(args: argparse.Namespace, info: ResourceInfo) -> str:
    """The namespace to send: none for a cluster-scoped kind, none with -A (list them all)."""
    return "" if (args.all_namespaces or not info.namespaced) else str(args.namespace)


def prefix(info: ResourceInfo) -> str:
    """How kubectl names a kind in `<kind>/<name> created`: pod, deployment.apps."""
    return f"{info.singular}.{info.group}" if info.group else info.singular


class Printed(KubectlError):
    """An error kubectl prints in full itself (a hint on stderr before its `error:` line)."""


def print_template(template: Object) -> str:
    """printTemplate, shortened: the pod template's labels, annotations and images (what
    `rollout history --revision=N` prints for a Deployment's, a StatefulSet's or a DaemonSet's)."""
    meta = template.get("metadata") or {}
    labels = ",".join(f"{k}={v}" for k, v in sorted((meta.get("labels") or {}).items()))
    lines = ["Pod Template:", f"  Labels:\t{labels or '<none>'}"]
    for key, value in sorted((meta.get("annotations") or {}).items()):
        lines.append(f"  Annotations:\t{key}: {value}")
    lines.append("  Containers:")
    for c in (template.get("spec") or {}).get("containers") or ():
        lines += [f"   {c.get('name')}:", f"    Image:\t{c.get('image')}"]
    return "\n".join(lines) + "\n"
