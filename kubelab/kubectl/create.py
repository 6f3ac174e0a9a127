"""`kubectl apply -f`, `create -f`, `create namespace|deployment|configmap|cronjob|job|quota` and `run`.

Follows k8s.io/kubectl pkg/cmd/apply/apply.go (client-side apply in kubelab/client/apply.py;
--server-side sends the object as an apply patch), pkg/cmd/create/create.go (NameFromCommandArgs),
create_namespace.go, create_deployment.go (buildPodSpec: the container is named after the
image), create_configmap.go (--from-literal), create_cronjob.go, create_job.go (--from=cronjob/X)
and pkg/cmd/run/run.go, with their usage errors; create_serviceaccount.go and create_token.go
(TokenOptions.Validate's errors; the token printed, or the TokenRequest with -o json|yaml);
create_quota.go (`create quota NAME --hard=pods=2,requests.cpu=1 --scopes=BestEffort`).
`create configmap` and `create deployment` say what the server refused as their Run does:
`error: failed to create configmap: configmaps "x" already exists`.
"""

from __future__ import annotations

import argparse

from kubelab.api import Object
from kubelab.api.cron import CronError, parse_duration
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.quantity import parse_quantity
from kubelab.api.yamlio import load_objects
from kubelab.client.apply import apply_objects
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, UsageError, Verb, check_errors, expect_args, prefix
from kubelab.kubectl.printers import to_json, to_yaml

__all__ = ["VERBS"]

def _from_files(client: Client, args: argparse.Namespace, stdin: str) -> str:
    if not args.filename:
        raise KubectlError("must specify one of -f and -k")
    expect_args(args, 0)
    source = stdin if args.filename == "-" else args.filename
    objects = load_objects(source)
    if not objects:
        raise KubectlError(f"no objects passed to {args.verb}")
    for obj in objects:
        obj.setdefault("metadata", {}).setdefault("namespace", args.namespace)
    if args.verb == "apply" and args.server_side:
        return _server_side_apply(client, args, objects)
    if args.verb == "apply" and args.force_conflicts:
        raise KubectlError("--force-conflicts only works with --server-side")
    if args.verb == "apply":
        warnings: list[str] = []  # on stderr, before the lines
        lines = apply_objects(client, objects, warnings.append)
        return "\n".join([*warnings, *lines])
    return "\n".join(_created(client, obj, args.namespace) for obj in objects)


SSA_CONFLICT_HELP = """
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts"""


def _server_side_apply(client: Client, args: argparse.Namespace, objects: list[Object]) -> str:
    """apply.go's ServerSideApply: each object sent whole as an apply patch under the field
    manager (`kubectl` unless --field-manager), --force-conflicts taking fields from others;
    a conflict is explained as kubectl explains it."""
    lines: list[str] = []
    for obj in objects:
        info, meta = client.resource_for(obj), obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or args.namespace) if info.namespaced else ""
        try:
            applied = client.patch(info.resource, str(meta.get("name", "")), obj, namespace,
                                   patch_type="apply", field_manager=args.field_manager,
                                   force=args.force_conflicts)
        except ApiError as err:
            if err.code != 409:
                check_errors(lines, [err])
            check_errors(lines, [KubectlError(err.message + SSA_CONFLICT_HELP)])
            raise
        lines.append(f"{prefix(info)}/{applied['metadata']['name']} serverside-applied")
    return "\n".join(lines)


def _created(client: Client, obj: Object, namespace: str, what: str = "") -> str:
    """Create obj; `what` names it in the error the way create_<what>.go's Run wraps it."""
    try:
        created = client.create(obj, namespace)
    except ApiError as err:
        if not what or err.code == 0:
            raise
        raise KubectlError(f"failed to create {what}: {err.message}") from None
    return f"{prefix(client.resource_for(created))}/{created['metadata']['name']} created"


def _name(args: argparse.Namespace, path: str) -> str:
    """NameFromCommandArgs: exactly one NAME after the subcommand."""
    names = args.args[1:]
    if len(names) != 1:
        raise UsageError(path, f"exactly one NAME is required, got {len(names)}")
    return str(names[0])


