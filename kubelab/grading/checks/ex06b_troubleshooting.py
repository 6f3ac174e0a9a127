"""Checks for notebook 06b's exercise 6.3: diagnose a broken cluster.

Each check builds seeded clusters the learner has not seen: a namespace and object names drawn
from the seed, healthy decoys beside the broken object (a Deployment behind a Service, a toolbox
pod whose container crashed once and came back, so a restart count alone proves nothing), a
scheduler that crashed and restarted, and exactly one cause of trouble, made by a manifest or a
fault as notebook 06b makes it. The learner's diagnose(c) reads the cluster only through
c.kubectl(...) and c.client and must name the cause (one of CAUSES) and the object to fix.

The texts the learner reads are the upstream components' own: the scheduler's FailedScheduling
message (pkg/scheduler/framework/types.go FitError.Error), the kubelet's waiting reasons and
events (pkg/kubelet/images/image_manager.go, kuberuntime_container.go), the node lifecycle
controller's NodeNotReady (pkg/controller/nodelifecycle), the ReplicaSet controller's
FailedCreate (pkg/controller/replicaset/replica_set.go), carrying the ResourceQuota admission
plugin's refusal (k8s.io/apiserver pkg/admission/plugin/resourcequota).
"""

from __future__ import annotations

import random
from typing import Any

from kubelab.cluster import Cluster
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.grading.shared import share

__all__ = ["CAUSES", "TroubledCluster", "broken_cluster"]

Object = dict[str, Any]

# What diagnose() may answer (the exercise's docstring lists them with what each means).
CAUSES = ("InsufficientCPU", "UntoleratedTaint", "UnboundPVC", "ImagePullBackOff",
          "CrashLoopBackOff", "CreateContainerConfigError", "OOMKilled", "ReadinessProbe",
          "NodeNotReady", "FailedCreate")
PENDING = ("InsufficientCPU", "UntoleratedTaint", "UnboundPVC")
CONTAINERS = ("ImagePullBackOff", "CrashLoopBackOff", "CreateContainerConfigError", "OOMKilled")
WORKLOADS = ("ReadinessProbe", "NodeNotReady", "FailedCreate")

NAMESPACES = ("shop", "billing", "search", "media", "payments", "ledger")
NAMES = ("orders", "cart", "thumbnails", "checkout", "reports", "invoices", "catalog", "mailer")


class TroubledCluster:
    """What diagnose() is handed: kubectl as the learner types it, and an API client."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def kubectl(self, command: str) -> str:
        """`c.kubectl("get pods -A")`: kubectl's printed text (errors included)."""
        return str(self._cluster.kubectl(command))

    @property
    def client(self) -> Any:
        return self._cluster.client


share(TroubledCluster, ("kubectl", "client"))


def _deployment(name: str, ns: str, container: Object, replicas: int = 2) -> Object:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [container]}}}}


def _service(name: str, ns: str) -> Object:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 80}]}}


def _pod(name: str, ns: str, container: Object, **spec: Any) -> Object:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [container], **spec}}


LIMITED = {"limits": {"memory": "64Mi"}}


def _quota(ns: str) -> Object:
    """A ResourceQuota on memory limits in namespace ns: pods without a memory limit are refused
    (`failed quota: memory: must specify limits.memory for: app`)."""
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "memory", "namespace": ns},
            "spec": {"hard": {"limits.memory": "1Gi"}}}


