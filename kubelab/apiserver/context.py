"""What the pipeline knows about one request as it goes: the resource it resolved to, the user
it authenticated as, and the audit record that collects the stages it passed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kubelab.api.errors import FieldError
from kubelab.api.request import Request
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.admission.chain import Attributes
from kubelab.apiserver.apis.schema import Struct
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.auth.authn import UserInfo
from kubelab.apiserver.registry.strategy import Strategy
from kubelab.apiserver.registry.table import TableConvertor

if TYPE_CHECKING:
    from kubelab.apiserver.aggregator import APIServiceBackend
    from kubelab.apiserver.apiextensions.handler import CustomResourceSchema
    from kubelab.apiserver.registry.service.allocators import Pending
    from kubelab.apiserver.server import APIServer

__all__ = ["RESTHooks", "RequestContext", "Served"]

# Verbs per subresource ("" is the object itself), as the REST handlers upstream register them.
OBJECT_VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete",
                          "deletecollection"})
SUBRESOURCE_VERBS = {
    "status": frozenset({"get", "update", "patch"}),
    "scale": frozenset({"get", "update", "patch"}),
    "binding": frozenset({"create"}),
    "eviction": frozenset({"create"}),
    "log": frozenset({"get"}),
    "exec": frozenset({"get", "create"}),      # GET: a WebSocket upgrade; POST: SPDY
    "attach": frozenset({"get", "create"}),
    "portforward": frozenset({"get", "create"}),
    "ephemeralcontainers": frozenset({"get", "update", "patch"}),
    "finalize": frozenset({"update"}),
    "token": frozenset({"create"}),  # --- sa --- serviceaccounts/token (TokenRequest)
    "approval": frozenset({"get", "update", "patch"}),  # --- csr --- certificatesigningrequests
}


class RESTHooks(Protocol):
    """A kind's hooks around the generic store: genericregistry.Store's BeginCreate and
    BeginUpdate (services: ClusterIP and NodePort allocation, registry/service/). Each returns
    what the request reserved; finish() releases whatever no stored object claimed once the
    request ends (upstream: the FinishFunc they return, called with success or not)."""

    def begin_create(self, obj: dict[str, Any]) -> Pending: ...

    def begin_update(self, key: str, obj: dict[str, Any], old: dict[str, Any]) -> Pending: ...

    def finish(self, pending: Pending) -> None: ...


@dataclass
class Served:
    """One resource the server serves, with everything the generic registry needs."""

    info: ResourceInfo
    strategy: Strategy
    prefix: str                      # "/registry/pods/": the store keys of its objects
    #                                  (storage/prefixes.py key_prefix; nodes: "/registry/minions/")
    builtin: bool                    # False for custom resources
    schema: Struct | None            # strict decoding schema; None: metadata only
    subresources: frozenset[str]
    extra_validation: Callable[[dict[str, Any]], list[FieldError]] | None = None
    # Writes to it change the server itself (RBAC objects, namespaces, CRDs): see serving.py.
    affects_server: bool = False
    # A custom resource's schema: pruning, defaulting, validation (apiextensions/handler.py).
    custom: CustomResourceSchema | None = None
    # The kind's own REST hooks around the generic store (services: ClusterIP and NodePort
    # allocation, kubelab.apiserver.registry.service.ServiceAllocators); None for every other kind.
    rest: RESTHooks | None = None
    # How a get or list asked `as=Table` is answered (registry/table.py); None: the default
    # table convertor.
    table_convertor: TableConvertor | None = None
    # An aggregated API's extension server (apiserver/aggregator.py): every request is proxied
    # to it; nothing is stored. None for every stored resource.
    backend: APIServiceBackend | None = None
    # --- hpacsi --- a resource of a group proxied whole (serving.py serve_proxied_group).
    proxied_group: bool = False

    def verbs(self, subresource: str) -> frozenset[str]:
        if not subresource:
            return frozenset(self.info.verbs) if self.info.verbs else OBJECT_VERBS
        if self.proxied_group:
            return frozenset(self.info.verbs)  # the backend knows its subresources (hpacsi)
        return SUBRESOURCE_VERBS.get(subresource, frozenset()) \
            if subresource in self.subresources else frozenset()

    def key(self, namespace: str, name: str) -> str:
        return f"{self.prefix}{namespace}/{name}" if self.info.namespaced else self.prefix + name


@dataclass(slots=True)
class RequestContext:
    request: Request
    served: Served
    user: UserInfo
    record: AuditRecord
    server: APIServer

    # enter(stage): the request reaches `stage`; if it fails from now on, `stage` rejected it.
    # (It appends to the audit record's list of stages passed.)
    enter: Callable[[str], None] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.enter = self.record.stages.append

    def attributes(self, operation: str, obj: dict[str, Any] | None,
                   old: dict[str, Any] | None) -> Attributes:
        r, info = self.request, self.served.info
        name = r.name or (((obj or {}).get("metadata") or {}).get("name") or "")
        attrs = Attributes(operation, info.resource, info.group, info.version, info.kind,
                           r.subresource, r.namespace, name, obj, old, self.user,
                           self.server.served, r.dry_run)
        attrs.audit = self.record
        return attrs
