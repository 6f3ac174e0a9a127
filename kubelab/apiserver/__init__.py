"""The API server: the only door to the store (docs/ARCHITECTURE.md section 1).

    server = APIServer(store, clock, rand, trace=trace)
    server.add_token("token-bob", "bob", ["devs"])
    server.handle(Request("create", "pods", namespace="default", body=pod, token="token-bob"))
    server.watch(Request("watch", "pods", namespace="default"), on_event, on_close)

Read the modules in pipeline order: server.py (the pipeline), authn.py, rbac.py and
bootstrap.py (who may do what), decode.py and schema.py (strict decoding), admission.py and
admission_plugins.py (with defaults.py), validation/, registry.py, deletion.py, strategy.py and
subresources.py (storage semantics), codec.py (the bytes the store holds), watch_cache.py
(watch fan-out and the spec.nodeName index), crd.py (with crd_schema/, crd_handler.py,
crd_versions.py, crd_finalizer.py and cel.py: custom resources), admission_policy.py
(ValidatingAdmissionPolicy), audit.py.
"""

from kubelab.apiserver.admission import (
    AdmissionChain,
    AdmissionPlugin,
    Attributes,
    admission_forbidden,
)
from kubelab.apiserver.audit import STAGES, AuditRecord
from kubelab.apiserver.authn import (
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
from kubelab.apiserver.watch_cache import WatchInfo

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
