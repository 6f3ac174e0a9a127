"""Which controllers kube-controller-manager can run, each by its descriptor
(kubernetes/kubernetes cmd/kube-controller-manager/app/controller_descriptor.go).

NewControllerDescriptors registers one ControllerDescriptor per controller: its name (the
--controllers name, names/controller_names.go), the older names still accepted for it
(aliases) and the function that builds it. kubelab's constructor takes the manager's
ComponentContext and its one SharedInformerFactory and returns a Controller, which run() starts
and stop() crashes. Upstream's initFunc also starts the controller and may decline to run it
(feature gates, disabled by default); kubelab's manager starts them all once the caches synced.

A descriptor may be disabled by default (isDisabledByDefault): `--controllers=*` leaves it out,
naming it turns it on (IsControllerEnabled, in manager.py). kubelab disables the serviceaccount
controller and the root-CA publisher by default, a departure (docs/ARCHITECTURE.md): they put
objects in every namespace, so only the anatomy (Cluster(anatomy=True), `kubelab serve`) names
them, and the traces of other clusters stay as they were. So are the CSR signer, approver and
cleaner: only the anatomy's kubelets ask for certificates. A controller's extra settings (its
part of the component config, such as SAController.RootCAFile) reach its constructor as
keyword arguments (ControllerManager(controller_options=...)).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kubelab.controllers.certificates import (
    CSRCleanerController,
    CSRSigningController,
    Publisher,
    SARApprover,
)
from kubelab.controllers.cronjob import ControllerV2
from kubelab.controllers.daemon import DaemonSetsController
from kubelab.controllers.deployment import DeploymentController
from kubelab.controllers.disruption import DisruptionController
from kubelab.controllers.endpoint import EndpointController
from kubelab.controllers.endpointslice import EndpointSliceController
from kubelab.controllers.endpointslicemirroring import Controller as MirroringController
from kubelab.controllers.garbage_collector import GarbageCollector
from kubelab.controllers.job import JobController
from kubelab.controllers.namespace import NamespaceController
from kubelab.controllers.node_lifecycle import NodeLifecycleController, TaintEvictionController
from kubelab.controllers.podautoscaler import HorizontalController
from kubelab.controllers.replicaset.replica_set import ReplicaSetController
from kubelab.controllers.replication import ReplicationManager
from kubelab.controllers.resourcequota import ResourceQuotaController
from kubelab.controllers.serviceaccount import ServiceAccountsController
from kubelab.controllers.statefulset import StatefulSetController
from kubelab.controllers.ttlafterfinished import TTLAfterFinishedController
from kubelab.controllers.volume import (
    AttachDetachController,
    CSIHostPathProvisioner,
    ExternalAttacher,
    ExternalResizer,
    LocalPathProvisioner,
    PersistentVolumeController,
    PVCProtectionController,
    PVProtectionController,
)

__all__ = ["Controller", "ControllerDescriptor", "controller_aliases", "new_controller_descriptors"]


class Controller(Protocol):
    """What the manager asks of each controller (upstream: controller.Interface and the Run
    its initFunc starts)."""

    def run(self) -> None: ...

    def stop(self) -> None: ...


# (ComponentContext, SharedInformerFactory, **the controller's options) -> the controller
InitFunc = Callable[..., Controller]


@dataclass(frozen=True)
class ControllerDescriptor:
    name: str
    init_func: InitFunc
    aliases: tuple[str, ...] = ()
    disabled_by_default: bool = False  # --- sa --- isDisabledByDefault


def new_controller_descriptors() -> dict[str, ControllerDescriptor]:
    """name -> descriptor, in the order the manager starts them. A name or alias registered
    twice is a programming error, as upstream's register panics."""
    descriptors: dict[str, ControllerDescriptor] = {}
    seen: set[str] = set()

    def register(descriptor: ControllerDescriptor) -> None:
        for name in (descriptor.name, *descriptor.aliases):
            if name in seen:
                raise ValueError(f"controller name {name!r} registered twice")
            seen.add(name)
        descriptors[descriptor.name] = descriptor

    register(ControllerDescriptor("replicaset-controller", ReplicaSetController, ("replicaset",)))
    register(ControllerDescriptor("deployment-controller", DeploymentController, ("deployment",)))
    register(ControllerDescriptor("daemonset-controller", DaemonSetsController, ("daemonset",)))
    register(ControllerDescriptor("garbage-collector-controller", GarbageCollector,
                                  ("garbagecollector",)))
    register(ControllerDescriptor("namespace-controller", NamespaceController, ("namespace",)))
    register(ControllerDescriptor("node-lifecycle-controller", NodeLifecycleController,
                                  ("nodelifecycle",)))
    register(ControllerDescriptor("taint-eviction-controller", TaintEvictionController))
    register(ControllerDescriptor("job-controller", JobController, ("job",)))
    register(ControllerDescriptor("ttl-after-finished-controller", TTLAfterFinishedController,
                                  ("ttl-after-finished",)))
    register(ControllerDescriptor("endpointslice-controller", EndpointSliceController,
                                  ("endpointslice",)))
    # --- i31-sts ---
    register(ControllerDescriptor("statefulset-controller", StatefulSetController, ("statefulset",)))
    register(ControllerDescriptor("replicationcontroller-controller", ReplicationManager,
                                  ("replicationcontroller",)))
    # --- i31-cron-pdb ---
    register(ControllerDescriptor("cronjob-controller", ControllerV2, ("cronjob",)))
    register(ControllerDescriptor("disruption-controller", DisruptionController, ("disruption",)))
    # --- i31-storage ---
    register(ControllerDescriptor("persistentvolume-binder-controller", PersistentVolumeController,
                                  ("persistentvolume-binder",)))
    register(ControllerDescriptor("persistentvolumeclaim-protection-controller",
                                  PVCProtectionController, ("pvc-protection",)))
    register(ControllerDescriptor("persistentvolume-protection-controller", PVProtectionController,
                                  ("pv-protection",)))
    # kind's local-path provisioner, an add-on Deployment upstream (docs/ARCHITECTURE.md).
    register(ControllerDescriptor("local-path-provisioner", LocalPathProvisioner))
    # --- hpacsi --- a simulated CSI driver's sidecars (csi_hostpath.py), idle unless a class names it
    register(ControllerDescriptor("csi-hostpath-provisioner", CSIHostPathProvisioner))
    register(ControllerDescriptor("csi-resizer", ExternalResizer))
    register(ControllerDescriptor("csi-attacher", ExternalAttacher))
    register(ControllerDescriptor("persistentvolume-attach-detach-controller",
                                  AttachDetachController, ("attachdetach",)))
    # --- i31-hpa ---
    register(ControllerDescriptor("horizontal-pod-autoscaler-controller", HorizontalController,
                                  ("horizontalpodautoscaling",)))
    # The ResourceQuota admission plugin charges; this controller recalculates and gives back.
    register(ControllerDescriptor("resourcequota-controller", ResourceQuotaController,
                                  ("resourcequota",)))
    # --- sa --- (disabled by default in kubelab: the anatomy names them; see the docstring)
    register(ControllerDescriptor("serviceaccount-controller", ServiceAccountsController,
                                  ("serviceaccount",), disabled_by_default=True))
    register(ControllerDescriptor("root-ca-certificate-publisher-controller", Publisher,
                                  ("root-ca-cert-publisher",), disabled_by_default=True))
    # --- endpoints --- on by default upstream; kubelab runs it with Cluster(anatomy=True)
    # only, so the course's clusters keep their objects and traces (docs/ARCHITECTURE.md).
    register(ControllerDescriptor("endpoints-controller", EndpointController, ("endpoint",),
                                  disabled_by_default=True))
    register(ControllerDescriptor("endpointslice-mirroring-controller", MirroringController,
                                  ("endpointslicemirroring",), disabled_by_default=True))
    # --- csr --- the CertificateSigningRequest controllers (names.go): on by default upstream,
    # kubelab runs them with the anatomy, whose kubelets ask for their client certificates.
    register(ControllerDescriptor(CSRSigningController.NAME, CSRSigningController, ("csrsigning",),
                                  disabled_by_default=True))
    register(ControllerDescriptor(SARApprover.NAME, SARApprover, ("csrapproving",),
                                  disabled_by_default=True))
    register(ControllerDescriptor(CSRCleanerController.NAME, CSRCleanerController, ("csrcleaner",),
                                  disabled_by_default=True))
    return descriptors


def controller_aliases(descriptors: dict[str, ControllerDescriptor]) -> dict[str, str]:
    """ControllerAliases: each alias -> the controller's name."""
    return {alias: d.name for d in descriptors.values() for alias in d.aliases}