def _create(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if args.filename or not args.args:
        return _from_files(client, args, stdin)
    sub = args.args[0]
    if sub in ("namespace", "ns"):
        name = _name(args, "create namespace")
        return _created(client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, "")
    if sub in ("deployment", "deploy"):
        return _created(client, _deployment(args), args.namespace, "deployment")
    if sub in ("configmap", "cm"):
        name = _name(args, "create configmap")
        data: dict[str, str] = {}
        for literal in args.from_literal:
            key, sep, value = literal.partition("=")
            if not sep or not key:
                raise KubectlError(f"invalid literal source {literal}, expected key=value")
            if key in data:
                raise KubectlError(f'cannot add key "{key}", another key by that name already exists '
                                   f"in Data for ConfigMap \"{name}\"")
            data[key] = value
        cm: Object = {"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": name, "namespace": args.namespace}}
        if data:
            cm["data"] = data
        return _created(client, cm, args.namespace, "configmap")
    # --- i31-cron-pdb ---
    if sub in ("cronjob", "cj"):
        return _created(client, _cron_job(args), args.namespace)
    if sub == "job":
        return _created(client, _job(client, args), args.namespace)
    # --- sa ---
    if sub in ("serviceaccount", "sa"):
        name = _name(args, "create serviceaccount")
        return _created(client, {"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": name, "namespace": args.namespace}},
                        args.namespace, "serviceaccount")
    if sub == "token":
        return create_token(client, args)
    if sub in ("quota", "resourcequota"):
        return _created(client, _quota(args), args.namespace, "quota")
    # Not a subcommand: create itself, whose ValidateArgs refuses any argument.
    raise UsageError("create", f"Unexpected args: [{' '.join(args.args)}]")


