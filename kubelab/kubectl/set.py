"""`kubectl set image|env|resources`: change the pod template of what runs, by a PATCH.

Follows k8s.io/kubectl pkg/cmd/set: set_image.go, set_env.go (with env/env_parse.go),
set_resources.go and helper.go (CalculatePatches, selectContainers, updateEnv). Each reads the
objects first (the Builder's Latest: a name not found stops the command before anything is
changed), changes a copy of each pod spec (polymorphichelpers UpdatePodSpecForObject: a Pod's
spec, a CronJob's job template's, the template of everything else), and sends the two-way
strategic merge patch from the object as read to the copy (strategicpatch
CreateTwoWayMergePatch); a change that changes nothing sends nothing and prints nothing. What
it prints is the patched object's name and what changed: `deployment.apps/web image updated`.
A Deployment whose template changed rolls out, as `kubectl rollout status` shows. `set env`
keeps the variables' order (updateEnv), refuses to change a value with --overwrite=false, and
warns (on stderr) about an object none of whose containers -c selects; a custom resource is
refused as kubectl's scheme refuses it (`no kind "CronTab" is registered ...`).

kubelab's departures: `--from` reads a ConfigMap's or a Secret's keys in sorted order (a Go map's
order is random); `--list` prints the variables without resolving references (no --resolve);
no --local, --dry-run, --all or --selector.
"""

from __future__ import annotations

import argparse
import copy
import re
from collections.abc import Callable
from fnmatch import fnmatchcase

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.quantity import canonical_quantity
from kubelab.api.resources import BUILTIN_RESOURCES, ResourceInfo
from kubelab.api.strategicpatch import two_way_strategic_patch
from kubelab.api.yamlio import load_objects
from kubelab.client.client import Client
from kubelab.kubectl.common import (
    KubectlError,
    Printed,
    UsageError,
    Verb,
    check_errors,
    get_object,
    prefix,
    resource_args,
)
from kubelab.kubectl.verbs import resources_and_pairs

__all__ = ["VERBS", "pod_spec_of", "read_targets"]

Target = tuple[ResourceInfo, Object]
_ENV_ARG = re.compile(r"^(.+)=(.*)$", re.S)  # env_parse.go argumentEnvironment
_NOT_ENV_NAME = re.compile(r"[^A-Za-z0-9_]")  # set_env.go validEnvNameRegexp
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")  # apimachinery validation envVarNameFmt


def pod_spec_of(obj: Object) -> Object:
    """UpdatePodSpecForObject's choice: the pod spec an object runs, or its error."""
    kind = obj.get("kind", "")
    spec: Object = obj.setdefault("spec", {})
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
        kind = "Job"
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"):
        template: Object = spec.setdefault("template", {}).setdefault("spec", {})
        return template
    raise KubectlError(f"the object is not a pod or does not have a pod template: *v1.{kind}")


def read_targets(client: Client, args: argparse.Namespace, words: list[str], stdin: str) -> list[Target]:
    """The Builder with -f or TYPE NAME args, ContinueOnError, Latest: every object read from
    the server; the errors of those not found are reported together, before any change."""
    if not words and not args.filename:
        raise KubectlError("one or more resources must be specified as <resource> <name> or "
                           "<resource>/<name>")
    wanted: list[tuple[ResourceInfo, str, str]] = []
    if args.filename:
        for obj in load_objects(stdin if args.filename == "-" else args.filename):
            info, meta = client.resource_for(obj), obj.get("metadata") or {}
            wanted.append((info, meta.get("name", ""), meta.get("namespace") or args.namespace))
    else:
        for info, names in resource_args(client, words):
            if not names:
                raise KubectlError("resource(s) were provided, but no name was specified")
            wanted += [(info, name, args.namespace) for name in names]
    found: list[Target] = []
    errors: list[Exception] = []
    for info, name, namespace in wanted:
        try:
            found.append((info, get_object(client, info, name, namespace if info.namespaced else "")))
        except ApiError as err:
            errors.append(err)
    check_errors([], errors)
    for info, _ in found:  # the Builder decodes with kubectl's scheme: built-in kinds only
        if info not in BUILTIN_RESOURCES:
            raise KubectlError(f'no kind "{info.kind}" is registered for version "{info.api_version}" '
                               'in scheme "pkg/scheme/scheme.go:28"')
    return found


def _patch_each(client: Client, targets: list[Target], change: Callable[[Object, Object], None],
                what: str, errors: list[Exception]) -> str:
    """CalculatePatches, then each non-empty patch sent as a strategic merge patch and the
    patched object printed as `<kind>/<name> <what> updated`."""
    lines: list[str] = []
    for info, obj in targets:
        after = copy.deepcopy(obj)
        try:
            change(after, pod_spec_of(after))
        except KubectlError as err:
            errors.append(KubectlError(f"error: {info.resource}/{obj['metadata']['name']} {err}"))
            continue
        patch = two_way_strategic_patch(obj, after)
        if not patch:
            continue
        meta = obj["metadata"]
        try:
            patched = client.patch(info.resource, meta["name"], patch, meta.get("namespace", ""),
                                   patch_type="strategic")
        except ApiError as err:
            errors.append(KubectlError(f"failed to patch {what} update to pod template: "
                                       f"{err.message}"))
            continue
        lines.append(f"{prefix(info)}/{patched['metadata']['name']} {what} updated")
    return check_errors(lines, errors)


