"""What a new API server writes into an empty store: system namespaces and the default RBAC policy.

Upstream's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go and
controller_policy.go) is reconciled into real ClusterRole/ClusterRoleBinding objects at start-up,
labelled kubernetes.io/bootstrapping=rbac-defaults; so are the namespaces default, kube-system,
kube-public and kube-node-lease. kubelab keeps the same shape with the rules its own components
need. Two simplifications: kube-controller-manager is one identity holding the union of its
controllers' roles (upstream gives each controller a service account), and system:node is bound
to the group system:nodes (upstream's Node authorizer does that job; NodeRestriction admission
still keeps each kubelet to its own objects).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kubelab.api.request import Request
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.auth.authn import (
    ALL_AUTHENTICATED,
    CONTROLLER_MANAGER,
    MASTERS,
    NODES,
    SCHEDULER,
    UserInfo,
)
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.endpoints.decode import decode_body

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["LOOPBACK", "SYSTEM_NAMESPACES", "bootstrap", "bootstrap_objects", "ensure_objects"]

# The server itself, writing its bootstrap objects (upstream uses a loopback client).
LOOPBACK = UserInfo("system:apiserver", (MASTERS,))

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
READ = ["get", "list", "watch"]
WRITE = ["create", "update", "patch", "delete", "deletecollection"]
RBAC = "rbac.authorization.k8s.io"
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"


def rule(verbs: list[str], groups: list[str], resources: list[str]) -> dict[str, Any]:
    return {"verbs": verbs, "apiGroups": groups, "resources": resources}


def _meta(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults",
                                     **(labels or {})},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def cluster_role(name: str, rules: list[dict[str, Any]], labels: dict[str, str] | None = None,
                 aggregate: str = "") -> dict[str, Any]:
    role: dict[str, Any] = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
                            "metadata": _meta(name, labels), "rules": rules}
    if aggregate:
        role["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {AGGREGATE + aggregate: "true"}}]}
    return role


def binding(name: str, kind: str, subject: str) -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": RBAC, "kind": kind, "name": subject}]}


WORKLOADS = ["pods", "configmaps", "secrets", "serviceaccounts", "events"]
APPS = ["deployments", "deployments/scale", "replicasets", "replicasets/scale"]

CLUSTER_ROLES = [
    cluster_role("cluster-admin", [rule(["*"], ["*"], ["*"]), {"verbs": ["*"], "nonResourceURLs": ["*"]}]),
    # The user-facing roles are aggregated: their rules are those of every ClusterRole
    # labelled aggregate-to-<role>, so a CRD author can extend them with one labelled role.
    cluster_role("admin", [], aggregate="admin"),
    cluster_role("edit", [], {AGGREGATE + "admin": "true"}, aggregate="edit"),
    cluster_role("view", [], {AGGREGATE + "edit": "true"}, aggregate="view"),
    cluster_role("system:aggregate-to-admin", [
        rule(READ + WRITE, [RBAC], ["roles", "rolebindings"])], {AGGREGATE + "admin": "true"}),
    cluster_role("system:aggregate-to-edit", [
        rule(READ + WRITE, [""], ["pods", "configmaps", "secrets", "serviceaccounts"]),
        rule(READ + WRITE, ["apps"], [*APPS, "daemonsets"]),
        rule(READ + WRITE, ["batch"], ["jobs"]),
        # --- i31-sts ---
        rule(READ + WRITE, ["apps"], ["statefulsets", "statefulsets/scale"]),
        rule(READ + WRITE, [""], ["replicationcontrollers", "replicationcontrollers/scale"]),
        # --- i31-cron-pdb ---
        rule(READ + WRITE, ["batch"], ["cronjobs"]),
        rule(READ + WRITE, ["policy"], ["poddisruptionbudgets"]),
        rule(["create"], [""], ["pods/eviction"]),
        rule(READ + WRITE, [""], ["persistentvolumeclaims"]),  # --- i31-storage ---
        rule(READ + WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    ], {AGGREGATE + "edit": "true"}),
    cluster_role("system:aggregate-to-view", [
        rule(READ, [""], ["pods", "pods/status", "configmaps", "serviceaccounts", "events",
                          "namespaces", "namespaces/status"]),
        rule(READ, ["apps"], [*APPS, "deployments/status", "replicasets/status", "daemonsets",
                              "daemonsets/status", "controllerrevisions"]),
        rule(READ, ["batch"], ["jobs", "jobs/status"]),
        # --- i31-sts ---
        rule(READ, ["apps"], ["statefulsets", "statefulsets/scale", "statefulsets/status"]),
        rule(READ, [""], ["replicationcontrollers", "replicationcontrollers/scale",
                          "replicationcontrollers/status"]),
        # --- i31-cron-pdb ---
        rule(READ, ["batch"], ["cronjobs", "cronjobs/status"]),
        rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
        rule(READ, [""], ["persistentvolumeclaims", "persistentvolumeclaims/status"]),  # i31-storage
        rule(READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
        rule(READ, [""], ["resourcequotas", "resourcequotas/status"]),
    ], {AGGREGATE + "view": "true"}),
    # What every authenticated user may do (policy.go): ask the authorizer about itself
    # (`kubectl auth can-i`), and read the server's discovery and health endpoints.
    cluster_role("system:basic-user", [
        rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews",
                                                    "selfsubjectrulesreviews"]),
        rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"])]),
    cluster_role("system:discovery", [{"verbs": ["get"], "nonResourceURLs": [
        "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
        "/readyz", "/version", "/version/"]}]),
    cluster_role("system:kube-scheduler", [
        rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"]),
        # Its leader election Lease (policy.go: create any, get and update its own).
        rule(["create"], ["coordination.k8s.io"], ["leases"]),
        {**rule(["get", "update"], ["coordination.k8s.io"], ["leases"]),
         "resourceNames": ["kube-scheduler"]},
        rule([*READ, "delete"], [""], ["pods"]),
        rule(["create"], [""], ["pods/binding", "bindings"]),
        rule(["patch", "update"], [""], ["pods/status"]),
        rule(READ, [""], ["nodes", "namespaces", "configmaps"]),
        rule(READ, ["apps"], ["replicasets"]),
        # --- i31-storage --- the VolumeBinding plugin (policy.go: volumescheduling)
        rule(READ, [""], ["persistentvolumeclaims", "persistentvolumes"]),
        rule(["patch", "update"], [""], ["persistentvolumeclaims"]),
        rule(READ, ["storage.k8s.io"], ["storageclasses", "csinodes"]),
        # --- preempt --- DefaultPreemption reads the disruption budgets (policy.go)
        rule(READ, ["policy"], ["poddisruptionbudgets"]),
    ]),
    cluster_role("system:kube-controller-manager", [
        # The garbage collector and namespace controller must reach every resource.
        rule([*READ, "patch", "update", "delete", "deletecollection"], ["*"], ["*"]),
        rule(["create"], ["", "events.k8s.io"], WORKLOADS),
        rule(["create"], ["apps"], ["replicasets", "deployments", "controllerrevisions"]),
        rule(["create"], ["discovery.k8s.io"], ["endpointslices"]),
        rule(["create"], [""], ["persistentvolumeclaims"]),  # --- i31-sts --- StatefulSets' claims
        rule(["create"], ["coordination.k8s.io"], ["leases"]),
        {**rule(["get", "update"], ["coordination.k8s.io"], ["leases"]),
         "resourceNames": ["kube-controller-manager"]},
        # --- i31-cron-pdb --- the CronJob controller creates Jobs
        rule(["create"], ["batch"], ["jobs"]),
        # --- i31-storage --- the PV controller and the provisioner create volumes
        rule(["create"], [""], ["persistentvolumes"]),
        # --- hpacsi --- the attach/detach controller creates VolumeAttachments
        rule(["create"], ["storage.k8s.io"], ["volumeattachments"]),
        # --- endpoints --- the endpoints controller (policy.go: endpoint-controller)
        rule(["create"], [""], ["endpoints"]),
        # --- csr --- the CSR approver asks SubjectAccessReviews and approves the kubelets'
        # client requests; the signer signs for the kubernetes.io signers (controller_policy.go)
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
        {**rule(["approve"], ["certificates.k8s.io"], ["signers"]),
         "resourceNames": ["kubernetes.io/kube-apiserver-client-kubelet"]},
        {**rule(["sign"], ["certificates.k8s.io"], ["signers"]),
         "resourceNames": ["kubernetes.io/kube-apiserver-client",
                           "kubernetes.io/kube-apiserver-client-kubelet",
                           "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"]},
    ]),
    cluster_role("system:node", [
        rule([*READ, "create", "update", "patch", "delete"], [""], ["nodes"]),
        rule(["update", "patch"], [""], ["nodes/status", "pods/status"]),
        rule([*READ, "create", "delete"], [""], ["pods"]),
        rule(["create", "update", "patch"], ["", "events.k8s.io"], ["events"]),
        rule(READ, [""], ["configmaps", "secrets", "services"]),
        rule([*READ, "create", "update", "patch", "delete"], ["coordination.k8s.io"],
             ["leases"]),
        # --- i31-storage --- the volume manager reads the claims and volumes it mounts
        rule(READ, [""], ["persistentvolumeclaims", "persistentvolumes"]),
        # --- hpacsi --- NodeRules' ExpandPersistentVolumes: the kubelet finishes a resize
        rule(["get", "update", "patch"], [""], ["persistentvolumeclaims/status"]),
        # NodeRules: the CSI plugin reads its driver and waits for the attachment
        rule(["get"], ["storage.k8s.io"], ["volumeattachments"]),
        rule(READ, ["storage.k8s.io"], ["csidrivers"]),
        # --- csr --- NodeRules: a kubelet asks for (and renews) its client certificate
        rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
        # --- token --- the token manager's TokenRequests (NodeRestriction keeps a kubelet to
        # tokens bound to the pods on its node)
        rule(["create"], [""], ["serviceaccounts/token"]),
    ]),
    # kube-proxy (notebook 09): policy.go's system:node-proxier, bound to system:kube-proxy.
    cluster_role("system:node-proxier", [
        rule(["list", "watch"], [""], ["services", "endpoints"]),
        rule(["get", "list", "watch"], [""], ["nodes"]),
        rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"]),
        rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
    ]),
]

CLUSTER_ROLE_BINDINGS = [
    binding("cluster-admin", "Group", MASTERS),
    binding("system:basic-user", "Group", ALL_AUTHENTICATED),
    binding("system:discovery", "Group", ALL_AUTHENTICATED),
    binding("system:kube-scheduler", "User", SCHEDULER),
    binding("system:kube-controller-manager", "User", CONTROLLER_MANAGER),
    binding("system:node", "Group", NODES),
    binding("system:node-proxier", "User", "system:kube-proxy"),
]


def bootstrap_objects() -> list[tuple[str, dict[str, Any]]]:
    """(resource, object) pairs to create if absent, in order."""
    objects: list[tuple[str, dict[str, Any]]] = [
        ("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        for name in SYSTEM_NAMESPACES]
    objects += [("clusterroles", role) for role in CLUSTER_ROLES]
    objects += [("clusterrolebindings", b) for b in CLUSTER_ROLE_BINDINGS]
    return objects


def bootstrap(server: APIServer) -> None:
    """Create each bootstrap object that does not exist yet, through the registry."""
    ensure_objects(server, [("" if resource == "namespaces" else RBAC, resource, obj)
                            for resource, obj in bootstrap_objects()])


def ensure_objects(server: APIServer, objects: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
    """Create every (group, resource, object) whose object is missing, in order, as the
    server itself (LOOPBACK): RBAC's bootstrap policy and priority and fairness's
    configuration ensurer (flowcontrol/bootstrap.py) both come through here."""
    for group, resource, obj in objects:
        served = server.served.lookup(group, resource)
        name = obj["metadata"]["name"]
        if served is None or server.store.range(served.key("", name)).kvs:
            continue
        record = AuditRecord(server.clock.now, LOOPBACK.name, "create", resource, "", name)
        ctx = RequestContext(Request("create", resource, group=group, body=obj), served,
                             LOOPBACK, record, server)
        ctx.enter("decode")
        server.registry.create(ctx, decode_body(obj, served.info, served.schema))
        record.code = 201
        server.log(record)