def _break(c: Cluster, cause: str, ns: str, name: str, rng: random.Random) -> str:
    """Make the trouble; return the name of the object diagnose() must name."""
    nginx = {"name": "app", "image": "nginx:1.27", "resources": LIMITED}
    busybox = {"name": "app", "image": "busybox:1.36", "resources": LIMITED}
    if cause == "InsufficientCPU":
        c.apply(_pod(name, ns, {**nginx, "resources": {"requests": {"cpu": rng.choice(("6", "8", "16"))},
                                                       **LIMITED}}))
    elif cause == "UntoleratedTaint":
        for node in c.node_names:
            c.kubectl(f"taint nodes {node} dedicated={rng.choice(('gpu', 'batch', 'infra'))}:NoSchedule")
        c.apply(_pod(name, ns, nginx))
    elif cause == "UnboundPVC":
        c.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": f"{name}-data", "namespace": ns},
                 # no class: only a pre-made PersistentVolume could bind it (kind's `standard`
                 # would provision one), and there is none
                 "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                          "resources": {"requests": {"storage": "1Gi"}}}})
        c.apply(_pod(name, ns, nginx, volumes=[{"name": "data", "persistentVolumeClaim":
                                                {"claimName": f"{name}-data"}}]))
    elif cause == "ImagePullBackOff":
        image = f"nginx:1.{rng.randint(90, 99)}-typo"
        c.faults.break_registry(image, "notfound")   # a tag nobody ever pushed
        c.apply(_pod(name, ns, {**nginx, "image": image}))
    elif cause == "CrashLoopBackOff":
        command = ["sh", "-c", f"echo starting; exit {rng.randint(1, 3)}"]
        c.apply(_pod(name, ns, {**busybox, "command": command}))
    elif cause == "CreateContainerConfigError":
        c.apply({"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": f"{name}-config", "namespace": ns}, "data": {"color": "blue"}})
        c.apply(_pod(name, ns, {**busybox, "command": ["sleep", "3600"], "env": [
            {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": f"{name}-config", "key": "mode"}}}]}))
    elif cause == "OOMKilled":
        c.apply(_pod(name, ns, {"name": "app", "image": "polinux/stress",
                                "command": ["stress", "--vm", "1", "--vm-bytes", "150M", "--vm-hang", "1"],
                                "resources": {"limits": {"memory": "100Mi"}}}))
    elif cause == "ReadinessProbe":
        c.apply(_deployment(name, ns, {**nginx, "readinessProbe": {
            "exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 5}}))
        c.apply(_service(name, ns))
    elif cause == "NodeNotReady":
        node = rng.choice([n for n in c.node_names if n not in c.control_plane_nodes])
        c.faults.kill_node(node)
        return node
    elif cause == "FailedCreate":
        c.apply(_quota(ns))
        c.run(1)   # the resourcequota controller counts the namespace; then the quota applies
        c.apply(_deployment(name, ns, {"name": "app", "image": "nginx:1.27"}))
    else:  # pragma: no cover - a checks' mistake
        raise ValueError(f"unknown cause {cause!r}")
    return name


def broken_cluster(ctx: CheckContext, cause: str) -> tuple[Cluster, str]:
    """A seeded cluster with healthy decoys and one cause of trouble; the object to name."""
    rng = random.Random(f"6.3/{ctx.seed}/{cause}")
    ns = rng.choice(NAMESPACES)
    decoy, name = rng.sample(NAMES, 2)
    c = ctx.cluster(nodes=2)
    c.run(10)
    c.kubectl(f"create namespace {ns}")
    c.run(1)  # its `default` ServiceAccount, which the pods need (the serviceaccount controller)
    c.apply(_deployment(decoy, ns, {"name": "app", "image": "nginx:1.27", "resources": LIMITED,
                                    "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 5}}))
    c.apply(_service(decoy, ns))
    c.apply(_pod("toolbox", ns, {"name": "sh", "image": "busybox:1.36", "command": ["sleep", "86400"],
                                 "resources": LIMITED}))
    c.run(20)
    c.faults.crash_container("toolbox", namespace=ns)   # restarted once: not the trouble
    c.faults.crash("scheduler")
    c.run(2)
    c.faults.restart("scheduler")
    c.run(10)
    target = _break(c, cause, ns, name, rng)
    c.run(60)
    return c, target


def _answer(ctx: CheckContext, c: Cluster) -> tuple[str, str]:
    got = ctx.learner(TroubledCluster(c))
    if not isinstance(got, (list, tuple)) or len(got) != 2 or not all(isinstance(v, str) for v in got):
        ctx.fail("diagnose(c) must return (cause, name): two strings",
                 expected='("CrashLoopBackOff", "orders")', got=repr(got)[:200])
    return str(got[0]), str(got[1])


def _diagnoses(ctx: CheckContext, causes: tuple[str, ...]) -> None:
    for cause in random.Random(f"6.3/{ctx.seed}").sample(causes, len(causes)):
        c, target = broken_cluster(ctx, cause)
        got = _answer(ctx, c)
        if got != (cause, target):
            ctx.fail("the diagnosis of a broken cluster", expected=f"(cause, name) = {(cause, target)}",
                     got=f"(cause, name) = {got}")


@check("6.3", points=3, hint="A Pending pod has a FailedScheduling event: its "
       "message says why (Insufficient cpu, untolerated taint(s), unbound immediate "
       "PersistentVolumeClaims). Name the pod.")
def finds_why_a_pod_is_pending(ctx: CheckContext) -> None:
    _diagnoses(ctx, PENDING)


@check("6.3", points=4, hint="Read the container's state.waiting.reason, and for a "
       "restarting container its lastState.terminated.reason: OOMKilled is not CrashLoopBackOff's "
       "Error, although the STATUS column alternates. Name the pod.")
def finds_why_a_container_does_not_run(ctx: CheckContext) -> None:
    _diagnoses(ctx, CONTAINERS)


@check("6.3", points=3, hint="Look at the nodes first (Ready Unknown: name the node); "
       "a Deployment short of available replicas has either pods that run but never turn Ready "
       "(Unhealthy events: ReadinessProbe) or a ReplicaSet with FailedCreate events: name the "
       "Deployment.")
def finds_what_a_workload_is_missing(ctx: CheckContext) -> None:
    _diagnoses(ctx, WORKLOADS)
