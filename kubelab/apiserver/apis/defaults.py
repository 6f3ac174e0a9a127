"""Defaults: the fields the API server fills in when a manifest leaves them out.

Upstream applies these while decoding a request, before admission (the SetDefaults_* functions
of pkg/apis/core/v1/defaults.go and pkg/apis/apps/v1/defaults.go), plus the Priority admission
plugin's `priority: 0`. kubelab runs them as the first mutating admission plugin ("Defaults",
admission_plugins.py) so that the notebook can show them as one visible step, and switch them off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.apiserver.apis.defaults_admissionregistration import (
    set_mutating_webhook_configuration_defaults,
    set_validating_webhook_configuration_defaults,
)
from kubelab.apiserver.apis.defaults_autoscaling import set_horizontal_pod_autoscaler_defaults
from kubelab.apiserver.apis.defaults_flowcontrol import (
    set_flow_schema_defaults,
    set_priority_level_defaults,
)
from kubelab.apiserver.apis.defaults_services import (
    set_endpoint_slice_defaults,
    set_endpoints_defaults,
    set_service_defaults,
)
from kubelab.apiserver.apis.defaults_storage import (
    set_network_policy_defaults,
    set_persistent_volume_claim_defaults,
    set_persistent_volume_defaults,
    set_storage_class_defaults,
)
from kubelab.apiserver.registry.batch import set_defaults_job

__all__ = ["DEFAULTERS", "SYSTEM_PRIORITIES", "image_pull_policy", "set_defaults"]

# pkg/apis/scheduling/types.go: SystemCriticalPriority = 2 * HighestUserDefinablePriority.
SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}

def image_pull_policy(image: str) -> str:
    """Always for `:latest` or no tag, IfNotPresent for any other tag or a digest.

    SetDefaults_Container with parsers.ParseImageName: the tag is what follows the last ':'
    after the last '/'; no tag and no digest means "latest".
    """
    if "@" in image:
        return "IfNotPresent"
    name = image.rsplit("/", 1)[-1]
    tag = name.rsplit(":", 1)[1] if ":" in name else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _container(c: Object) -> None:
    if not isinstance(c, dict):
        return
    if not c.get("imagePullPolicy"):
        image = c.get("image")
        c["imagePullPolicy"] = image_pull_policy(image) if isinstance(image, str) else "IfNotPresent"
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    for port in c.get("ports") or ():
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    if c.get("resources") is None:
        c["resources"] = {}


def pod_spec(spec: Any) -> None:
    """SetDefaults_PodSpec and the Priority plugin's defaults (pods and pod templates)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
    elif spec["priorityClassName"] in SYSTEM_PRIORITIES:
        # The Priority admission plugin's lookup, for the two classes every cluster has
        # (pkg/apis/scheduling: SystemNodeCritical, SystemClusterCritical); kubelab resolves no
        # other class (docs/ARCHITECTURE.md, departures).
        spec.setdefault("priority", SYSTEM_PRIORITIES[spec["priorityClassName"]])
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        if isinstance(containers, list):
            for c in containers:
                _container(c)


def _template(spec: Object) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        pod_spec(template.get("spec"))


def _pod(obj: Object) -> None:
    """SetDefaults_Pod: the pod spec's defaults, then a limit without a request requests the
    limit. Only a Pod gets this, not a pod template (a Deployment's, a Job's, ...): the
    template keeps what was written, and the pods made from it get the requests when they
    are created."""
    spec = obj.get("spec")
    pod_spec(spec)
    if not isinstance(spec, dict):
        return
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
                requests = resources.get("requests")
                if not isinstance(requests, dict):
                    requests = resources["requests"] = {}
                for name, quantity in resources["limits"].items():
                    requests.setdefault(name, quantity)


def _deployment(obj: Object) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def _daemonset(obj: Object) -> None:
    """SetDefaults_DaemonSet (pkg/apis/apps/v1/defaults.go)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", 1)
                rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _replicaset(obj: Object) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("replicas", 1)
        _template(spec)


def _job(obj: Object) -> None:
    set_defaults_job(obj)  # kubelab/apiserver/registry/batch.py
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _template(spec)


# --- i31-cron-pdb ---
def _cronjob(obj: Object) -> None:
    """SetDefaults_CronJob (pkg/apis/batch/v1/defaults.go), and the pod template's defaults
    (the job template itself gets SetDefaults_Job only when the controller creates a Job)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_spec = (spec.get("jobTemplate") or {}).get("spec")
    if isinstance(job_spec, dict):
        _template(job_spec)


def _namespace(obj: Object) -> None:
    # The immutable label every namespace carries (NamespaceDefaultLabelName, since 1.21).
    meta = obj.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
        labels = meta.get("labels")
        if labels is None:
            labels = meta["labels"] = {}
        if isinstance(labels, dict):
            labels["kubernetes.io/metadata.name"] = meta["name"]


