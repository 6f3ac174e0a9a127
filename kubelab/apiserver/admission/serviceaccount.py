"""The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount/admission.go).

On a pod's create (no subresource) Admit:
- leaves a mirror pod's spec alone (the kubelet's static pods: Validate only);
- defaults spec.serviceAccountName to `default`;
- looks the account up, and refuses the pod when it is missing:
  `pods "web" is forbidden: error looking up service account default/robot: serviceaccount
  "robot" not found`;
- when the token should be mounted (shouldAutomount: the pod's automountServiceAccountToken,
  else the account's, else true) adds the projected volume kube-api-access-<5 letters> (the
  bound token, expiring after 3607 s; ca.crt from the kube-root-ca.crt ConfigMap; the
  namespace through the downward API; mode 0644) and mounts it read-only at
  /var/run/secrets/kubernetes.io/serviceaccount in every init container and container that
  mounts nothing there already;
- copies the account's imagePullSecrets to a pod that names none.
Validate refuses a mirror pod that names a service account or uses secrets, configmaps or
projected volumes (`a mirror pod may not reference service accounts`, ...).

The kubelet's volume manager mounts the projected volume (kubelab/kubelet/volumemanager/), so
`cat /var/run/secrets/kubernetes.io/serviceaccount/namespace` in a container prints its
namespace. kubelab registers the plugin only in the anatomy (Cluster(anatomy=True), `kubelab
serve`; kubelab/cluster/control_plane.py), between NamespaceLifecycle and
DefaultTolerationSeconds as upstream's plugin order puts it: a departure (upstream: always on),
so pods of other clusters keep their specs and their traces. The volume's suffix comes from a
seeded random source (upstream: utilrand), so it is the same on every run.
"""

from __future__ import annotations

import random
from typing import Any

from kubelab.api.meta import random_suffix
from kubelab.apiserver.admission.chain import CREATE, AdmissionPlugin, Attributes, admission_forbidden

__all__ = ["DEFAULT_API_TOKEN_MOUNT_PATH", "DEFAULT_SERVICE_ACCOUNT_NAME", "ServiceAccount"]

DEFAULT_SERVICE_ACCOUNT_NAME = "default"
DEFAULT_API_TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
SERVICE_ACCOUNT_VOLUME_NAME = "kube-api-access"
DEFAULT_TOKEN_EXPIRATION_SECONDS = 3607  # serviceaccount.WarnOnlyBoundTokenExpirationSeconds
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def token_volume_source() -> dict[str, Any]:
    """TokenVolumeSource: the projection of the bound token, the root CA and the namespace."""
    return {"sources": [
        {"serviceAccountToken": {"expirationSeconds": DEFAULT_TOKEN_EXPIRATION_SECONDS,
                                 "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
        "defaultMode": 0o644}


def _is_pod_create(attrs: Attributes) -> bool:
    """shouldIgnore's opposite: a pod, no subresource, an object."""
    return attrs.resource == "pods" and not attrs.group and not attrs.subresource and \
        attrs.operation == CREATE and isinstance(attrs.object, dict) and \
        isinstance(attrs.object.get("spec"), dict)


def _is_mirror(pod: dict[str, Any]) -> bool:
    return MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


def should_automount(sa: dict[str, Any], pod: dict[str, Any]) -> bool:
    """The pod's automountServiceAccountToken wins, then the account's; default true."""
    spec = pod["spec"]
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if sa.get("automountServiceAccountToken") is not None:
        return bool(sa["automountServiceAccountToken"])
    return True


class ServiceAccount(AdmissionPlugin):
    name = "ServiceAccount"

    def __init__(self, rand: random.Random | None = None) -> None:
        self.rand = rand or random.Random(0)
        self.mount_service_account_token = True

    def mutate(self, attrs: Attributes) -> None:
        if not _is_pod_create(attrs):
            return
        pod = attrs.object
        assert pod is not None
        if _is_mirror(pod):
            return  # Don't modify the spec of mirror pods (Validate refuses what they may not use)
        spec = pod["spec"]
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT_NAME
        name = str(spec["serviceAccountName"])
        spec["serviceAccount"] = name  # the v1 conversion's DeprecatedServiceAccount
        sa = attrs.lister.get("serviceaccounts", attrs.namespace, name)
        if sa is None:
            raise admission_forbidden(attrs, f"error looking up service account "
                                      f"{attrs.namespace}/{name}: serviceaccount \"{name}\" not found")
        if self.mount_service_account_token and should_automount(sa, pod):
            self.mount_service_account_token_volume(pod)
        if not spec.get("imagePullSecrets") and sa.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in sa["imagePullSecrets"]
                                        if isinstance(s, dict)]

    def mount_service_account_token_volume(self, pod: dict[str, Any]) -> None:
        """mountServiceAccountToken: find or add the kube-api-access-* volume, mount it."""
        spec = pod["spec"]
        volumes = spec.setdefault("volumes", [])
        volume_name = next((v.get("name") for v in volumes if isinstance(v, dict) and
                            str(v.get("name", "")).startswith(SERVICE_ACCOUNT_VOLUME_NAME + "-")),
                           None)
        if volume_name is None:
            volume_name = f"{SERVICE_ACCOUNT_VOLUME_NAME}-{random_suffix(self.rand)}"
            volumes.append({"name": volume_name, "projected": token_volume_source()})
        for field in ("initContainers", "containers"):
            for container in spec.get(field) or []:
                if not isinstance(container, dict):
                    continue
                mounts = container.setdefault("volumeMounts", [])
                if not any(isinstance(m, dict) and m.get("mountPath") == DEFAULT_API_TOKEN_MOUNT_PATH
                           for m in mounts):
                    mounts.append({"name": volume_name, "readOnly": True,
                                   "mountPath": DEFAULT_API_TOKEN_MOUNT_PATH})

    def validate(self, attrs: Attributes) -> None:
        if not _is_pod_create(attrs) or not _is_mirror(attrs.object or {}):
            return
        spec = (attrs.object or {})["spec"]
        if spec.get("serviceAccountName"):
            raise admission_forbidden(attrs, "a mirror pod may not reference service accounts")
        for volume in spec.get("volumes") or []:
            if not isinstance(volume, dict):
                continue
            if volume.get("secret") is not None:
                raise admission_forbidden(attrs, "a mirror pod may not reference secrets")
            if volume.get("configMap") is not None:
                raise admission_forbidden(attrs, "a mirror pod may not reference configmaps")
            if volume.get("projected") is not None:
                raise admission_forbidden(attrs, "a mirror pod may not use projected volumes")
