"""The audit log: one record per request, saying who did what, how it ended and where it stopped.

Upstream's audit events (k8s.io/apiserver/pkg/apis/audit) carry user, verb, objectRef and
responseStatus. We add the pipeline stage that rejected a request, so a notebook can show
"authorization refused bob" next to "validation refused the Deployment", and the time the store
made the request wait (a slow etcd makes a slow API).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["STAGES", "AuditRecord"]

# The pipeline, in order. A request passes them left to right; a failure names its stage.
STAGES = (
    "availability",          # a stopped server answers 503 to everything
    "resolve",               # which resource? is the verb served on it?
    "authentication",        # who is asking?
    "impersonation",         # may they act as the user they name (Impersonate-User)?
    "authorization",         # may they? (RBAC)
    "decode",                # strict decoding of the body against the kind's schema
    "mutating-admission",    # plugins that may change the object (defaults, tolerations, ...)
    "validation",            # the kind's own rules, in upstream's field-error words
    "validating-admission",  # plugins that may only say no
    "storage",               # the write to the store (conflicts, preconditions, size)
)


@dataclass(slots=True)
class AuditRecord:
    time: float
    user: str
    verb: str
    resource: str
    namespace: str
    name: str
    subresource: str = ""
    code: int = 0
    stage: str = ""      # the stage that rejected the request; "" when it succeeded
    plugin: str = ""     # the admission plugin that rejected it, if one did
    message: str = ""    # the error's message, if any
    latency: float = 0.0  # virtual seconds the store made this request wait
    stages: list[str] = field(default_factory=list)  # stages passed, in order
    user_agent: str = ""  # the client's User-Agent (audit.k8s.io Event userAgent)
    # API Priority and Fairness (apiserver/flowcontrol/), when it is on: how it classified.
    flow_schema: str = ""
    priority_level: str = ""
    # Who the request acted as, when its user impersonated someone (audit.k8s.io Event
    # impersonatedUser); user stays the requestor. Empty when nobody was impersonated.
    impersonated_user: str = ""
    impersonated_groups: tuple[str, ...] = ()

    @property
    def object(self) -> str:
        """`pods/default/web-1`, `pods/default/web-1/binding`, `nodes/node-1`, `pods/default`."""
        parts = [self.resource]
        if self.namespace:
            parts.append(self.namespace)
        if self.name:
            parts.append(self.name)
        if self.subresource:
            parts.append(self.subresource)
        return "/".join(parts)