def _deployment(args: argparse.Namespace) -> Object:
    name = _name(args, "create deployment")
    if not args.image:
        raise KubectlError('required flag(s) "image" not set')
    labels = {"app": name}
    containers = []
    for image in args.image:
        short = image.split("/")[-1].split(":")[0].split("@")[0]
        # Upstream adds a random suffix to a name it had to change; kubectl here has no
        # random source of its own, so the name stays as sanitized.
        containers.append({"name": short.replace("_", "-").replace(".", "-"), "image": image})
    if args.port is not None and args.port >= 0:
        containers[0]["ports"] = [{"containerPort": args.port}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": args.namespace, "labels": labels},
            "spec": {"replicas": 1 if args.replicas is None else args.replicas,
                     "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}}


def _quota(args: argparse.Namespace) -> Object:
    """create_quota.go: --hard through populateResourceListV1, --scopes through parseScopes
    (not checked here: the API server does)."""
    name = _name(args, "create quota")
    spec: Object = {}
    if args.hard:
        hard: dict[str, str] = {}
        for statement in args.hard.split(","):
            parts = statement.split("=")
            if len(parts) != 2:
                raise KubectlError(f"Invalid argument syntax {statement}, expected <resource>=<value>")
            try:
                hard[parts[0]] = str(parse_quantity(parts[1]))
            except ParseError as err:  # resource.ParseQuantity's own error, bare
                raise KubectlError(str(err).partition("': ")[2] or str(err)) from None
        spec["hard"] = hard
    if args.scopes:
        scopes = args.scopes.split(",")
        if "" in scopes:
            raise KubectlError('invalid resource quota scope ""')
        spec["scopes"] = scopes
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": name, "namespace": args.namespace}, "spec": spec}


def _apply(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    return _from_files(client, args, stdin)


def _run(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError("NAME is required for run")
    if args.command and len(args.args) < 2:
        raise KubectlError("--command requires that at least one argument be supplied")
    if not args.image:
        raise KubectlError("--image is required")
    name = args.args[0]
    labels = dict(kv.split("=", 1) for kv in args.labels.split(",") if kv) or {"run": name}
    container: Object = {"name": name, "image": args.image[-1]}
    if args.args[1:]:  # kubectl run NAME --image=I -- ARGS: the container's arguments
        container["command" if args.command else "args"] = args.args[1:]
    if args.env:
        container["env"] = [dict(zip(("name", "value"), kv.split("=", 1), strict=False))
                            for kv in args.env]
    if args.stdin:  # -i: the container keeps its stdin open (kubectl run -it ... -- sh)
        container.update(stdin=True, stdinOnce=True)
    if args.tty:
        container["tty"] = True
    restart = args.restart or "Always"  # run's default; create job|cronjob default theirs
    if restart not in ("Always", "OnFailure", "Never"):
        raise KubectlError(f"invalid restart policy: {restart}")
    if args.port is not None:
        container["ports"] = [{"containerPort": args.port}]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": args.namespace, "labels": labels},
           "spec": {"containers": [container], "restartPolicy": restart}}
    client.create(pod, args.namespace)
    return f"pod/{name} created"


# --- i31-cron-pdb ---
def _name_and_command(args: argparse.Namespace, path: str) -> tuple[str, list[str]]:
    """NAME, then the container's command after `--` (kubectl's ArgsLenAtDash)."""
    if len(args.args) < 2:
        raise UsageError(path, "NAME is required")
    return str(args.args[1]), [str(a) for a in args.args[2:]]


def _cron_job(args: argparse.Namespace) -> Object:
    """create_cronjob.go: Validate (image, schedule) and createCronJob."""
    name, command = _name_and_command(args, "create cronjob")
    if not args.image:
        raise KubectlError("--image must be specified")
    if not args.schedule:
        raise KubectlError("--schedule must be specified")
    container: Object = {"name": name, "image": args.image[-1]}
    if command:
        container["command"] = command
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": args.namespace},
            "spec": {"schedule": args.schedule, "jobTemplate": {
                "metadata": {"name": name},
                "spec": {"template": {"spec": {"containers": [container],
                                               "restartPolicy": args.restart or "OnFailure"}}}}}}


def _job(client: Client, args: argparse.Namespace) -> Object:
    """create_job.go: a Job from --image, or from a CronJob's template with --from=cronjob/NAME
    (createJobFromCronJob: the annotation cronjob.kubernetes.io/instantiate=manual and the
    CronJob as its controller)."""
    name, command = _name_and_command(args, "create job")
    if bool(args.image) == bool(args.from_):
        raise KubectlError("either --image or --from must be specified")
    if args.image:
        container: Object = {"name": name, "image": args.image[-1]}
        if command:
            container["command"] = command
        return {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": name, "namespace": args.namespace},
                "spec": {"template": {"spec": {"containers": [container],
                                               "restartPolicy": args.restart or "Never"}}}}
    if command:
        raise KubectlError("cannot specify --from and command")
    kind, sep, source = str(args.from_).partition("/")
    info = client.resource(kind) if sep and source else None
    if info is None:
        raise KubectlError(f'from must be of the form <resource>/<name>, got "{args.from_}"')
    cron_job = client.get(info.resource, source, args.namespace)
    if info.resource != "cronjobs":
        raise KubectlError(f"unknown object type *v1.{info.kind}")
    template = (cron_job.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    meta: Object = {"name": name, "namespace": args.namespace,
                    "annotations": {"cronjob.kubernetes.io/instantiate": "manual",
                                    **(template_meta.get("annotations") or {})},
                    "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                         "name": cron_job["metadata"]["name"],
                                         "uid": cron_job["metadata"]["uid"], "controller": True}]}
    if template_meta.get("labels"):
        meta["labels"] = dict(template_meta["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": dict(template.get("spec") or {})}


# --- sa --- `kubectl create token` (pkg/cmd/create/create_token.go)
BOUND_OBJECT_KINDS = {"Node": "v1", "Pod": "v1", "Secret": "v1"}


def create_token(client: Client, args: argparse.Namespace) -> str:
    """TokenOptions: Validate, then Run: a TokenRequest for the account; the token is printed
    (or the whole TokenRequest, with -o)."""
    name = _name(args, "create token")
    try:
        duration = parse_duration(args.duration) if args.duration else 0.0
    except CronError as err:
        raise KubectlError(f'invalid argument "{args.duration}" for "--duration" flag: {err}') from None
    if duration < 0:
        raise KubectlError("--duration must be greater than or equal to 0")
    if duration != int(duration):
        raise KubectlError("--duration cannot be expressed in units less than seconds")
    if any(not aud for aud in args.audience):
        raise KubectlError("--audience must not be an empty string")
    kind, bound_name, bound_uid = args.bound_object_kind, args.bound_object_name, args.bound_object_uid
    if not kind:
        if bound_name:
            raise KubectlError("--bound-object-name can only be set if --bound-object-kind is provided")
        if bound_uid:
            raise KubectlError("--bound-object-uid can only be set if --bound-object-kind is provided")
    else:
        if kind not in BOUND_OBJECT_KINDS:
            raise KubectlError(f"supported --bound-object-kind values are {', '.join(BOUND_OBJECT_KINDS)}")
        if not bound_name:
            raise KubectlError("--bound-object-name is required if --bound-object-kind is provided")
    spec: Object = {}
    if args.audience:
        spec["audiences"] = list(args.audience)
    if duration:
        spec["expirationSeconds"] = int(duration)
    if kind:
        spec["boundObjectRef"] = {"kind": kind, "apiVersion": BOUND_OBJECT_KINDS[kind],
                                  "name": bound_name, **({"uid": bound_uid} if bound_uid else {})}
    answer = client.create_token(name, args.namespace, {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
    if args.output in ("json", "yaml"):
        return (to_json if args.output == "json" else to_yaml)(answer).rstrip("\n")
    if args.output:
        raise KubectlError(f'unable to match a printer suitable for the output format "{args.output}", '
                           "allowed formats are: json,yaml")
    return str((answer.get("status") or {}).get("token", ""))


VERBS: dict[str, Verb] = {"apply": _apply, "create": _create, "run": _run}
