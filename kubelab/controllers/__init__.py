"""kube-controller-manager: the controllers that turn Deployments into ReplicaSets into Pods,
collect garbage and empty deleted namespaces (kubernetes/kubernetes pkg/controller/).

Read in this order: manager.py (the component), replica_set.py with replica_set_utils.py,
controller_utils.py, pod_ranking.py and controller_ref_manager.py, then deployment/,
garbage_collector/ and namespace.py. Like the scheduler and the kubelet, controllers import
only kubelab.api, kubelab.sim and kubelab.client: they reach the rest of the cluster through
the API server.
"""

from kubelab.controllers.deployment import DeploymentController
from kubelab.controllers.garbage_collector import GarbageCollector
from kubelab.controllers.manager import CONTROLLERS, ControllerManager
from kubelab.controllers.namespace import NamespaceController
from kubelab.controllers.replica_set import ReplicaSetController

__all__ = [
    "CONTROLLERS",
    "ControllerManager",
    "DeploymentController",
    "GarbageCollector",
    "NamespaceController",
    "ReplicaSetController",
]