def _containers(spec: Object, selector: str) -> list[Object]:
    """selectContainers: the containers, then the init containers, whose name matches the
    selector (a glob, `*` for all)."""
    return [c for field in ("containers", "initContainers") for c in spec.get(field) or ()
            if fnmatchcase(str(c.get("name", "")), selector or "*")]


def _set_image(client: Client, args: argparse.Namespace, stdin: str) -> str:
    words, pairs = resources_and_pairs(args.args[1:], "image")
    images: dict[str, str] = {}  # ParsePairs, without removals
    invalid = [pair for pair in pairs if "=" not in pair or pair.startswith("=")]
    if invalid:
        raise KubectlError(f"invalid image format: {', '.join(invalid)}")
    for pair in pairs:
        name, _, image = pair.partition("=")
        images[name] = image
    targets = read_targets(client, args, words, stdin)
    if not images:
        raise KubectlError("at least one image update is required")
    if len(images) > 1 and "*" in images:
        raise KubectlError("all containers are already specified by *, but saw more than one "
                           "container_name=container_image pairs")
    errors: list[Exception] = []

    def change(obj: Object, spec: Object) -> None:
        for name, image in images.items():
            matched = [c for field in ("initContainers", "containers") for c in spec.get(field) or ()
                       if name in ("*", c.get("name"))]
            for container in matched:
                container["image"] = image
            if not matched:
                errors.append(KubectlError(f'error: unable to find container named "{name}"'))
    return _patch_each(client, targets, change, "image", errors)


def _env_name(key: str) -> str:
    """keyToEnvName: a key as an environment variable name."""
    return _NOT_ENV_NAME.sub("_", key).upper()


def _from_source(client: Client, args: argparse.Namespace) -> list[Object]:
    """--from=configmap/NAME|secret/NAME: a variable per key, referring to it."""
    env: list[Object] = []
    for info, names in resource_args(client, [args.from_]):
        for name in names:
            obj = get_object(client, info, name, args.namespace)
            ref = {"ConfigMap": "configMapKeyRef", "Secret": "secretKeyRef"}.get(obj.get("kind", ""))
            if ref is None:
                raise KubectlError("unsupported resource specified in --from")
            keys = sorted({**(obj.get("data") or {}), **(obj.get("binaryData") or {})})
            env += [{"name": args.prefix + _env_name(key),
                     "valueFrom": {ref: {"name": name, "key": key}}} for key in keys]
    return env


def _parse_env(specs: list[str]) -> tuple[list[Object], list[str]]:
    """env_parse.go parseIntoEnvVar: KEY=VALUE sets, KEY- removes."""
    env: list[Object] = []
    remove: list[str] = []
    for spec in specs:
        if "=" in spec:
            name, _, value = spec.partition("=")
            if not _ENV_NAME.fullmatch(name):  # validation.IsEnvVarName
                raise KubectlError(
                    f'"{name}" is not a valid key name: a valid environment variable name must consist '
                    "of alphabetic characters, digits, '_', '-', or '.', and must not start with a "
                    "digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for "
                    "validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")
            env.append({"name": name, "value": value})
        elif spec.endswith("-"):
            remove.append(spec[:-1])
        else:
            raise KubectlError(f"unknown environment variable: {spec}")
    if any(e["name"] in remove for e in env):
        raise KubectlError("can not both modify and remove the same environment variable in the "
                           "same command")
    return env, remove


def _update_env(existing: list[Object], env: list[Object], remove: list[str]) -> list[Object]:
    """updateEnv: the variables kept in their order, each replaced by its new value, then the
    new ones; the removed ones left out."""
    covered = set(remove)
    new = {e["name"]: e for e in env}
    out = []
    for e in existing:
        if e.get("name") in covered:
            continue
        if e.get("name") in new:
            covered.add(e["name"])
            out.append(new[e["name"]])
        else:
            out.append(e)
    for e in env:
        if e["name"] not in covered:
            covered.add(e["name"])
            out.append(e)
    return out


