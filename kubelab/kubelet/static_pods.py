"""Static pods: pods the kubelet runs from its own manifests, with no API server involved.

This is how a control plane starts itself (kubeadm puts etcd and kube-apiserver manifests in
/etc/kubernetes/manifests). Here the manifests come from the Node given to the Cluster, as YAML
in the annotation `kubelab.dev/static-pods`, or from the Kubelet's `static_pods` argument.

Following pkg/kubelet/config/common.go (applyDefaults) each manifest gets a UID hashed from its
content and source, the name `<name>-<node>`, spec.nodeName, the config.hash / config.source /
config.seen annotations and a toleration of every NoExecute taint (a node problem never evicts
a static pod). The kubelet runs it whatever the API server says, and, following
pkg/kubelet/pod/mirror_client.go, keeps a *mirror pod* in the API so that people can see it:
the same pod with the annotation `kubernetes.io/config.mirror: <hash>`, owned by the Node. A
mirror pod that is deleted, or no longer matches, is deleted (grace period 0) and created again;
deleting it never stops the static pod.
"""

from __future__ import annotations

import copy
import hashlib
import json

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.meta import rfc3339
from kubelab.api.yamlio import load_objects
from kubelab.client.client import Client

__all__ = ["CONFIG_HASH", "CONFIG_MIRROR", "CONFIG_SOURCE", "STATIC_PODS_ANNOTATION",
           "MirrorClient", "apply_defaults", "is_mirror_pod", "static_pods_from"]

STATIC_PODS_ANNOTATION = "kubelab.dev/static-pods"
CONFIG_MIRROR = "kubernetes.io/config.mirror"
CONFIG_HASH = "kubernetes.io/config.hash"
CONFIG_SOURCE = "kubernetes.io/config.source"
CONFIG_SEEN = "kubernetes.io/config.seen"


def is_mirror_pod(pod: Object) -> bool:
    return CONFIG_MIRROR in ((pod.get("metadata") or {}).get("annotations") or {})


def static_pods_from(node: Object | None, extra: list[Object] | None, node_name: str,
                     now: float) -> list[Object]:
    """The node's static pods, defaulted. Bad manifests raise ValueError in plain words."""
    manifests: list[Object] = []
    text = (((node or {}).get("metadata") or {}).get("annotations") or {}).get(STATIC_PODS_ANNOTATION)
    if text:
        try:
            manifests += load_objects(str(text))
        except (ParseError, ValueError) as err:
            raise ValueError(f"annotation {STATIC_PODS_ANNOTATION}: {err}") from None
    manifests += [copy.deepcopy(m) for m in extra or []]
    pods = []
    for i, m in enumerate(manifests):
        if not isinstance(m, dict) or m.get("kind") != "Pod" or \
                not ((m.get("metadata") or {}).get("name")) or not (m.get("spec") or {}).get("containers"):
            raise ValueError(f"static pod manifest {i}: a Pod with metadata.name and "
                             "spec.containers is required")
        pods.append(apply_defaults(m, node_name, source=f"/etc/kubernetes/manifests/{i}.yaml", now=now))
    return pods


def _pull_policy(image: str) -> str:
    name = image.split("@")[0].rsplit("/", 1)[-1]
    return "Always" if "@" not in image and (":" not in name or name.endswith(":latest")) \
        else "IfNotPresent"


def apply_defaults(manifest: Object, node_name: str, *, source: str, now: float) -> Object:
    pod = copy.deepcopy(manifest)
    meta = pod.setdefault("metadata", {})
    spec = pod.setdefault("spec", {})
    # The API's defaults, which a static pod never gets from an API server.
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        c.setdefault("imagePullPolicy", _pull_policy(str(c.get("image", ""))))
    digest = hashlib.md5(json.dumps(pod, sort_keys=True).encode()
                         + f"host:{node_name}file:{source}".encode()).hexdigest()
    meta.setdefault("uid", digest)
    meta["name"] = f"{meta['name']}-{node_name.lower()}"
    meta.setdefault("namespace", "default")
    spec["nodeName"] = node_name
    annotations = meta.setdefault("annotations", {})
    annotations.update({CONFIG_HASH: meta["uid"], CONFIG_SOURCE: "file", CONFIG_SEEN: rfc3339(now)})
    spec.setdefault("tolerations", []).append({"operator": "Exists", "effect": "NoExecute"})
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    pod["status"] = {"phase": "Pending"}
    return pod


class MirrorClient:
    """Creates and deletes mirror pods (mirror_client.go)."""

    def __init__(self, client: Client, node_name: str) -> None:
        self.client, self.node_name = client, node_name
        self.node_uid = ""

    def ensure(self, static: Object, mirror: Object | None) -> None:
        """Make the API show a mirror of `static`. Raises ApiError if it cannot (yet)."""
        digest = static["metadata"]["annotations"][CONFIG_HASH]
        if mirror is not None:
            meta = mirror["metadata"]
            if not meta.get("deletionTimestamp") and \
                    (meta.get("annotations") or {}).get(CONFIG_MIRROR) == digest:
                return
            self.delete(mirror)  # being deleted, or a mirror of something else: start over
        self.create(static)

    def create(self, static: Object) -> Object:
        if not self.node_uid:
            self.node_uid = self.client.get("nodes", self.node_name)["metadata"]["uid"]
        pod = copy.deepcopy(static)
        meta = pod["metadata"]
        meta.pop("uid", None)
        meta["annotations"][CONFIG_MIRROR] = meta["annotations"][CONFIG_HASH]
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": self.node_name,
                                    "uid": self.node_uid, "controller": True}]
        pod.pop("status", None)
        return self.client.create(pod)

    def delete(self, mirror: Object) -> None:
        meta = mirror["metadata"]
        try:
            self.client.delete("pods", meta["name"], meta.get("namespace", "default"),
                               grace_period_seconds=0, preconditions={"uid": meta["uid"]})
        except ApiError as err:
            if err.code not in (404, 409):
                raise
