"""The API server: the only door to the store (docs/ARCHITECTURE.md section 1).

    server = APIServer(store, clock, rand, trace=trace)
    server.add_token("token-bob", "bob", ["devs"])
    server.handle(Request("create", "pods", namespace="default", body=pod, token="token-bob"))
    server.watch(Request("watch", "pods", namespace="default"), on_event, on_close)

Read the packages in pipeline order, as k8s.io/apiserver lays them out: server.py (the handler
chain), auth/ (authentication, RBAC, reviews, the audit log) with bootstrap.py (the default
policy), flowcontrol/ (API Priority and Fairness), endpoints/ (reading a body, strict decoding,
patch, apply, subresources), admission/ (the plugin chain, ValidatingAdmissionPolicy and the webhooks), apis/
(each group's schema, defaults and validation), registry/ (the generic store, per-kind
strategies, deletion, the Service REST), storage/ (the codec, the watch cache, compaction),
apiextensions/ (CRDs, with cel.py) and printers/ (the Tables `kubectl get` prints).
"""

from kubelab.apiserver.admission.chain import (
    AdmissionChain,
    AdmissionPlugin,
    Attributes,
    admission_forbidden,
)
from kubelab.apiserver.auth.audit import STAGES, AuditRecord
from kubelab.apiserver.auth.authn import (
    ADMIN,
    ANONYMOUS,
    CONTROLLER_MANAGER,
    MASTERS,
    NODES,
    SCHEDULER,
    UserInfo,
    node_user,
)
from kubelab.apiserver.server import APIServer, WatchInterceptor
from kubelab.apiserver.storage.watch_cache import WatchInfo

__all__ = [
    "ADMIN",
    "ANONYMOUS",
    "CONTROLLER_MANAGER",
    "MASTERS",
    "NODES",
    "SCHEDULER",
    "STAGES",
    "APIServer",
    "AdmissionChain",
    "AdmissionPlugin",
    "Attributes",
    "AuditRecord",
    "UserInfo",
    "WatchInfo",
    "WatchInterceptor",
    "admission_forbidden",
    "node_user",
]
