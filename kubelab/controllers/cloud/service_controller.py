"""The cloud-controller-manager's service controller (kubernetes/cloud-provider
controllers/service/controller.go: syncService, syncLoadBalancerIfNeeded, nodeSyncService).

- A Service that wants a load balancer (type LoadBalancer, no loadBalancerClass) first gets the
  finalizer `service.kubernetes.io/load-balancer-cleanup`, then the cloud ensures a balancer
  in front of its NodePorts on the cluster's nodes, and status.loadBalancer.ingress gets the
  balancer's IP. Events: EnsuringLoadBalancer, EnsuredLoadBalancer.
- A Service that no longer wants one (its type changed, or it is being deleted) has its balancer
  deleted, its status cleared and the finalizer removed: DeletingLoadBalancer,
  DeletedLoadBalancer. The finalizer is what keeps a deleted Service until then.
- When the set of nodes changes, every balancer's hosts are updated: UpdatedLoadBalancer.
  Nodes labelled node.kubernetes.io/exclude-from-external-load-balancers are left out; since
  StableLoadBalancerNodeSet (GA in 1.30), a NotReady node stays in.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy, split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.cloud.cloud import FakeCloud

__all__ = ["CloudControllerManager", "ServiceController"]

FINALIZER = "service.kubernetes.io/load-balancer-cleanup"
EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers"


def wants_load_balancer(svc: Object) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("type") == "LoadBalancer" and not spec.get("loadBalancerClass")


def load_balancer_name(svc: Object) -> str:
    """cloudprovider.DefaultLoadBalancerName: "a" + the uid without dashes, at most 32."""
    return ("a" + str(svc["metadata"].get("uid", "")).replace("-", ""))[:32]


class ServiceController:
    NAME = "service-lb-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, cloud: FakeCloud) -> None:
        self.ctx, self.client, self.cloud = ctx, ctx.client, cloud
        self.recorder = ctx.recorder("service-controller")
        self.controller = Controller(self.NAME, self.sync_service, ctx.clock, trace=ctx.trace,
                                     client=ctx.client, cost=ctx.sync_cost)  # ConcurrentServiceSyncs 1
        services, nodes = informers.informer_for("services"), informers.informer_for("nodes")
        self.service_lister, self.node_lister = services.lister, nodes.lister
        services.add_event_handler(self.controller.handler())
        nodes.add_event_handler(ResourceEventHandler(lambda _n: self.node_sync(),
                                                     self._node_update, lambda _n: self.node_sync()))
        self.hosts: list[str] = []

    def run(self) -> None:
        self.controller.run()
        self.node_sync()

    def stop(self) -> None:
        self.controller.stop()

    def _node_update(self, old: Object, cur: Object) -> None:
        if (old["metadata"].get("labels") or {}) != (cur["metadata"].get("labels") or {}):
            self.node_sync()

    def ready_hosts(self) -> list[str]:
        return sorted(n["metadata"]["name"] for n in self.node_lister.list()
                      if EXCLUDE_LABEL not in (n["metadata"].get("labels") or {}))

    def node_sync(self) -> None:
        """nodeSyncService: the node set changed, every balancer gets the new hosts."""
        hosts = self.ready_hosts()
        if hosts == self.hosts:
            return
        self.hosts = hosts
        for svc in self.service_lister.list():
            if wants_load_balancer(svc) and load_balancer_name(svc) in self.cloud.balancers:
                self.cloud.update_load_balancer(load_balancer_name(svc), hosts)
                self.recorder.event(svc, "Normal", "UpdatedLoadBalancer",
                                    "Updated load balancer with new hosts")

    def sync_service(self, key: str) -> None:
        split_key(key)  # a malformed key raises here, as SplitMetaNamespaceKey fails upstream
        svc, exists = self.service_lister.indexer.get_by_key(key)
        if not exists:
            return  # the finalizer kept it until its balancer was gone
        if wants_load_balancer(svc) and not svc["metadata"].get("deletionTimestamp"):
            self._ensure(svc)
        elif FINALIZER in (svc["metadata"].get("finalizers") or []):
            self._delete(svc)

    def _ensure(self, svc: Object) -> None:
        svc = deep_copy(svc)
        if FINALIZER not in (svc["metadata"].get("finalizers") or []):
            svc["metadata"]["finalizers"] = [*(svc["metadata"].get("finalizers") or []), FINALIZER]
            svc = self.client.update(svc)
        self.recorder.event(svc, "Normal", "EnsuringLoadBalancer", "Ensuring load balancer")
        ports = [int(p["nodePort"]) for p in svc["spec"].get("ports") or [] if p.get("nodePort")]
        lb = self.cloud.ensure_load_balancer(load_balancer_name(svc), ports, self.ready_hosts())
        status = {"loadBalancer": {"ingress": [{"ip": lb.ip, "ipMode": "VIP"}]}}
        if svc.get("status") != status:
            svc["status"] = status
            self.client.update_status(svc)
        self.recorder.event(svc, "Normal", "EnsuredLoadBalancer", "Ensured load balancer")

    def _delete(self, svc: Object) -> None:
        svc = deep_copy(svc)
        self.recorder.event(svc, "Normal", "DeletingLoadBalancer", "Deleting load balancer")
        self.cloud.ensure_load_balancer_deleted(load_balancer_name(svc))
        if (svc.get("status") or {}).get("loadBalancer", {}).get("ingress"):
            svc["status"] = {"loadBalancer": {}}
            svc = self.client.update_status(svc)
        svc["metadata"]["finalizers"] = [f for f in svc["metadata"].get("finalizers") or [] if f != FINALIZER]
        try:
            self.client.update(svc)
        except ApiError as err:
            if err.code != 404:
                raise
        self.recorder.event(svc, "Normal", "DeletedLoadBalancer", "Deleted load balancer")


class CloudControllerManager:
    """The component: run by c.add_cloud_controller_manager() as "cloud-controller-manager"
    (system:cloud-controller-manager). cloud: its cloud provider, as the cloud-controller-manager's
    main hands cloudprovider.Interface to each controller's init function."""

    def __init__(self, ctx: ComponentContext, cloud: FakeCloud) -> None:
        self.ctx, self.name, self.cloud = ctx, ctx.name, cloud
        self.informers = SharedInformerFactory(ctx.client, ctx.clock, rand=ctx.rand, trace=ctx.trace,
                                               name=ctx.name)
        self.service_controller = ServiceController(ctx, self.informers, cloud)
        self.running = False

    def start(self) -> None:
        self.informers.start()
        self._wait()

    def _wait(self) -> None:
        if not self.informers.has_synced():
            self.ctx.clock.call_later(0.1, self._wait)
            return
        self.running = True
        self.service_controller.run()

    def stop(self) -> None:
        self.service_controller.stop()
        self.informers.stop()
        self.running = False

    def __repr__(self) -> str:
        return f"<CloudControllerManager {'running' if self.running else 'waiting'}: " \
               f"{len(self.cloud.balancers)} load balancer(s)>"

