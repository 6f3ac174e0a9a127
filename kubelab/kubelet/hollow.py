"""The hollow kubelet: kubemark's trick, the real kubelet with a runtime that does nothing.

kubemark (k8s.io/kubernetes pkg/kubemark/hollow_kubelet.go, cmd/kubemark/app/hollow-node.go)
runs the unmodified kubelet (kubeletapp.RunKubelet) and fakes what lies under it:

- the CRI: a fake remote runtime (pkg/kubelet/cri/remote/fake) whose sandboxes and containers
  exist only as records, answer at once, and run until stopped; its image service "pulls" any
  image at once and never fails;
- cAdvisor (a fake), the container manager (cm.NewStubContainerManager: no cgroups), the
  mounter, the OOM adjuster and the OS interface: kubelab's kubelet has none of these;
- its configuration (GetHollowKubeletConfig): the usual defaults, with syncFrequency 10 s,
  nodeStatusUpdateFrequency 10 s, nodeStatusReportFrequency 5 min, serialized image pulls.

So `HollowKubelet` is `Kubelet`, unchanged: the same informers (each kubelet lists and
watches only its own pods, spec.nodeName=<node>, and its own Node), pod workers, status
manager, probes, Node status every 10 s and Lease every 10 s. Only its runtime is `HollowRuntime`:
no pull, sandbox or start latency, no registry, no scripted workloads (kubelab.dev/behavior is
ignored: every container runs until it is stopped, as in the fake runtime). That is what lets a
few thousand of them share one process: `Cluster(nodes=5000, hollow=True)`.

Volumes are mounted as by any kubelet: kubemark's volumePlugins() registers the real emptydir,
secret, configmap, downwardapi and projected plugins (over a fake mounter), so a pod's projected
service account token is a TokenRequest from a hollow kubelet too (kubelab/kubelet/token). Only
pods the anatomy's ServiceAccount admission plugin saw have such a volume.
"""

from __future__ import annotations

from kubelab.client.component import ComponentContext
from kubelab.kubelet.config import KubeletConfiguration
from kubelab.kubelet.kubelet import Kubelet
from kubelab.kubelet.process import ProcessSpec
from kubelab.kubelet.registry import normalize_image, repository
from kubelab.kubelet.runtime import Container, ContainerRuntime, PullResult, Sandbox, _digest
from kubelab.kubelet.workload import Workload
from kubelab.sim.tasks import Future

__all__ = ["HollowKubelet", "HollowRuntime", "get_hollow_kubelet_config"]


def get_hollow_kubelet_config(max_pods: int = 110) -> KubeletConfiguration:
    """GetHollowKubeletConfig: kubemark's overrides of the kubelet's defaults."""
    return KubeletConfiguration(sync_frequency=10.0, node_status_update_frequency=10.0,
                                node_status_report_frequency=300.0, serialize_image_pulls=True,
                                max_pods=max_pods)


class HollowRuntime(ContainerRuntime):
    """The fake remote runtime: every CRI call succeeds at once; nothing runs.

    Answers still arrive a clock callback later (delay 0), as a CRI reply arrives after the
    call returns, so the kubelet's tasks keep their shape."""

    def run_pod_sandbox(self, pod_uid: str, *, name: str = "", namespace: str = "",
                        labels: dict[str, str] | None = None) -> Future[Sandbox]:
        future: Future[Sandbox] = Future()
        sandbox = self._new_sandbox(pod_uid, name, namespace, labels)
        self._later(0, self._sandbox_ready, sandbox, future)
        return future

    def pull_image(self, image: str) -> Future[PullResult]:
        """FakeImageService.PullImage: the image is there at once, whatever it is."""
        future: Future[PullResult] = Future()
        ref = normalize_image(image)
        result = PullResult(f"{repository(ref)}@sha256:{_digest(ref)}", 0, 0.0)
        self._later(0, self._pulled, ref, result, future)
        return future

    def create_container(self, pod_uid: str, name: str, image: str, workload: Workload,
                         spec: ProcessSpec | None = None) -> Future[Container]:
        """A record of a container that runs until stopped, whatever the pod asked for."""
        future: Future[Container] = Future()
        key = (pod_uid, name)
        attempt = self._attempts.get(key, -1) + 1
        self._attempts[key] = attempt
        pulled = self.image_status(image)
        container = Container(f"containerd://{_digest(f'{self.node}/{next(self._ids)}')}",
                              pod_uid, name, attempt, image,
                              pulled.image_ref if pulled else normalize_image(image), Workload())
        self._later(0, self._created, container, future)
        return future

    def start_container(self, container_id: str) -> Future[Container]:
        future: Future[Container] = Future()
        self._later(0, self._started, container_id, future)
        return future


class HollowKubelet(Kubelet):
    """kubemark's HollowKubelet: the kubelet, with kubemark's configuration."""

    def __init__(self, ctx: ComponentContext, runtime: ContainerRuntime | None = None, *,
                 config: KubeletConfiguration | None = None) -> None:
        super().__init__(ctx, runtime, config=config or get_hollow_kubelet_config())
        if not isinstance(self.runtime, HollowRuntime):
            raise TypeError("a hollow kubelet runs on a HollowRuntime (Cluster(hollow=True) "
                            f"gives each node one), got {type(self.runtime).__name__}")
