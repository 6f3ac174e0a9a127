"""The control-plane components a Cluster can run, each by its descriptor (as
kube-controller-manager registers its controllers, cmd/kube-controller-manager/app/
controller_descriptor.go): its name, the identity it authenticates as, whether it runs once per
node, and the constructor that builds it.

Every constructor takes the ComponentContext (kubelab.client.component); the per-node ones also
take what their own main.go hands them from the node: the kubelet its ContainerRuntime
(kubelet.Dependencies), kube-proxy its IPTables. Cluster(replace={...}) swaps the constructor
and keeps the rest of the descriptor, so a replacement takes the same arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubelab.api import Object
from kubelab.client.component import Component, ComponentContext
from kubelab.client.flowcontrol import ClientConnection
from kubelab.controllers import ControllerManager
from kubelab.kubelet import Kubelet
from kubelab.kubelet.hollow import HollowKubelet
from kubelab.kubelet.runtime import ContainerRuntime
from kubelab.proxy import KubeProxy
from kubelab.proxy.iptables import IPTables
from kubelab.scheduler import Scheduler

__all__ = ["CLIENT_CONNECTIONS", "COMPONENTS", "PER_NODE", "ComponentDescriptor", "NodeDependencies", "build"]

# The constructor of a descriptor: (ctx) for the control plane, (ctx, runtime) for a kubelet,
# (ctx, iptables) for kube-proxy. A class or any function returning a component.
Constructor = Callable[..., Component]


@dataclass(frozen=True)
class ComponentDescriptor:
    name: str
    user: str                      # the identity it authenticates as; {node} for per-node ones
    constructor: Constructor
    per_node: bool = False         # one per node: kubelet/node-1, kube-proxy/node-1, ...

    def __repr__(self) -> str:  # what notebooks 05 and 06 show of COMPONENTS
        where = " per node" if self.per_node else ""
        return f"<{self.name}: {self.constructor.__module__}.{self.constructor.__qualname__} " \
               f"as {self.user}{where}>"


COMPONENTS: dict[str, ComponentDescriptor] = {
    d.name: d for d in (
        ComponentDescriptor("scheduler", "system:kube-scheduler", Scheduler),
        ComponentDescriptor("kubelet", "system:node:{node}", Kubelet, per_node=True),
        ComponentDescriptor("controller-manager", "system:kube-controller-manager", ControllerManager),
        ComponentDescriptor("kube-proxy", "system:kube-proxy", KubeProxy, per_node=True),
    )
}
# Each component's client-side rate limit as its component config sets it by default
# (Cluster(client_connection={...}) changes one): kube-scheduler's clientConnection
# (pkg/scheduler/apis/config/v1 defaults.go: 50/100), kubelet's kubeAPIQPS/kubeAPIBurst
# (pkg/kubelet/apis/config/v1beta1/defaults.go: 50/100), kube-controller-manager's
# --kube-api-qps/--kube-api-burst (its generic component config: 20/30) and kube-proxy's
# clientConnection (pkg/proxy/apis/config/v1alpha1/defaults.go: 5/10). A component of your own
# (c.add_component) gets none unless it asks for one.
CLIENT_CONNECTIONS: dict[str, ClientConnection] = {
    "scheduler": ClientConnection(50, 100),
    "kubelet": ClientConnection(50, 100),
    "controller-manager": ClientConnection(20, 30),
    "kube-proxy": ClientConnection(5, 10),
}
PER_NODE = tuple(name for name, d in COMPONENTS.items() if d.per_node)
HOLLOW_KUBELET = ComponentDescriptor("kubelet", "system:node:{node}", HollowKubelet, per_node=True)


@dataclass(frozen=True)
class NodeDependencies:
    """What belongs to a node rather than to the component that runs on it, so it outlives a
    crash of that component (containerd's containers, the kernel's rules)."""

    runtime: ContainerRuntime
    iptables: IPTables
    # The manifests in the node's /etc/kubernetes/manifests (a control-plane node's, with
    # Cluster(anatomy=True)): handed to its kubelet as static_pods.
    static_pods: list[Object] = field(default_factory=list)


def build(descriptor: ComponentDescriptor, constructor: Constructor, ctx: ComponentContext,
          node: NodeDependencies | None) -> Component:
    """Call the constructor with what this component's main.go passes it."""
    if descriptor.name == "kubelet" and node is not None:
        if node.static_pods:
            return constructor(ctx, node.runtime, static_pods=node.static_pods)
        return constructor(ctx, node.runtime)
    if descriptor.name == "kube-proxy" and node is not None:
        return constructor(ctx, node.iptables)
    return constructor(ctx)
