"""`kubectl apply -f`, `create -f`, `create namespace|deployment|configmap|cronjob|job` and `run`.

Follows k8s.io/kubectl pkg/cmd/apply/apply.go, pkg/cmd/create/create.go (NameFromCommandArgs),
create_namespace.go, create_deployment.go (buildPodSpec: the container is named after the
image), create_configmap.go (--from-literal), create_cronjob.go, create_job.go (--from=cronjob/X)
and pkg/cmd/run/run.go, with their usage errors.
`create configmap` and `create deployment` say what the server refused as their Run does:
`error: failed to create configmap: configmaps "x" already exists`.
"""

from __future__ import annotations

import argparse

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.yamlio import load_objects
from kubelab.client.apply import apply_objects
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, UsageError, Verb, expect_args, prefix

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
    if args.verb == "apply":
        return "\n".join(apply_objects(client, objects))
    return "\n".join(_created(client, obj, args.namespace) for obj in objects)


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


VERBS: dict[str, Verb] = {"apply": _apply, "create": _create, "run": _run}
