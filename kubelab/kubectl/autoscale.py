"""`kubectl autoscale deployment web --min=1 --max=10 --cpu=50%`: create an autoscaling/v2
HorizontalPodAutoscaler for a workload (k8s.io/kubectl pkg/cmd/autoscale/autoscale.go: Validate,
createHorizontalPodAutoscalerV2, the metrics of --cpu and --memory).

--cpu and --memory take a percentage of the request (a Utilization target) or a quantity (an
AverageValue target; a CPU number without a unit is millicores); the deprecated --cpu-percent is
still read. Without either, the server's default applies (80% CPU).
"""

from __future__ import annotations

import argparse

from kubelab.api import Object
from kubelab.api.errors import ParseError
from kubelab.api.quantity import parse_quantity
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, get_object, prefix, resources

__all__ = ["autoscale"]

SCALABLE = ("deployments", "replicasets", "statefulsets", "replicationcontrollers")


def _target(resource: str, flag: str, value: str) -> Object:
    """The metric for --cpu or --memory."""
    if value.endswith("%"):
        try:
            percent = int(value[:-1])
        except ValueError:
            raise KubectlError(f"invalid --{flag} value {value!r}: a percentage must be an integer") \
                from None
        target: Object = {"type": "Utilization", "averageUtilization": percent}
    else:
        text = f"{value}m" if flag == "cpu" and value.isdigit() else value
        try:
            parse_quantity(text)
        except ParseError as err:
            raise KubectlError(f"invalid --{flag} value {value!r}: {err}") from None
        target = {"type": "AverageValue", "averageValue": text}
    return {"type": "Resource", "resource": {"name": resource, "target": target}}


def autoscale(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError("You must provide one or more resources by argument or filename.")
    infos, names = resources(client, args.args[0])
    names += args.args[1:]
    if not names:
        raise KubectlError("resource(s) were provided, but no name was specified")
    maximum = -1 if args.max is None else args.max
    minimum = -1 if args.min is None else args.min
    if maximum < 1:  # AutoscaleOptions.Validate
        raise KubectlError(f"--max=MAXPODS is required and must be at least 1, max: {maximum}")
    if maximum < minimum:
        raise KubectlError(f"--max=MAXPODS must be larger or equal to --min=MINPODS, max: "
                           f"{maximum}, min: {minimum}")
    info = infos[0]
    if info.resource not in SCALABLE:
        raise KubectlError(f"cannot autoscale a {info.kind}: {info.kind} is not scalable")
    lines = []
    for name in names:
        obj = get_object(client, info, name, args.namespace)
        metrics = []
        cpu = args.cpu or (f"{args.cpu_percent}%" if args.cpu_percent is not None and
                           args.cpu_percent >= 0 else "")
        if cpu:
            metrics.append(_target("cpu", "cpu", cpu))
        if args.memory:
            metrics.append(_target("memory", "memory", args.memory))
        hpa_name = args.name or name
        spec: Object = {"scaleTargetRef": {"apiVersion": obj.get("apiVersion", info.api_version),
                                           "kind": obj.get("kind", info.kind), "name": name},
                        "maxReplicas": maximum}
        if minimum > 0:
            spec["minReplicas"] = minimum
        if metrics:
            spec["metrics"] = metrics
        client.create({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                       "metadata": {"name": hpa_name, "namespace": args.namespace}, "spec": spec},
                      args.namespace)
        lines.append(f"{prefix(client.resource('horizontalpodautoscalers'))}/{hpa_name} autoscaled")
    return "\n".join(lines)
