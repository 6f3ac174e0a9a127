"""kube-controller-manager: the controllers that turn Deployments into ReplicaSets into Pods,
collect garbage and empty deleted namespaces (kubernetes/kubernetes pkg/controller/).

Read in this order: manager.py (the component) and controller_descriptor.py (which controllers
it can run), replicaset/, then controller_utils.py, pod_ranking.py and controller_ref_manager.py
(what every workload controller shares), then deployment/, garbage_collector/, namespace/,
node_lifecycle/, job/, ttlafterfinished/, endpointslice/, endpoint/ (the deprecated Endpoints,
run only with the anatomy) and cloud/ (the cloud-controller-manager's).
Each folder is one package of upstream's pkg/controller/. The
course's own sample controllers live apart, in kubelab.samples. Like the scheduler and the
kubelet, controllers import only kubelab.api, kubelab.sim and kubelab.client: they reach the
rest of the cluster through the API server.
"""

from kubelab.controllers.deployment import DeploymentController
from kubelab.controllers.garbage_collector import GarbageCollector
from kubelab.controllers.manager import CONTROLLERS, ControllerManager
from kubelab.controllers.namespace.namespace_controller import NamespaceController
from kubelab.controllers.replicaset.replica_set import ReplicaSetController

__all__ = [
    "CONTROLLERS",
    "ControllerManager",
    "DeploymentController",
    "GarbageCollector",
    "NamespaceController",
    "ReplicaSetController",
]