def _secret(obj: Object) -> None:
    # core/v1 SetDefaults_Secret: a Secret with no type is Opaque.
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _role_binding(obj: Object) -> None:
    # rbac/v1 SetDefaults_Subject.
    for subject in obj.get("subjects") or ():
        if isinstance(subject, dict) and not subject.get("apiGroup"):
            kind = subject.get("kind")
            if kind in ("User", "Group"):
                subject["apiGroup"] = "rbac.authorization.k8s.io"
            elif kind == "ServiceAccount":
                subject["apiGroup"] = ""


# --- i31-sts ---
def _statefulset(obj: Object) -> None:
    """SetDefaults_StatefulSet (pkg/apis/apps/v1/defaults.go). maxUnavailable is left unset:
    1.34's MaxUnavailableStatefulSet gate is alpha, off."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            strategy.setdefault("rollingUpdate", {})
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            rolling.setdefault("partition", 0)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        for field in ("whenDeleted", "whenScaled"):
            if not policy.get(field):
                policy[field] = "Retain"
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    for claim in spec.get("volumeClaimTemplates") or ():
        # SetDefaults_PersistentVolumeClaim(Spec), run on the embedded claims too.
        if isinstance(claim, dict) and isinstance(claim.setdefault("spec", {}), dict):
            claim["spec"].setdefault("volumeMode", "Filesystem")
            if isinstance(claim.setdefault("status", {}), dict):
                claim["status"].setdefault("phase", "Pending")
    _template(spec)


def _replication_controller(obj: Object) -> None:
    """SetDefaults_ReplicationController (pkg/apis/core/v1/defaults.go): the selector and the
    object's labels come from the template's labels when empty."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    labels = ((template.get("metadata") or {}).get("labels")
              if isinstance(template, dict) else None)
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.get("metadata")
        if isinstance(meta, dict) and not meta.get("labels"):
            meta["labels"] = dict(labels)
    spec.setdefault("replicas", 1)
    _template(spec)
# ---


# --- hpacsi ---
def set_csi_driver_defaults(driver: Object) -> None:
    """SetDefaults_CSIDriver (storage/v1): attach required, no pod info, no capacity tracking,
    fsGroup for ReadWriteOnce volumes with an fsType, persistent volumes only."""
    spec = driver.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    for key, value in (("attachRequired", True), ("podInfoOnMount", False),
                       ("storageCapacity", False), ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
                       ("requiresRepublish", False), ("seLinuxMount", False)):
        spec.setdefault(key, value)
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


DEFAULTERS: dict[str, Callable[[Object], None]] = {
    "pods": _pod,
    "secrets": _secret,
    "deployments": _deployment,
    "replicasets": _replicaset,
    "daemonsets": _daemonset,
    "namespaces": _namespace,
    "rolebindings": _role_binding,
    "clusterrolebindings": _role_binding,
    "flowschemas": set_flow_schema_defaults,
    "prioritylevelconfigurations": set_priority_level_defaults,
    "jobs": _job,
    "services": set_service_defaults,
    "endpointslices": set_endpoint_slice_defaults,
    "mutatingwebhookconfigurations": set_mutating_webhook_configuration_defaults,
    "validatingwebhookconfigurations": set_validating_webhook_configuration_defaults,
    # --- i31-sts ---
    "statefulsets": _statefulset,
    "replicationcontrollers": _replication_controller,
    # --- i31-cron-pdb ---
    "cronjobs": _cronjob,
    # --- i31-storage ---
    "persistentvolumes": set_persistent_volume_defaults,
    "persistentvolumeclaims": set_persistent_volume_claim_defaults,
    "storageclasses": set_storage_class_defaults,
    "networkpolicies": set_network_policy_defaults,
    # --- i31-hpa ---
    "horizontalpodautoscalers": set_horizontal_pod_autoscaler_defaults,
    # --- hpacsi --- storage/v1 SetDefaults_CSIDriver
    "csidrivers": lambda d: set_csi_driver_defaults(d) if isinstance(d, dict) else None,
    # scheduling/v1 SetDefaults_PriorityClass
    "priorityclasses": lambda pc: pc.setdefault("preemptionPolicy", "PreemptLowerPriority")
    if isinstance(pc, dict) else None,
    # --- endpoints ---
    "endpoints": set_endpoints_defaults,
    # --- csr --- certificates/v1 SetDefaults_CertificateSigningRequestCondition
    "certificatesigningrequests": lambda csr: _csr_conditions(csr) if isinstance(csr, dict) else None,
}


def _csr_conditions(csr: Object) -> None:
    """A condition without a status is True."""
    status = csr.get("status")
    for condition in (status.get("conditions") or []) if isinstance(status, dict) else []:
        if isinstance(condition, dict) and not condition.get("status"):
            condition["status"] = "True"


def set_defaults(resource: str, obj: Object) -> None:
    """Fill in obj's defaults in place (built-in resources only; others are left alone)."""
    defaulter = DEFAULTERS.get(resource)
    if defaulter is not None:
        defaulter(obj)
