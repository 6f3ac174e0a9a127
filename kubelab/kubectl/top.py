"""`kubectl top node|pod`: usage from the resource metrics API (metrics.k8s.io/v1beta1).

Follows k8s.io/kubectl pkg/cmd/top/top_node.go and top_pod.go (the checks, the "metrics not
available yet" rule for pods younger than two minutes) and pkg/metricsutil/metrics_printer.go
(the columns, CPU in millicores, memory in Mi, percentages of the node's allocatable, nodes
without metrics as <unknown>). The printer is a tabwriter with padding 3 that ends every cell
with a tab, so each line is padded to the end as the real kubectl pads it.

The metrics come from metrics-server, which kind does not install: `Cluster(metrics_server=True)`
or `kubelab serve` installs it (kubelab/cluster/metrics_server.py).
"""

from __future__ import annotations

import argparse
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import parse_time
from kubelab.api.quantity import parse_quantity
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError

__all__ = ["NODE_COLUMNS", "POD_COLUMNS", "top"]

NODE_COLUMNS = ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
POD_COLUMNS = ["NAME", "CPU(cores)", "MEMORY(bytes)"]
METRICS_CREATION_DELAY = 120.0  # top_pod.go metricsCreationDelay
PADDING = 3                     # printers.GetNewTabWriter


def _metrics(client: Client, verb: str, resource: str, namespace: str = "", name: str = "",
             label_selector: str = "") -> Object:
    try:
        return client.metrics(verb, resource, namespace, name, label_selector=label_selector)
    except ApiError as err:
        if err.code == 404 and err.message == "the server could not find the requested resource":
            # discovery has no metrics.k8s.io group (SupportedMetricsAPIVersionAvailable)
            raise KubectlError("Metrics API not available") from None
        raise


