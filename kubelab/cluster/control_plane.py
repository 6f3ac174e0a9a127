"""The wiring of Cluster(anatomy=True): control-plane nodes, their static pods, the add-ons.

A mixin of Cluster, as ReplicaWiring is. kubeadm's stacked topology: one control-plane node per
API server (control-plane, control-plane2, ...), each running the API server of its index, the
scheduler and controller-manager replicas of its index (when there are that many) and the etcd
member of its index (the single embedded store: one etcd, on the first). The manifests are in
anatomy.py.

The control plane still runs as kubelab's components (the wiring starts them, c.faults crashes
and restarts them). Their static pods tell the truth about them through the node's container
runtime: each control-plane image is tied to its component (runtime.processes), a crash kills
the container (the kubelet restarts it with back-off, and while the component is down every
try exits at once: CrashLoopBackOff, not ready), and after c.faults.restart the kubelet's next
try runs again, with its restart count. kube-proxy/<node> is tied to the kube-proxy image on
its node the same way, and authenticates as the ServiceAccount kube-system/kube-proxy, as
kubeadm's DaemonSet does. With the only API server down nothing can be listed, as on a real
node, where `crictl ps` would still show the containers: c.runtimes["control-plane"].running()
is that view.

--- sa --- Identity, as kubeadm leaves it: the cluster CA (pki.py; `kubelab serve` replaces it
with its real one through set_root_ca), the controller manager run with
--controllers=*,serviceaccount-controller,root-ca-certificate-publisher-controller (the two are
disabled by default in kubelab, see kubelab/controllers/controller_descriptor.py) and the
root CA as the publisher's --root-ca-file, the ServiceAccount admission plugin on every API
server, and, in the namespaces the API server bootstraps, the `default` ServiceAccount and the
kube-root-ca.crt ConfigMap those controllers would have made by the time kind hands the cluster
over (a pod created at once finds them; a namespace made later gets them from the controllers
a moment after, as upstream).

--- csr --- The kubelets' client certificates, as kind shows them in `kubectl get csr`: the
controller manager also runs the CSR signer (with the cluster CA and its key, as kubeadm's
--cluster-signing-cert-file and -key-file), approver and cleaner; kubeadm's bootstrap token
(kind's abcdef.0123456789abcdef, user system:bootstrap:abcdef in the groups
system:bootstrappers and system:bootstrappers:kubeadm:default-node-token) is accepted, with
kubeadm's bindings (phases/bootstraptoken/node: kubeadm:kubelet-bootstrap,
kubeadm:node-autoapprove-bootstrap, kubeadm:node-autoapprove-certificate-rotation) and the
ClusterRoles they name; and each kubelet asks for its certificate when it starts
(kubelab/kubelet/certificate.py): the kubeadm init node (the first control-plane node) with its
own identity, every node that joined with the bootstrap token. Departure: the three
ClusterRoles are upstream's bootstrap policy (every API server makes them); kubelab's anatomy
creates them with kubeadm's bindings, so clusters without the anatomy keep their objects.
"""


from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.apiserver.admission.serviceaccount import ServiceAccount
from kubelab.apiserver.controlplane import ControlPlaneControllers, MasterLeases
from kubelab.cluster.anatomy import (
    ADDON_IMAGES,
    STATIC_IMAGES,
    addon_objects,
    control_plane_names,
    control_plane_node,
    static_pod,
)
from kubelab.cluster.pki import cluster_ca
from kubelab.cluster.replicas import replica_names
from kubelab.controllers.certificates import (
    ROOT_CA_CERT_CONFIG_MAP_NAME,
    CSRCleanerController,
    CSRSigningController,
    Publisher,
    SARApprover,
)
from kubelab.controllers.certificates.rootcacertpublisher import DESCRIPTION, DESCRIPTION_ANNOTATION
from kubelab.controllers.serviceaccount import ServiceAccountsController

if TYPE_CHECKING:
    from kubelab.apiserver import APIServer
    from kubelab.client.client import Client
    from kubelab.kubelet.runtime import ContainerRuntime

__all__ = ["ANATOMY_CONTROLLERS", "KUBE_PROXY_GROUPS", "KUBE_PROXY_USER", "AnatomyWiring"]

KUBE_PROXY_USER = "system:serviceaccount:kube-system:kube-proxy"
KUBE_PROXY_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:kube-system")
# The anatomy's --controllers (kubeadm's is `*,bootstrapsigner,tokencleaner`): every default
# one, and those kubelab runs only here (upstream they are part of "*"): the serviceaccount
# controller, the root-CA publisher, the endpoints and EndpointSlice mirroring controllers.
ANATOMY_CONTROLLERS = ("*", ServiceAccountsController.NAME, Publisher.NAME, "endpoints-controller",
                       "endpointslice-mirroring-controller", CSRSigningController.NAME,
                       SARApprover.NAME, CSRCleanerController.NAME)
