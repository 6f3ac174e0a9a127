"""The resource types the API serves: kind <-> resource, group, version, scope.

This is what `kubectl api-resources` prints. The API server serves these; clients and kubectl
use the table to turn a manifest's kind into a request path. Custom resources are added at run
time by the API server (register_resource) and need no other code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["BUILTIN_RESOURCES", "DEPRECATED", "ResourceInfo", "ResourceTable"]


@dataclass(frozen=True)
class ResourceInfo:
    resource: str                 # plural, lower case: "pods"
    kind: str                     # "Pod"
    group: str = ""               # "" is the core group
    version: str = "v1"
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    # Name validation: most names are DNS-1123 subdomains; namespaces are labels; Services
    # are DNS-1035 labels ("dns1035": a letter first); "any": not checked (CSRs).
    name_rule: str = "subdomain"
    # The verbs it serves, when not all of them: a review is only ever created.
    verbs: tuple[str, ...] = ()

    def supports(self, verb: str) -> bool:
        return not self.verbs or verb in self.verbs

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def qualified(self) -> str:
        """`pods`, `deployments.apps`: how error messages name the resource."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = (
    ResourceInfo("namespaces", "Namespace", namespaced=False, short_names=("ns",),
                 subresources=("status",), name_rule="label"),
    ResourceInfo("nodes", "Node", namespaced=False, short_names=("no",), subresources=("status",)),
    ResourceInfo("pods", "Pod", short_names=("po",),
                 subresources=("status", "binding", "eviction", "log", "exec", "attach",
                               "portforward", "ephemeralcontainers")),
    ResourceInfo("events", "Event", short_names=("ev",)),
    ResourceInfo("configmaps", "ConfigMap", short_names=("cm",)),
    ResourceInfo("secrets", "Secret"),
    ResourceInfo("serviceaccounts", "ServiceAccount", short_names=("sa",),
                 subresources=("token",)),  # --- sa --- TokenRequest
    ResourceInfo("replicasets", "ReplicaSet", group="apps", short_names=("rs",),
                 subresources=("status", "scale")),
    ResourceInfo("deployments", "Deployment", group="apps", short_names=("deploy",),
                 subresources=("status", "scale")),
    # apps/v1 DaemonSets (kubelab/controllers/daemon/) and the ControllerRevisions that keep
    # each template's history (pkg/controller/history); kubeadm's PriorityClasses.
    ResourceInfo("daemonsets", "DaemonSet", group="apps", short_names=("ds",),
                 subresources=("status",)),
    ResourceInfo("controllerrevisions", "ControllerRevision", group="apps"),
    ResourceInfo("priorityclasses", "PriorityClass", group="scheduling.k8s.io", namespaced=False,
                 short_names=("pc",)),
    ResourceInfo("leases", "Lease", group="coordination.k8s.io"),
    ResourceInfo("roles", "Role", group="rbac.authorization.k8s.io"),
    ResourceInfo("rolebindings", "RoleBinding", group="rbac.authorization.k8s.io"),
    ResourceInfo("clusterroles", "ClusterRole", group="rbac.authorization.k8s.io",
                 namespaced=False),
    ResourceInfo("clusterrolebindings", "ClusterRoleBinding", group="rbac.authorization.k8s.io",
                 namespaced=False),
    ResourceInfo("customresourcedefinitions", "CustomResourceDefinition",
                 group="apiextensions.k8s.io", namespaced=False, short_names=("crd", "crds")),
    # batch/v1 (notebook 08): the Job controller's kind; no short name, as upstream.
    ResourceInfo("jobs", "Job", group="batch", subresources=("status",)),
    ResourceInfo("selfsubjectaccessreviews", "SelfSubjectAccessReview", group="authorization.k8s.io",
                 namespaced=False, verbs=("create",)),
    ResourceInfo("selfsubjectrulesreviews", "SelfSubjectRulesReview", group="authorization.k8s.io",
                 namespaced=False, verbs=("create",)),
    ResourceInfo("selfsubjectreviews", "SelfSubjectReview", group="authentication.k8s.io",
                 namespaced=False, verbs=("create",)),
    # --- csr --- a review for another user (the CSR approver's): who may ask is RBAC's say
    ResourceInfo("subjectaccessreviews", "SubjectAccessReview", group="authorization.k8s.io",
                 namespaced=False, verbs=("create",)),
    # Admission policies (kubelab/apiserver/admission/policy.py)
    ResourceInfo("validatingadmissionpolicies", "ValidatingAdmissionPolicy",
                 group="admissionregistration.k8s.io", namespaced=False, subresources=("status",)),
    ResourceInfo("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding",
                 group="admissionregistration.k8s.io", namespaced=False),
    # Admission webhooks (kubelab/apiserver/admission/webhook/); no short names, as upstream.
    ResourceInfo("mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
                 group="admissionregistration.k8s.io", namespaced=False),
    ResourceInfo("validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
                 group="admissionregistration.k8s.io", namespaced=False),
    # API Priority and Fairness (kubelab/apiserver/flowcontrol/)
    ResourceInfo("flowschemas", "FlowSchema", group="flowcontrol.apiserver.k8s.io",
                 namespaced=False, subresources=("status",)),
    ResourceInfo("prioritylevelconfigurations", "PriorityLevelConfiguration",
                 group="flowcontrol.apiserver.k8s.io", namespaced=False, subresources=("status",)),
    # Services (notebook 09): the Service and the EndpointSlices that list its pods.
    ResourceInfo("services", "Service", short_names=("svc",), subresources=("status",),
                 name_rule="dns1035"),
    ResourceInfo("endpointslices", "EndpointSlice", group="discovery.k8s.io"),
    # Deprecated since v1.19, still served; probed, never stored (registry/componentstatus.py).
    ResourceInfo("componentstatuses", "ComponentStatus", namespaced=False, short_names=("cs",),
                 verbs=("get", "list")),
    # --- i31-sts ---
    # apps/v1 StatefulSets (kubelab/controllers/statefulset/) and core/v1
    # ReplicationControllers (the replication manager, kubelab/controllers/replication/).
    ResourceInfo("statefulsets", "StatefulSet", group="apps", short_names=("sts",),
                 subresources=("status", "scale")),
    ResourceInfo("replicationcontrollers", "ReplicationController", short_names=("rc",),
                 subresources=("status", "scale")),
    # --- i31-cron-pdb ---
    # batch/v1 CronJobs (kubelab/controllers/cronjob/) and policy/v1 PodDisruptionBudgets
    # (kubelab/controllers/disruption/, checked by pods/eviction).
    ResourceInfo("cronjobs", "CronJob", group="batch", short_names=("cj",),
                 subresources=("status",)),
    ResourceInfo("poddisruptionbudgets", "PodDisruptionBudget", group="policy",
                 short_names=("pdb",), subresources=("status",)),
    # --- i31-storage ---
    # Storage (kubelab/controllers/volume/): the claim, the volume, the class that provisions it.
    ResourceInfo("persistentvolumes", "PersistentVolume", namespaced=False, short_names=("pv",),
                 subresources=("status",)),
    ResourceInfo("persistentvolumeclaims", "PersistentVolumeClaim", short_names=("pvc",),
                 subresources=("status",)),
    ResourceInfo("storageclasses", "StorageClass", group="storage.k8s.io", namespaced=False,
                 short_names=("sc",)),
    # --- hpacsi --- CSI (kubelab/controllers/volume/attachdetach.py, csi_hostpath.py)
    ResourceInfo("volumeattachments", "VolumeAttachment", group="storage.k8s.io",
                 namespaced=False, subresources=("status",)),
    ResourceInfo("csidrivers", "CSIDriver", group="storage.k8s.io", namespaced=False),
    # networking.k8s.io/v1: served and validated; kind ships no ingress controller and kubelab
    # runs none, and no component enforces NetworkPolicies (docs/ARCHITECTURE.md, departures).
    ResourceInfo("ingresses", "Ingress", group="networking.k8s.io", short_names=("ing",),
                 subresources=("status",)),
    ResourceInfo("ingressclasses", "IngressClass", group="networking.k8s.io", namespaced=False),
    ResourceInfo("networkpolicies", "NetworkPolicy", group="networking.k8s.io",
                 short_names=("netpol",)),
    # --- i31-hpa ---
    # autoscaling/v2 (kubelab/controllers/podautoscaler/): the HPA controller's kind.
    ResourceInfo("horizontalpodautoscalers", "HorizontalPodAutoscaler", group="autoscaling",
                 version="v2", short_names=("hpa",), subresources=("status",)),
    # --- endpoints ---
    # core/v1 Endpoints: deprecated since v1.33 (EndpointSlice replaces it), still served; the
    # endpoints controller (kubelab/controllers/endpoint/) writes them with Cluster(anatomy=True).
    ResourceInfo("endpoints", "Endpoints", short_names=("ep",)),
    # --- csr --- certificates.k8s.io/v1 (kubelab/controllers/certificates/): the kubelets'
    # client certificates. Approved or Denied only through /approval, the certificate only
    # through /status; any name will do (ValidateCertificateRequestName).
    ResourceInfo("certificatesigningrequests", "CertificateSigningRequest",
                 group="certificates.k8s.io", namespaced=False, short_names=("csr",),
                 subresources=("status", "approval"), name_rule="any"),
    # core/v1 ResourceQuota: the ResourceQuota admission plugin and the resourcequota
    # controller keep its status (kubelab/api/quota/).
    ResourceInfo("resourcequotas", "ResourceQuota", short_names=("quota",),
                 subresources=("status",)),
)

