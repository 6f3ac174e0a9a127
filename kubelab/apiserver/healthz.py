"""/livez, /readyz and /healthz: the API server's health checks, as an operator reads them.

k8s.io/apiserver/pkg/server/healthz/healthz.go (handleRootHealth, adaptCheckToHandler) and the
checks kube-apiserver installs (pkg/server/config.go AddHealthChecks, the etcd check in
storage/storagebackend/factory, the post-start hooks of pkg/controlplane and apiextensions):

    GET /readyz?verbose          [+]ping ok ... [+]shutdown ok / readyz check passed
    GET /livez                   ok              (500 and the whole list when a check fails)
    GET /livez/etcd              ok              (one check: "internal server error: ..." on 500)
    GET /readyz?exclude=etcd     [+]etcd excluded: ok

A failed check prints "[-]<name> failed: reason withheld": the reason goes to the server's log
(here, its trace), never to the client. The post-start hooks are the ones kubelab has a part for;
kube-aggregator's (apiservice-*, autoregister-completion) are absent because kubelab serves no
aggregated APIs (docs/ARCHITECTURE.md, departures). kubelab's hooks have all run once the server
is constructed, so they report ok.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from kubelab.store import StoreError

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["CHECKS", "etcd_error", "health"]

POST_START_HOOKS = tuple("poststarthook/" + hook for hook in (
    "start-apiserver-admission-initializer", "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer", "priority-and-fairness-filter",
    "start-apiextensions-informers", "start-apiextensions-controllers", "crd-informer-synced",
    "start-system-namespaces-controller", "start-kube-apiserver-identity-lease-controller",
    "rbac/bootstrap-roles", "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer", "bootstrap-controller"))
CHECKS: Mapping[str, tuple[str, ...]] = {
    "healthz": ("ping", "log", "etcd", *POST_START_HOOKS),
    "livez": ("ping", "log", "etcd", *POST_START_HOOKS),
    "readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync", *POST_START_HOOKS,
               "shutdown"),
}


def etcd_error(server: APIServer) -> str:
    """The storage factory's check: a read of one key must answer."""
    try:
        server.store.range("/registry/health")
    except StoreError as err:
        return str(err) or type(err).__name__
    return ""


def _passes(server: APIServer) -> str:
    return ""


def _shutdown(server: APIServer) -> str:
    running: bool = server.running
    return "" if running else "process is shutting down"


_PROBES: dict[str, Callable[[APIServer], str]] = {
    "etcd": etcd_error,
    "etcd-readiness": etcd_error,
    "shutdown": _shutdown,
}


def health(server: APIServer, endpoint: str, check: str = "", verbose: bool = False,
           exclude: tuple[str, ...] = ()) -> tuple[int, str]:
    """(HTTP status, plain-text body) of GET /<endpoint>[/<check>]?verbose&exclude=..."""
    names = CHECKS[endpoint]
    if check:
        if check not in names:
            return 404, "404 page not found\n"
        reason = _PROBES.get(check, _passes)(server)
        return (500, f"internal server error: {reason}\n") if reason else (200, "ok")
    lines, failed, unknown = [], [], [name for name in exclude if name not in names]
    for name in names:
        if name in exclude:
            lines.append(f"[+]{name} excluded: ok")
        elif reason := _PROBES.get(name, _passes)(server):
            lines.append(f"[-]{name} failed: reason withheld")
            failed.append(name)
            if server.trace is not None:
                server.trace.record(server.name, "health-check-failed", name, reason=reason)
        else:
            lines.append(f"[+]{name} ok")
    if unknown:
        quoted = ",".join(f'"{name}"' for name in sorted(unknown))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    listing = "".join(line + "\n" for line in lines)
    if failed:  # http.Error: the listing, the verdict and a newline, whatever `verbose` says
        return 500, f"{listing}{endpoint} check failed\n"
    return 200, f"{listing}{endpoint} check passed\n" if verbose else "ok"
