"""kube-proxy on one node, in iptables mode (cmd/kube-proxy/app/server.go, pkg/proxy/config
for the informers; when it syncs is bounded_frequency_runner.py's).

Its informers watch Services and EndpointSlices (without the headless ones, as upstream's
label selector `!service.kubernetes.io/headless` does) and its own Node. Every change asks for
a sync; the BoundedFrequencyRunner lets syncs happen at most every min_sync_period (1 s, the
iptables default) with a burst of 2, and at least every sync_period (30 s). Each sync
renders kube-proxy's chains from the caches (proxier.py) and restores them on the node
(iptables.py), after ensuring the jumps to them (jump_chains.py; the canary chains at start).
So there is a visible lag between an endpoint going unready and traffic leaving it. A crash
stops the syncs; the node keeps its last rules, stale, until a restarted kube-proxy syncs
again.
"""

from __future__ import annotations

from typing import Any

from kubelab.client.component import ComponentContext
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.proxy.bounded_frequency_runner import BoundedFrequencyRunner
from kubelab.proxy.iptables import IPTables
from kubelab.proxy.jump_chains import ensure_canary_chains, ensure_jump_chains
from kubelab.proxy.proxier import build_endpoints_map, build_service_map, sync_proxy_rules

__all__ = ["KubeProxy"]

MIN_SYNC_PERIOD = 1.0    # KubeProxyIPTablesConfiguration.minSyncPeriod default
SYNC_PERIOD = 30.0       # syncPeriod default
BURST_SYNCS = 2          # proxier.go burstSyncs
SYNCED_POLL_PERIOD = 0.1


class KubeProxy:
    """The component: Cluster runs one per node as "kube-proxy/<node>" (system:kube-proxy).
    iptables: the node's rules, handed over as newProxyServer gives the proxier its
    utiliptables.Interface; they belong to the node and outlive a kube-proxy crash."""

    def __init__(self, ctx: ComponentContext, iptables: IPTables, *,
                 min_sync_period: float = MIN_SYNC_PERIOD, sync_period: float = SYNC_PERIOD) -> None:
        self.ctx, self.name, self.clock = ctx, ctx.name, ctx.clock
        self.node = str((ctx.node or {}).get("metadata", {}).get("name") or ctx.name.split("/")[-1])
        self.iptables = iptables
        self.min_sync_period, self.sync_period = min_sync_period, sync_period
        self.informers = SharedInformerFactory(ctx.client, ctx.clock, rand=ctx.rand, trace=ctx.trace,
                                               name=ctx.name)
        self.services = self.informers.informer_for("services")
        self.slices = self.informers.informer_for("endpointslices")
        self.nodes = self.informers.informer_for("nodes", field_selector=f"metadata.name={self.node}")
        handler = ResourceEventHandler(lambda _o: self.sync(), lambda _o, _n: self.sync(),
                                       lambda _o: self.sync())
        self.services.add_event_handler(handler)
        self.slices.add_event_handler(handler)
        self.syncs = 0
        self.last_sync: float | None = None
        self.sync_runner = BoundedFrequencyRunner(ctx.clock, "sync-runner", self.apply_and_restore,
                                                  min_sync_period, sync_period, BURST_SYNCS)
        self.running = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.running = True
        ensure_canary_chains(self.iptables)
        self.sync_runner.loop()
        self.informers.start()
        self._wait_for_sync()

    def stop(self) -> None:
        """A crash: caches and timers are gone; the node's iptables keep the last rules."""
        self.running = False
        self.sync_runner.stop()
        self.informers.stop()

    def _wait_for_sync(self) -> None:
        if not self.running:
            return
        if not (self.services.has_synced() and self.slices.has_synced()):
            self.clock.call_later(SYNCED_POLL_PERIOD, self._wait_for_sync)
            return
        self.sync()

    # ------------------------------------------------------------------ the sync

    def sync(self) -> None:
        """Proxier.Sync: ask the runner for a sync, once the caches have synced."""
        if not self.running or not (self.services.has_synced() and self.slices.has_synced()):
            return
        self.sync_runner.run()

    def apply_and_restore(self) -> None:
        """What the runner runs: the rest of syncProxyRules around proxier.sync_proxy_rules. The
        maps' Update first (kubelab rebuilds svcPortMap and endpointsMap from the caches instead
        of applying the changes tracked since the last sync), the jump chains (every sync is a full
one), then iptables-restore."""
        services = [s for s in self.services.lister.list() if not _headless(s)]
        slices = [s for s in self.slices.lister.list()
                  if "service.kubernetes.io/headless" not in (s["metadata"].get("labels") or {})]
        ensure_jump_chains(self.iptables)
        text = sync_proxy_rules(build_service_map(services), build_endpoints_map(slices), self.node,
                                existing_nat_chains=self.iptables.chains("nat"))
        self.iptables.restore(text, self.clock.now)
        self.syncs += 1
        self.last_sync = self.clock.now
        self.ctx.trace.record(self.name, "sync-proxy-rules", self.node,
                              services=len(services), slices=len(slices))

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<KubeProxy {self.node} {state} syncs={self.syncs}>"


def _headless(svc: Any) -> bool:
    return (svc.get("spec") or {}).get("clusterIP") == "None"