# endpoints/deprecation (the types' APILifecycleDeprecated): the warning every request to a
# deprecated resource carries, as `Warning: 299 - "..."` (kubectl prints "Warning: ...").
DEPRECATED: dict[tuple[str, str], str] = {
    ("", "componentstatuses"): "v1 ComponentStatus is deprecated in v1.19+",
    # --- endpoints ---
    ("", "endpoints"): "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
}


class ResourceTable:
    """Look resources up the ways kubectl does: by plural, singular, short name or kind."""

    def __init__(self, infos: tuple[ResourceInfo, ...] = BUILTIN_RESOURCES) -> None:
        self._infos: list[ResourceInfo] = []
        self._by_name: dict[str, ResourceInfo] = {}
        self._by_kind: dict[tuple[str, str], ResourceInfo] = {}
        for info in infos:
            self.register(info)

    def register(self, info: ResourceInfo) -> None:
        self._infos.append(info)
        self._by_kind[(info.group, info.kind)] = info
        for name in (info.resource, info.singular, *info.short_names, info.qualified,
                     f"{info.singular}.{info.group}" if info.group else info.singular):
            self._by_name.setdefault(name.lower(), info)

    def lookup(self, name: str) -> ResourceInfo | None:
        """`pods`, `pod`, `po`, `deployments.apps`, `Deployment` all find their resource."""
        return self._by_name.get(name.lower()) or self.for_kind_name(name)

    def for_kind_name(self, kind: str) -> ResourceInfo | None:
        matches = [i for i in self._infos if i.kind == kind]
        return matches[0] if matches else None

    def for_kind(self, api_version: str, kind: str) -> ResourceInfo | None:
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        info = self._by_kind.get((group, kind))
        if info is not None and api_version.rpartition("/")[2] != info.version:
            return None
        return info

    def get(self, group: str, resource: str) -> ResourceInfo | None:
        info = self._by_name.get(resource)
        return info if info is not None and info.group == group and info.resource == resource else None

    def __iter__(self) -> Iterator[ResourceInfo]:
        return iter(list(self._infos))
