"""`kubectl patch` and `kubectl replace`.

patch follows k8s.io/kubectl pkg/cmd/patch/patch.go: the patch (-p, or --patch-file) is YAML or
JSON, sent as --type strategic (the default), merge or json, to the object or to its
--subresource (status, scale); each named object is read first (the Builder) and the answer
compared with it: `deployment.apps/web patched`, or `patched (no change)` when the server
changed nothing. A name not found is reported after the others (ContinueOnError); a strategic
patch of a custom resource is refused by the server (415) and kubectl says which kind.

replace follows pkg/cmd/replace/replace.go: a PUT of each object in the file (-f FILE or -f -),
its errors naming the file (cmdutil.AddSourceToErr: `error when replacing "web.yaml": ...`); an
object without a resourceVersion replaces whatever is live (resource.Helper.Replace with
overwrite reads the live resourceVersion first), one with a stale one is refused with 409.
`--force` deletes each object, waits until it is gone (the cluster's time passes) and creates
it again.

kubelab's departures: a patch that is neither JSON nor YAML is refused before anything is sent
(`unable to parse ...`); no --local, --dry-run or --save-config; replace --force waits at most
five minutes of the cluster's time (upstream's --timeout default) and does not read --timeout.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.resources import ResourceInfo
from kubelab.api.yamlio import load_document, load_objects
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, Verb, check_errors, get_object, prefix, resource_args

__all__ = ["VERBS"]

PATCH_TYPES = {"json": "json", "merge": "merge", "strategic": "strategic"}
MEDIA_TYPES = {"json": "application/json-patch+json", "merge": "application/merge-patch+json",
               "strategic": "application/strategic-merge-patch+json"}
FORCE_TIMEOUT = 300.0  # replace --force: wait.PollUntilContextTimeout, --timeout 0 is 5 minutes


def _parse_patch(text: str) -> Any:
    """yaml.ToJSON: the patch as JSON, whether written as JSON or as YAML (go-yaml's limits and
    wording, kubelab.api.yamlio)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return load_document(text)
    except ParseError as err:
        problem = str(err).removeprefix("error converting YAML to JSON: ")
        raise KubectlError(f'unable to parse "{text}": {problem}') from None