# --- csr --- kind's kubeadm config: the bootstrap token every joining node's kubelet uses.
BOOTSTRAP_TOKEN = "abcdef.0123456789abcdef"
BOOTSTRAP_USER = "system:bootstrap:abcdef"
NODE_TOKEN_GROUP = "system:bootstrappers:kubeadm:default-node-token"
BOOTSTRAP_GROUPS = ("system:bootstrappers", NODE_TOKEN_GROUP)
_RBAC = "rbac.authorization.k8s.io"
_CSR_RULES = (  # plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go
    ("system:node-bootstrapper", ["create", "get", "list", "watch"], "certificatesigningrequests"),
    ("system:certificates.k8s.io:certificatesigningrequests:nodeclient", ["create"],
     "certificatesigningrequests/nodeclient"),
    ("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", ["create"],
     "certificatesigningrequests/selfnodeclient"),
)
_CSR_BINDINGS = (  # kubeadm phases/bootstraptoken/node/tlsbootstrap.go
    ("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", NODE_TOKEN_GROUP),
    ("kubeadm:node-autoapprove-bootstrap",
     "system:certificates.k8s.io:certificatesigningrequests:nodeclient", NODE_TOKEN_GROUP),
    ("kubeadm:node-autoapprove-certificate-rotation",
     "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
)


def csr_rbac_objects() -> list[Object]:
    """The ClusterRoles the CSR path needs and kubeadm's bindings of them."""
    objects: list[Object] = [
        {"apiVersion": f"{_RBAC}/v1", "kind": "ClusterRole",
         "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                      "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
         "rules": [{"verbs": verbs, "apiGroups": ["certificates.k8s.io"], "resources": [resource]}]}
        for name, verbs, resource in _CSR_RULES]
    objects += [{"apiVersion": f"{_RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
                 "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": role},
                 "subjects": [{"apiGroup": _RBAC, "kind": "Group", "name": group}]}
                for name, role, group in _CSR_BINDINGS]
    return objects


BOOTSTRAP_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def _always() -> bool:
    return True


def _running(obj: Any, flag: str = "running") -> Callable[[], bool]:
    return lambda: bool(getattr(obj, flag))