def _set_env(client: Client, args: argparse.Namespace, stdin: str) -> str:
    words: list[str] = []
    specs: list[str] = []
    for word in args.args[1:]:  # SplitEnvironmentFromResources
        if _ENV_ARG.match(word) or word.endswith("-"):
            specs.append(word)
        elif specs:
            raise KubectlError("all resources must be specified before environment changes: "
                               + " ".join(args.args[1:]))
        else:
            words.append(word)
    if not args.filename and not words:
        raise KubectlError("one or more resources must be specified as <resource> <name> or "
                           "<resource>/<name>")
    if args.list and args.output:
        raise KubectlError("--list and --output may not be specified together")
    env, remove = _parse_env([*args.env, *specs])
    if args.from_:
        env += _from_source(client, args)
    targets = read_targets(client, args, words, stdin)

    warnings: list[str] = []  # on stderr, before the lines

    def change(obj: Object, spec: Object) -> None:
        containers = _containers(spec, args.container)
        if not containers:
            warnings.append(f"Warning: {obj.get('kind')}/{obj['metadata']['name']} does not have any "
                            f'containers matching "{args.container or "*"}"')
        for c in containers:
            if args.overwrite is False:  # validateNoOverwrites
                have = {e.get("name"): e.get("value", "") for e in c.get("env") or ()}
                for e in env:
                    if e["name"] in have and have[e["name"]] != e.get("value", ""):
                        raise KubectlError(f"'{e['name']}' already has a value ({have[e['name']]}), "
                                           "and --overwrite is false")
            c["env"] = _update_env(c.get("env") or [], env, remove)
            if not c["env"]:
                del c["env"]

    if args.list:
        listed: list[str] = []
        for _, obj in targets:
            spec = pod_spec_of(copy.deepcopy(obj))
            change(obj, spec)
            for c in _containers(spec, args.container):
                listed.append(f"# {obj.get('kind')} {obj['metadata']['name']}, container {c.get('name')}")
                listed += [f"{e['name']}={e.get('value', '')}" if "valueFrom" not in e else
                           f"# {e['name']} from {_reference(e['valueFrom'])}" for e in c.get("env") or ()]
        return "\n".join([*warnings, *listed])
    if not env and not remove:
        return ""  # set_env.go complains only once a patch is sent, which none is
    try:
        out = _patch_each(client, targets, change, "env", [])
    except Printed as err:  # the warnings still come first
        raise Printed("\n".join([*warnings, str(err)])) from None
    return "\n".join([*warnings, out]).strip("\n")


def _reference(source: Object) -> str:
    """envutil.GetEnvVarRefString."""
    if "configMapKeyRef" in source:
        ref = source["configMapKeyRef"]
        return f"configmap {ref.get('name')}, key {ref.get('key')}"
    if "secretKeyRef" in source:
        ref = source["secretKeyRef"]
        return f"secret {ref.get('name')}, key {ref.get('key')}"
    if "fieldRef" in source:
        return f"field path {source['fieldRef'].get('fieldPath')}"
    if "resourceFieldRef" in source:
        ref = source["resourceFieldRef"]
        return f"resource {ref.get('resource')}, container {ref.get('containerName')}"
    return "invalid valueFrom"


def _resource_list(spec: str) -> dict[str, str]:
    """generateversioned.populateResourceListV1: `cpu=200m,memory=512Mi`."""
    out: dict[str, str] = {}
    for statement in spec.split(","):
        name, sep, value = statement.partition("=")
        if not sep or "=" in value:
            raise KubectlError(f"Invalid argument syntax {statement}, expected <resource>=<value>")
        try:
            out[name] = canonical_quantity(value)
        except ParseError:
            raise KubectlError("quantities must match the regular expression "
                               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None
    return out


def _set_resources(client: Client, args: argparse.Namespace, stdin: str) -> str:
    targets = read_targets(client, args, args.args[1:], stdin)
    if not args.limits and not args.requests:
        raise KubectlError("you must specify an update to requests or limits (in the form of "
                           "--requests/--limits)")
    limits = _resource_list(args.limits) if args.limits else {}
    requests = _resource_list(args.requests) if args.requests else {}
    errors: list[Exception] = []

    def change(obj: Object, spec: Object) -> None:
        containers = _containers(spec, args.container)
        if not containers:
            errors.append(KubectlError(f"error: unable to find container named {args.container or '*'}"))
        for c in containers:
            resources = c.setdefault("resources", {})
            for field, values in (("limits", limits), ("requests", requests)):
                if values:
                    resources[field] = {**(resources.get(field) or {}), **values}
    return _patch_each(client, targets, change, "resource requirements", errors)


_SUBCOMMANDS: dict[str, Callable[[Client, argparse.Namespace, str], str]] = {
    "image": _set_image, "env": _set_env, "resources": _set_resources}


def _set(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    sub = args.args[0] if args.args else ""
    run = _SUBCOMMANDS.get(sub)
    if run is None:
        if sub:  # cmdutil.DefaultSubCommandRun: the help, or an unknown command's usage error
            raise UsageError("set", f'unknown command "{sub}"')
        raise Printed(SET_HELP)
    return run(client, args, stdin)


SET_HELP = """\
Configure application resources.

 These commands help you make changes to existing application resources.

Available Commands:
  env              Update environment variables on a pod template
  image            Update the image of a pod template
  resources        Update resource requests/limits on objects with pod templates
  selector         Set the selector on a resource
  serviceaccount   Update the service account of a resource
  subject          Update the user, group, or service account in a role binding or cluster role binding

Usage:
  kubectl set SUBCOMMAND [options]

Use "kubectl set <command> --help" for more information about a given command.
Use "kubectl options" for a list of global command-line options (applies to all commands)."""


VERBS: dict[str, Verb] = {"set": _set}