def top(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError('You must specify a type of resource: "node" or "pod"\n'
                           "See 'kubectl top -h' for help and examples")
    what, rest = args.args[0], args.args[1:]
    if what in ("node", "nodes", "no"):
        return _top_node(client, args, rest)
    if what in ("pod", "pods", "po"):
        return _top_pod(client, args, rest, now)
    raise KubectlError(f'unknown command "{what}" for "kubectl top"')


def _top_node(client: Client, args: argparse.Namespace, names: list[str]) -> str:
    name = names[0] if names else ""
    if name and args.selector:
        raise KubectlError("only one of NAME or --selector can be provided")
    if name:
        metrics = [_metrics(client, "get", "nodes", name=name)]
        nodes = [client.get("nodes", name, "")]
    else:
        metrics = _metrics(client, "list", "nodes", label_selector=args.selector)["items"]
        nodes = client.list("nodes", label_selector=args.selector)["items"]
    if not metrics:
        raise KubectlError("metrics not available yet")
    available = {n["metadata"]["name"]: (n.get("status") or {}).get("allocatable") or {}
                 for n in nodes}
    metrics = _sorted(metrics, args.sort_by)
    rows: list[list[str]] = [] if args.no_headers else [NODE_COLUMNS]
    for m in metrics:
        node = m["metadata"]["name"]
        rows.append([node, *_usage(m.get("usage") or {}, available.pop(node, None))])
    rows += [[node, *["<unknown>"] * 4] for node in available]  # nodes without metrics
    return _tabbed(rows)


def _top_pod(client: Client, args: argparse.Namespace, names: list[str], now: float) -> str:
    name = names[0] if names else ""
    if name and args.selector:
        raise KubectlError("only one of NAME or --selector can be provided")
    namespace = "" if args.all_namespaces else args.namespace
    if name:
        metrics = [_metrics(client, "get", "pods", namespace, name)]
    else:
        metrics = _metrics(client, "list", "pods", namespace,
                           label_selector=args.selector)["items"]
    if not metrics:
        _verify_empty_metrics(client, args, name, namespace, now)
        # printed on stderr, and kubectl exits 0
        return "No resources found" if args.all_namespaces else \
            f"No resources found in {args.namespace} namespace."
    containers = bool(getattr(args, "containers", False))
    header = (["NAMESPACE"] if args.all_namespaces else []) + (["POD"] if containers else [])
    rows: list[list[str]] = [] if args.no_headers else [header + POD_COLUMNS]
    for m in _sorted(metrics, args.sort_by, by_namespace=args.all_namespaces):
        meta = m["metadata"]
        lead = [meta.get("namespace", "")] if args.all_namespaces else []
        if containers:
            rows += [[*lead, meta["name"], c["name"], *_usage(c.get("usage") or {})]
                     for c in _sorted(m.get("containers") or [], args.sort_by)]
        else:
            rows.append([*lead, meta["name"], *_usage(_pod_usage(m))])
    return _tabbed(rows)


def _verify_empty_metrics(client: Client, args: argparse.Namespace, name: str, namespace: str,
                          now: float) -> None:
    """verifyEmptyMetrics: no metrics for pods younger than two minutes is "not yet"."""
    pods = [client.get("pods", name, namespace)] if name else \
        client.list("pods", namespace, label_selector=args.selector)["items"]
    if not pods:
        return
    for pod in pods:
        meta = pod["metadata"]
        age = now - parse_time(meta.get("creationTimestamp", ""))
        if age > METRICS_CREATION_DELAY:
            raise KubectlError(f"Metrics not available for pod {meta.get('namespace')}/"
                               f"{meta['name']}, age: {_go_duration(age)}")
    raise KubectlError("metrics not available yet")


def _pod_usage(m: Object) -> dict[str, Any]:
    cpu = sum(parse_quantity((c.get("usage") or {}).get("cpu", "0")).as_decimal()
              for c in m.get("containers") or [])
    memory = sum(parse_quantity((c.get("usage") or {}).get("memory", "0")).as_decimal()
                 for c in m.get("containers") or [])
    return {"cpu": str(cpu), "memory": str(memory)}


def _usage(usage: dict[str, Any], available: dict[str, Any] | None = None) -> list[str]:
    """printAllResourceUsages for cpu and memory: the value, then its share of available."""
    cells = []
    for res in ("cpu", "memory"):
        q = parse_quantity(usage.get(res, "0"))
        cells.append(f"{q.milli_value()}m" if res == "cpu" else f"{q.value() // (1024 * 1024)}Mi")
        if available is not None and res in available:
            total = parse_quantity(available[res]).milli_value()
            fraction = q.milli_value() / total * 100 if total else 0.0
            cells.append(f"{int(fraction)}%")
    return cells


def _sorted(items: list[Object], sort_by: str, *, by_namespace: bool = False) -> list[Object]:
    """The metrics sorters: by cpu or memory, largest first; otherwise as listed (with -A, by
    namespace then name)."""
    if sort_by in ("cpu", "memory"):
        def key(m: Object) -> Any:
            usage = m.get("usage") if "usage" in m else _pod_usage(m)
            return parse_quantity((usage or {}).get(sort_by, "0")).as_decimal()
        return sorted(items, key=key, reverse=True)
    if sort_by:
        raise KubectlError(f"--sort-by accepts only cpu or memory, got {sort_by!r}")
    if by_namespace:
        return sorted(items, key=lambda m: (m["metadata"].get("namespace", ""), m["metadata"]["name"]))
    return items


def _tabbed(rows: list[list[str]]) -> str:
    """tabwriter (padding 3) over cells that each end with a tab."""
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(map(len, rows)))]
    return "\n".join("".join(cell.ljust(widths[i] + PADDING) for i, cell in enumerate(r))
                     for r in rows) + "\n"


def _go_duration(seconds: float) -> str:
    """time.Duration.String for whole and fractional seconds: 2m10s, 1h0m5s."""
    ns = round(seconds * 1e9)
    h, rem = divmod(ns, 3600 * 10**9)
    m, rem = divmod(rem, 60 * 10**9)
    s = f"{rem / 1e9:.9f}".rstrip("0").rstrip(".") + "s"
    return (f"{h}h{m}m" if h else f"{m}m" if m else "") + s
