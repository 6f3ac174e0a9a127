"""The built-in admission plugins, in the order the API server runs them.

- Defaults (mutating): the fields upstream fills in while decoding (defaults.py).
- NamespaceLifecycle (mutating): no new objects in a namespace that is missing or terminating;
  the system namespaces may not be deleted
  (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go).
- DefaultTolerationSeconds (mutating): pods tolerate not-ready/unreachable nodes for 300s, so
  their eviction waits five minutes (plugin/pkg/admission/defaulttolerationseconds).
- DefaultStorageClass (mutating): a claim without a class gets the default StorageClass
  (storageclass.py).
- StorageObjectInUseProtection (mutating): new claims and volumes carry the pvc-protection and
  pv-protection finalizers (storageclass.py).
- PersistentVolumeClaimResize (validating): a claim grows only when bound and its class allows
  expansion (resize.py).
- Priority (mutating and validating): a pod's priorityClassName becomes its priority, a missing
  class refuses it; one globalDefault PriorityClass at most (priority.py).
- MutatingAdmissionWebhook (mutating): the MutatingWebhookConfigurations' webhooks, after the
  built-in mutating plugins (webhook/mutating.py).
- NodeRestriction (validating): a kubelet may only change its own Node, its own Lease and the
  status of pods bound to it, and may only request service account tokens bound to a pod on
  its node, for an audience that pod's volumes use or that RBAC allows it
  (request-serviceaccounts-token-audience) (plugin/pkg/admission/noderestriction/admission.go,
  admitServiceAccount, validateNodeServiceAccountAudience).
- ValidatingAdmissionPolicy (validating): the CEL policies bound by
  ValidatingAdmissionPolicyBindings (policy.py).
- ValidatingAdmissionWebhook (validating): the ValidatingWebhookConfigurations' webhooks
  (webhook/validating.py).
- ResourceQuota (validating): the namespace's ResourceQuotas, last, as upstream orders it
  (pkg/kubeapiserver/options/plugins.go): what a request would use is checked against each
  quota's hard limits and charged to its status.used (resourcequota.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api.errors import not_found
from kubelab.apiserver.admission.chain import (
    CREATE,
    DELETE,
    UPDATE,
    AdmissionPlugin,
    Attributes,
    admission_forbidden,
)
from kubelab.apiserver.admission.policy import ValidatingAdmissionPolicy
from kubelab.apiserver.admission.priority import Priority
from kubelab.apiserver.admission.resize import PersistentVolumeClaimResize
from kubelab.apiserver.admission.resourcequota import ResourceQuota
from kubelab.apiserver.admission.storageclass import DefaultStorageClass, StorageObjectInUseProtection
from kubelab.apiserver.admission.webhook import MutatingAdmissionWebhook, ValidatingAdmissionWebhook
from kubelab.apiserver.apis.defaults import set_defaults
from kubelab.apiserver.auth.rbac import AuthzAttributes

__all__ = [
    "IMMORTAL_NAMESPACES",
    "DefaultTolerationSeconds",
    "Defaults",
    "NamespaceLifecycle",
    "NodeRestriction",
    "default_plugins",
]

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
NODE_LEASE_NAMESPACE = "kube-node-lease"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


class Defaults(AdmissionPlugin):
    name = "Defaults"

    def mutate(self, attrs: Attributes) -> None:
        # Upstream defaults every body it decodes; kubelab skips the subresources' bodies,
        # but for CSRs, whose conditions arrive through /approval and /status (--- csr ---).
        if attrs.operation != DELETE and attrs.object is not None and (
                not attrs.subresource or attrs.resource == "certificatesigningrequests"):
            set_defaults(attrs.resource, attrs.object)


class NamespaceLifecycle(AdmissionPlugin):
    name = "NamespaceLifecycle"

    def mutate(self, attrs: Attributes) -> None:
        if attrs.resource == "namespaces" and not attrs.group:
            if attrs.operation == DELETE and attrs.name in IMMORTAL_NAMESPACES:
                raise admission_forbidden(attrs, "this namespace may not be deleted")
            return
        if attrs.operation != CREATE or not attrs.namespace:
            return
        phase = attrs.lister.namespace_phase(attrs.namespace)
        if phase is None:
            raise not_found("namespaces", attrs.namespace)
        if phase == "Terminating":
            err = admission_forbidden(attrs, f"unable to create new content in namespace "
                                      f"{attrs.namespace} because it is being terminated")
            err.details.setdefault("causes", []).append({
                "reason": "NamespaceTerminating", "field": "metadata.namespace",
                "message": f"namespace {attrs.namespace} is being terminated"})
            raise err


NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


class DefaultTolerationSeconds(AdmissionPlugin):
    name = "DefaultTolerationSeconds"
    seconds = 300

    def mutate(self, attrs: Attributes) -> None:
        if attrs.resource != "pods" or attrs.group or attrs.subresource or \
                attrs.operation != CREATE or not isinstance(attrs.object, dict):
            return
        spec = attrs.object.get("spec")
        if not isinstance(spec, dict):
            return
        tolerations = spec.get("tolerations") or []
        if not isinstance(tolerations, list):
            return
        for key in (NOT_READY, UNREACHABLE):
            if not any(isinstance(t, dict) and t.get("key", "") in (key, "") and
                       t.get("effect", "") in ("NoExecute", "") for t in tolerations):
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                    "tolerationSeconds": self.seconds})
        spec["tolerations"] = tolerations


class NodeRestriction(AdmissionPlugin):
    name = "NodeRestriction"

    def __init__(self, authorize: Callable[[AuthzAttributes], bool] | None = None) -> None:
        self.authorize = authorize  # SetAuthorizer: the server's, for the audience check

    def validate(self, attrs: Attributes) -> None:
        node = attrs.user.node_name
        if node is None or attrs.group not in ("", "coordination.k8s.io"):
            return
        if attrs.resource == "pods":
            self._pod(attrs, node)
        elif attrs.resource == "nodes":
            self._node(attrs, node)
        elif attrs.resource == "serviceaccounts" and not attrs.group:
            self._service_account(attrs, node)
        elif attrs.resource == "leases":
            if attrs.namespace != NODE_LEASE_NAMESPACE:
                raise admission_forbidden(attrs, 'can only access leases in the '
                                          f'"{NODE_LEASE_NAMESPACE}" system namespace')
            if _name(attrs) != node:
                raise admission_forbidden(attrs, "can only access node lease with the same "
                                          "name as the requesting node")

    @staticmethod
    def _pod(attrs: Attributes, node: str) -> None:
        op, sub = attrs.operation, attrs.subresource
        if sub == "status":
            if _spec(attrs.old_object).get("nodeName") != node:
                raise admission_forbidden(attrs, f'node "{node}" can only update pod status '
                                          "for pods with spec.nodeName set to itself")
            if _meta(attrs.object).get("labels") != _meta(attrs.old_object).get("labels"):
                raise admission_forbidden(attrs, f'node "{node}" cannot update labels through '
                                          "pod status")
        elif sub:
            raise admission_forbidden(attrs, f'unexpected pod subresource "{sub}", only '
                                      "'status' and 'eviction' are allowed")
        elif op == DELETE:
            if _spec(attrs.old_object).get("nodeName") != node:
                raise admission_forbidden(attrs, f'node "{node}" can only delete pods with '
                                          "spec.nodeName set to itself")
        elif op == CREATE:
            if MIRROR_POD_ANNOTATION not in (_meta(attrs.object).get("annotations") or {}):
                raise admission_forbidden(attrs, f'pod does not have "{MIRROR_POD_ANNOTATION}" '
                                          f'annotation, node "{node}" can only create mirror pods')
            if _spec(attrs.object).get("nodeName") != node:
                raise admission_forbidden(attrs, f'node "{node}" can only create pods with '
                                          "spec.nodeName set to itself")
        else:
            raise admission_forbidden(attrs, f'unexpected operation "{op}", node "{node}" can '
                                      "only create and delete mirror pods")

    def _service_account(self, attrs: Attributes, node: str) -> None:
        """admitServiceAccount: a node's TokenRequest must be bound to a pod (by name and uid)
        that is scheduled on that node."""
        if attrs.operation != CREATE or attrs.subresource != "token":
            return
        ref = _spec(attrs.object).get("boundObjectRef")
        if not isinstance(ref, dict) or ref.get("apiVersion") != "v1" or \
                ref.get("kind") != "Pod" or not ref.get("name"):
            raise admission_forbidden(attrs, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise admission_forbidden(attrs, "node requested token with a pod binding without a uid")
        pod = attrs.lister.get("pods", attrs.namespace, str(ref["name"]))
        if pod is None:
            raise not_found("pods", str(ref["name"]))
        if ref["uid"] != _meta(pod).get("uid"):
            raise admission_forbidden(attrs, f"the UID in the bound object reference ({ref['uid']}) "
                                      "does not match the UID in record. The object might have "
                                      "been deleted and then recreated")
        if _spec(pod).get("nodeName") != node:
            raise admission_forbidden(attrs, "node requested token bound to a pod scheduled on a "
                                      "different node")
        self._service_account_audience(attrs, pod)

    def _service_account_audience(self, attrs: Attributes, pod: dict[str, Any]) -> None:
        """validateNodeServiceAccountAudience (ServiceAccountNodeAudienceRestriction, on by
        default): the audience must be one the pod's volumes use, or the node must be allowed
        the verb request-serviceaccounts-token-audience on it."""
        audiences = _spec(attrs.object).get("audiences") or []
        if not isinstance(audiences, list) or len(audiences) > 1:
            raise admission_forbidden(attrs, "node may only request 0 or 1 audiences")
        audience = str(audiences[0]) if audiences else ""
        if _pod_references_audience(attrs, pod, audience):
            return
        if self.authorize is not None and self.authorize(AuthzAttributes(
                attrs.user, "request-serviceaccounts-token-audience", "", audience, "",
                attrs.namespace, attrs.name)):
            return
        raise admission_forbidden(attrs, f'audience "{audience}" not found in pod spec volume, '
                                  f"{attrs.user.name} is not authorized to request tokens for "
                                  "this audience")

    @staticmethod
    def _node(attrs: Attributes, node: str) -> None:
        if _name(attrs) != node:
            raise admission_forbidden(attrs, f'node "{node}" is not allowed to modify node '
                                      f'"{_name(attrs)}"')
        if attrs.operation == UPDATE and \
                _spec(attrs.object).get("taints") != _spec(attrs.old_object).get("taints"):
            raise admission_forbidden(attrs, f'node "{node}" is not allowed to modify taints')


def _pod_references_audience(attrs: Attributes, pod: dict[str, Any], audience: str) -> bool:
    """podReferencesAudience: a projected serviceAccountToken with that audience, or a CSI
    volume (inline, or a claim's volume) whose CSIDriver's tokenRequests name it."""
    namespace = _meta(pod).get("namespace") or attrs.namespace
    for volume in _spec(pod).get("volumes") or []:
        for source in (volume.get("projected") or {}).get("sources") or []:
            token = source.get("serviceAccountToken")
            if isinstance(token, dict) and str(token.get("audience") or "") == audience:
                return True
        driver = str((volume.get("csi") or {}).get("driver") or "")
        claim_name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim_name:  # getCSIFromPVC
            claim = attrs.lister.get("persistentvolumeclaims", namespace, str(claim_name))
            volume_name = str(_spec(claim).get("volumeName") or "")
            pv = attrs.lister.get("persistentvolumes", "", volume_name) if volume_name else None
            driver = str((_spec(pv).get("csi") or {}).get("driver") or "")
        if driver:  # csiDriverHasAudience
            csidriver = attrs.lister.get("csidrivers", "", driver, "storage.k8s.io")
            if any(str(r.get("audience") or "") == audience
                   for r in _spec(csidriver).get("tokenRequests") or []):
                return True
    return False


def _meta(obj: Any) -> dict[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def _spec(obj: Any) -> dict[str, Any]:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return spec if isinstance(spec, dict) else {}


def _name(attrs: Attributes) -> str:
    name = attrs.name or _meta(attrs.object).get("name") or ""
    return name if isinstance(name, str) else ""


def default_plugins(authorize: Callable[[AuthzAttributes], bool] | None = None
                    ) -> list[AdmissionPlugin]:
    """authorize: the server's authorizer, for the plugins that want one (WantsAuthorizer)."""
    return [Defaults(), NamespaceLifecycle(), DefaultTolerationSeconds(), Priority(),
            DefaultStorageClass(), StorageObjectInUseProtection(),  # --- i31-storage ---
            PersistentVolumeClaimResize(),  # --- hpacsi ---
            MutatingAdmissionWebhook(),
            NodeRestriction(authorize), ValidatingAdmissionPolicy(), ValidatingAdmissionWebhook(),
            ResourceQuota()]

