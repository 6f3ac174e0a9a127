"""`kubelab serve`: a cluster on the wall clock, its API on https://127.0.0.1:PORT, until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

from kubelab.api.errors import ApiError
from kubelab.api.meta import set_epoch
from kubelab.serve.kubeconfig import DEFAULT_PATH
from kubelab.serve.server import Server

__all__ = ["add_parser", "serve_command"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = sub.add_parser("serve", help="serve a cluster's Kubernetes API over HTTPS for real clients")
    s.add_argument("--nodes", type=int, default=3,
                   help="how many worker nodes (default 3), beside the control-plane node")
    s.add_argument("--seed", type=int, default=0, help="the cluster's seed (default 0)")
    s.add_argument("--port", type=int, default=6443, help="port on 127.0.0.1 (0: any free one)")
    s.add_argument("--kubeconfig", default=str(DEFAULT_PATH), metavar="PATH",
                   help=f"where to write the kubeconfig (default {DEFAULT_PATH})")
    s.add_argument("-f", "--filename", action="append", default=[], metavar="FILE",
                   help="apply this manifest at start (repeatable)")
    s.add_argument("--speed", type=float, default=1.0, help="virtual seconds per real second")
    s.add_argument("--no-anatomy", action="store_true",
                   help="no control-plane node, static pods or add-ons (Cluster(anatomy=False))")
    s.add_argument("--no-metrics-server", action="store_true",
                   help="without the metrics-server add-on (kubectl top, HPAs); kind has none")
    s.add_argument("--enable-priority-and-fairness", action="store_true",
                   help="API Priority and Fairness, as kube-apiserver's flag (kubelab: off by default)")
    s.add_argument("--epoch", type=_instant, default=None, metavar="RFC3339",
                   help="the instant the cluster's time starts at (default: now, so real clients "
                        "read ages in seconds; 2025-01-01T00:00:00Z repeats in-process timestamps)")


def _instant(text: str) -> datetime:
    """--epoch's RFC 3339 time, such as 2025-01-01T00:00:00Z."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an RFC 3339 time") from None
    if when.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone (end it with Z)")
    return when


async def _serve(server: Server, kubeconfig: str) -> None:
    url = server.start()
    path = server.write_kubeconfig(kubeconfig)
    print(f"kubelab: serving the Kubernetes API on {url}", flush=True)
    print(f"kubeconfig: {path} (contexts kubelab and kubelab-viewer)", flush=True)
    print(f"export KUBECONFIG={path}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    print("kubelab: stopped", flush=True)


def serve_command(args: argparse.Namespace) -> int:
    from kubelab.cluster import Cluster  # the wiring imports everything: only when serving

    # As kind builds it: a control-plane node with the control plane as static pods, and the
    # kube-proxy, kindnet and coredns add-ons (kubelab/cluster/anatomy.py).
    # metrics-server is installed too, as `kubectl apply -f components.yaml` would add it.
    # The one wall-clock read of serve's cluster: its time 0 is now (or --epoch). The simulation
    # stays deterministic from there; the pacer then keeps it in step with the wall clock.
    set_epoch(args.epoch or datetime.now(UTC))
    cluster = Cluster(nodes=args.nodes, seed=args.seed, anatomy=not args.no_anatomy,
                      metrics_server=not args.no_metrics_server)
    if args.enable_priority_and_fairness:
        cluster.apiserver.enable_priority_and_fairness()
    for name in args.filename:
        try:
            cluster.apply(Path(name).read_text() if name != "-" else sys.stdin.read())
        except (OSError, ApiError) as err:
            print(f"kubelab serve: {name}: {err}", file=sys.stderr)
            return 1
    server = Server(cluster, port=args.port, speed=args.speed)
    try:
        asyncio.run(_serve(server, args.kubeconfig))
    except OSError as err:  # the port is taken, say
        print(f"kubelab serve: {err}", file=sys.stderr)
        return 1
    return 0