class AnatomyWiring:
    if TYPE_CHECKING:
        anatomy: bool
        hollow: bool
        apiserver: APIServer
        apiservers: list[APIServer]
        client: Client
        components: dict[str, Any]
        etcd: Any
        seed: int
        replicas: dict[str, int]
        runtimes: dict[str, ContainerRuntime]
        node_names: list[str]

    def _anatomy_nodes(self, workers: list[Object]) -> list[Object]:
        """The control-plane nodes, then the workers. A cluster of one node only keeps no
        NoSchedule taint on it, so that its pods have somewhere to run: kind's kubeadminit
        action removes it (`kubectl taint nodes --all node-role.kubernetes.io/control-plane-`)."""
        names = control_plane_names(max(1, self.replicas.get("apiserver", 1)))
        nodes = [control_plane_node(name) for name in names]
        if len(nodes) == 1 and not workers:
            nodes[0]["spec"].pop("taints")
        return nodes + workers

    @property
    def control_plane_nodes(self) -> list[str]:
        """The names of the control-plane nodes (none without anatomy)."""
        if not self.anatomy:
            return []
        return control_plane_names(max(1, self.replicas.get("apiserver", 1)))

    def _wire_anatomy(self) -> None:
        """Place the control plane on its nodes, tie each image to its process, write the
        static pod manifests and the add-ons. Called before any component starts."""
        self._processes: dict[str, tuple[str, str]] = {}  # component -> (node, image)
        self._static_pods: dict[str, list[Object]] = {}
        self.root_ca = b""  # the cluster CA's certificate (PEM), once the anatomy made one
        self.root_ca_key = b""  # and its key: the CSR signer's
        if not self.anatomy:
            return
        nodes = self.control_plane_nodes
        placed: list[tuple[str, str, Callable[[], bool]]] = []  # (component, static pod, up?)
        for server in self.apiservers:
            placed.append((server.name, "kube-apiserver", _running(server)))
        for kind, pod in (("scheduler", "kube-scheduler"),
                          ("controller-manager", "kube-controller-manager")):
            for replica in replica_names(kind, self.replicas.get(kind, 1)):
                placed.append((replica, pod, self._up(replica)))
        # Simulated Raft members are up or down (c.faults), the real etcd processes kubelab
        # started run or not; the single store and an etcd:// URL are always up as far as the
        # wiring knows.
        members = getattr(self.etcd, "members", None) or {}
        if isinstance(members, dict):
            etcd_placement = [(name, _running(member, "up")) for name, member in members.items()]
        else:
            etcd_placement = [(member.name, _running(member)) for member in members]
        etcd_placement = etcd_placement or [("etcd", _always)]
        for index, (member, up) in enumerate(etcd_placement):
            if index < len(nodes):
                placed.insert(index, (member, "etcd", up))
        counters: dict[str, int] = {}
        for component, pod, up in placed:
            i = counters.get(pod, 0)
            counters[pod] = i + 1
            node = nodes[i % len(nodes)]
            runtime = self.runtimes[node]
            image = STATIC_IMAGES[pod]
            runtime.processes[image] = up
            self._processes[component] = (node, image)
            self._static_pods.setdefault(node, []).append(static_pod(pod, runtime.node_ip))
        for node in self.node_names:
            for image in (*STATIC_IMAGES.values(), *ADDON_IMAGES.values()):
                self.runtimes[node].preload(image)  # kind's node image carries them
            self.runtimes[node].processes[ADDON_IMAGES["kube-proxy"]] = self._up(f"kube-proxy/{node}")
            self._processes[f"kube-proxy/{node}"] = (node, ADDON_IMAGES["kube-proxy"])
        self.apiserver.add_token(f"token-{KUBE_PROXY_USER}", KUBE_PROXY_USER, list(KUBE_PROXY_GROUPS))
        self._wire_identity()
        for obj in addon_objects():  # kubeadm's and kind's add-on phases: plain creates
            try:
                self.client.create(obj)
            except ApiError as err:
                if err.code != 409:
                    raise
        # Each API server keeps the `kubernetes` Service, its endpoints and its identity Lease
        # (kubelab/apiserver/controlplane.py), from the control-plane node it runs on.
        leases = MasterLeases()
        self.controlplane_controllers = []
        for i, server in enumerate(self.apiservers):
            node = nodes[i % len(nodes)]
            controllers = ControlPlaneControllers(server, leases, self.runtimes[node].node_ip, node)
            controllers.start()
            self.controlplane_controllers.append(controllers)

    # --- sa ---
    def _wire_identity(self) -> None:
        """The cluster CA, the ServiceAccount admission plugin, the bootstrap namespaces'
        default ServiceAccount and kube-root-ca.crt (see the module's docstring)."""
        self.root_ca, self.root_ca_key = cluster_ca(self.seed)
        self.apiserver.add_token(BOOTSTRAP_TOKEN, BOOTSTRAP_USER, list(BOOTSTRAP_GROUPS))
        for obj in csr_rbac_objects():
            self.client.create(obj)
        for server in self.apiservers:
            server.admission.register(ServiceAccount(random.Random(f"{self.seed}/kube-api-access")),
                                      before="DefaultTolerationSeconds")
        for namespace in BOOTSTRAP_NAMESPACES:
            for obj in ({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": "default", "namespace": namespace}},
                        {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": ROOT_CA_CERT_CONFIG_MAP_NAME, "namespace": namespace,
                                      "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                         "data": {"ca.crt": self.root_ca.decode()}}):
                try:
                    self.client.create(obj)
                except ApiError as err:
                    if err.code != 409:
                        raise

    def _anatomy_constructor(self, component: str, constructor: Any, default: Any) -> Any:
        """kube-controller-manager as kubeadm runs it: the anatomy's --controllers and the
        root CA (a learner's replacement is left as it is)."""
        if not self.anatomy or constructor is not default:
            return constructor
        if component == "kubelet":  # --- csr --- each kubelet asks for its client certificate
            first = self.control_plane_nodes[0]

            def kubelet(ctx: Any, *args: Any, **kwargs: Any) -> Any:
                node = ctx.name.split("/", 1)[-1]
                return constructor(ctx, *args, tls_bootstrap="" if node == first else BOOTSTRAP_TOKEN,
                                   **kwargs)
            return constructor if self.hollow else kubelet
        if component != "controller-manager":
            return constructor
        return functools.partial(constructor, controllers=list(ANATOMY_CONTROLLERS),
                                 controller_options={Publisher.NAME: {"root_ca": self._current_root_ca},
                                                     CSRSigningController.NAME: {"ca": self._signing_ca}})

    def _current_root_ca(self) -> bytes:
        return self.root_ca

    def _signing_ca(self) -> tuple[bytes, bytes]:
        return self.root_ca, self.root_ca_key

    def set_root_ca(self, pem: bytes, key: bytes = b"") -> None:
        """Publish this CA (kubelab serve's, which signed its serving certificate) as
        kube-root-ca.crt from now on; the running publisher rewrites every namespace's. With
        its key, the CSR signer signs with it from now on too."""
        self.root_ca = pem
        if key:
            self.root_ca_key = key
        for component in self.components.values():
            controllers = getattr(component, "controllers", None)
            publisher = controllers.get(Publisher.NAME) if isinstance(controllers, dict) else None
            if isinstance(publisher, Publisher):
                publisher.resync()

    def _up(self, name: str) -> Callable[[], bool]:
        """What the kubelet's start of the component's container does: the binary runs, unless
        c.faults crashed it (then it cannot come up until c.faults.restart). One that stopped
        itself, losing its Lease as kube-scheduler exits, runs again: its container restarted."""
        def up() -> bool:
            component = self.components.get(name)
            if component is not None and getattr(component, "exited", False):
                self.restart_component(name)  # type: ignore[attr-defined]
                return True
            return component is not None
        return up

    def _process_died(self, name: str) -> None:
        """A crashed component: its container on its node dies with it."""
        where = getattr(self, "_processes", {}).get(name)
        if where is not None:
            node, image = where
            self.runtimes[node].crash_image(image)