def _patch(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if args.patch and args.patch_file:
        raise KubectlError("cannot specify --patch and --patch-file together")
    if not args.patch and not args.patch_file:
        raise KubectlError("must specify --patch or --patch-file containing the contents of the patch")
    if args.patch_type and args.patch_type.lower() not in PATCH_TYPES:
        raise KubectlError(f"--type must be one of [json merge strategic], not {args.patch_type!r}"
                           .replace("'", '"'))
    patch_type = PATCH_TYPES[(args.patch_type or "strategic").lower()]
    text = args.patch
    if args.patch_file:
        try:
            with open(args.patch_file, encoding="utf-8") as f:
                text = f.read()
        except OSError as err:
            raise KubectlError(f"unable to read patch file: open {args.patch_file}: "
                               f"{os.strerror(err.errno or 0).lower()}") from None
    body = _parse_patch(text)
    targets: list[tuple[ResourceInfo, str, str]] = []
    if args.filename:
        for obj in load_objects(stdin if args.filename == "-" else args.filename):
            meta = obj.get("metadata") or {}
            targets.append((client.resource_for(obj), meta.get("name", ""),
                            meta.get("namespace") or args.namespace))
    elif not args.args:
        raise KubectlError("You must provide one or more resources by argument or filename.\n"
                           "Example resource specifications include:\n   '-f rsrc.yaml'\n   "
                           "'--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
    else:
        for info, names in resource_args(client, args.args):
            if not names:
                raise KubectlError("resource(s) were provided, but no name was specified")
            targets += [(info, name, args.namespace) for name in names]
    lines: list[str] = []
    errors: list[Exception] = []
    for info, name, namespace in targets:
        ns = namespace if info.namespaced else ""
        try:
            lines.append(_patch_one(client, info, name, ns, body, patch_type, args.subresource))
        except (ApiError, KubectlError) as err:
            errors.append(err)
    return check_errors(lines, errors)


def _patch_one(client: Client, info: ResourceInfo, name: str, namespace: str, body: Any,
               patch_type: str, subresource: str) -> str:
    """One object: read it (the Builder's Info), patch it, and say whether that changed it."""
    before = get_object(client, info, name, namespace, subresource=subresource)
    try:
        after = client.patch(info.resource, name, body, namespace, patch_type=patch_type,
                             subresource=subresource)
    except ApiError as err:
        if err.code == 415:  # apierrors.IsUnsupportedMediaType
            kind = f"{info.group}/{info.version}, Kind={info.kind}" if info.group else \
                f"/{info.version}, Kind={info.kind}"
            raise KubectlError(f"{MEDIA_TYPES[patch_type]} is not supported by {kind}: "
                               f"{err.message}") from None
        raise
    shown = "scale.autoscaling" if subresource == "scale" else prefix(info)
    change = "patched" if after != before else "patched (no change)"
    return f"{shown}/{after['metadata']['name']} {change}"


def _source(args: argparse.Namespace) -> str:
    """Info.Source: the file named by -f, STDIN for -f -."""
    return "STDIN" if args.filename == "-" else str(args.filename)


def _with_source(err: ApiError, source: str) -> ApiError:
    """cmdutil.AddSourceToErr: the Status's message names the file."""
    return ApiError(err.code, err.reason, f'error when replacing "{source}": {err.message}',
                    err.details)


def _replace(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.filename:
        raise KubectlError("must specify one of -f and -k")
    objects = load_objects(stdin if args.filename == "-" else args.filename)
    source = _source(args)
    if args.force:
        return _force_replace(client, args, objects)
    lines: list[str] = []
    errors: list[Exception] = []
    for obj in objects:  # ContinueOnError: each object in turn, the errors after
        info = client.resource_for(obj)
        meta = obj.setdefault("metadata", {})
        namespace = (meta.get("namespace") or args.namespace) if info.namespaced else ""
        if info.namespaced:
            meta["namespace"] = namespace
        try:
            if not meta.get("resourceVersion"):  # Helper.Replace(overwrite=true)
                live = client.get(info.resource, meta.get("name", ""), namespace)
                meta["resourceVersion"] = live["metadata"]["resourceVersion"]
            replaced = client.update(obj)
        except ApiError as err:
            errors.append(_with_source(err, source))
            continue
        lines.append(f"{prefix(info)}/{replaced['metadata']['name']} replaced")
    return check_errors(lines, errors)


def _force_replace(client: Client, args: argparse.Namespace, objects: list[Object]) -> str:
    """forceReplace: delete every object (DeleteResult's lines), wait until each is gone, then
    create them again."""
    lines: list[str] = []
    targets = []
    for obj in objects:
        info, meta = client.resource_for(obj), obj.setdefault("metadata", {})
        namespace = (meta.get("namespace") or args.namespace) if info.namespaced else ""
        targets.append((info, obj, namespace))
        grace = 1 if args.grace_period == 0 else args.grace_period
        client.delete(info.resource, meta.get("name", ""), namespace or "default",
                      grace_period_seconds=grace)
        where = f" from {namespace} namespace" if info.namespaced else ""
        lines.append(f'{prefix(info)} "{meta.get("name", "")}" deleted{where}')
    for info, obj, namespace in targets:
        waited = 0.0
        while _exists(client, info, obj["metadata"].get("name", ""), namespace):
            if args.wait is None or waited >= FORCE_TIMEOUT:
                raise KubectlError("timed out waiting for the condition")
            args.wait(1.0)
            waited += 1.0
    for info, obj, namespace in targets:
        obj["metadata"].pop("resourceVersion", None)
        created = client.create(obj, namespace)
        lines.append(f"{prefix(info)}/{created['metadata']['name']} replaced")
    return "\n".join(lines)


def _exists(client: Client, info: ResourceInfo, name: str, namespace: str) -> bool:
    try:
        client.get(info.resource, name, namespace)
    except ApiError as err:
        if err.code == 404:
            return False
        raise
    return True


VERBS: dict[str, Verb] = {"patch": _patch, "replace": _replace}
