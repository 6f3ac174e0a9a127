"""kubelet: the node agent, a simulated container runtime, and the image registry they pull from.

    from kubelab.kubelet import Kubelet            # the component (one per node)
    cluster.registry                               # an ImageRegistry, shared by every node
    cluster.runtimes["node-1"]                     # that node's ContainerRuntime

Read kubelet.py first, then kuberuntime.py (SyncPod), status.py (phase and conditions),
images.py and backoff.py (ImagePullBackOff), probes.py, heartbeat.py (Node status and Lease),
static_pods.py, volumemanager/ with token/ (the pods' volumes, and the service account tokens
the token manager asks the API server for), and runtime.py / registry.py / workload.py for the
simulated world underneath.
"""

from kubelab.kubelet.backoff import Backoff
from kubelab.kubelet.config import KubeletConfiguration
from kubelab.kubelet.heartbeat import NODE_LEASE_NAMESPACE
from kubelab.kubelet.images import go_duration
from kubelab.kubelet.kubelet import Kubelet
from kubelab.kubelet.registry import MODES, ImageRegistry, normalize_image
from kubelab.kubelet.runtime import ContainerRuntime
from kubelab.kubelet.static_pods import CONFIG_MIRROR, STATIC_PODS_ANNOTATION
from kubelab.kubelet.status import get_phase
from kubelab.kubelet.workload import BEHAVIOR_ANNOTATION, Workload, parse_behavior

__all__ = [
    "BEHAVIOR_ANNOTATION",
    "CONFIG_MIRROR",
    "MODES",
    "NODE_LEASE_NAMESPACE",
    "STATIC_PODS_ANNOTATION",
    "Backoff",
    "ContainerRuntime",
    "ImageRegistry",
    "Kubelet",
    "KubeletConfiguration",
    "Workload",
    "get_phase",
    "go_duration",
    "normalize_image",
    "parse_behavior",
]
