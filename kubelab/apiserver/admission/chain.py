"""Admission: pluggable checks and changes between authorization and storage.

Upstream (k8s.io/apiserver/pkg/admission) runs every *mutating* plugin in order, then the
object's own validation, then every *validating* plugin; any of them may refuse the request.
A plugin here is any object with a `name` and a `mutate(attrs)` and/or `validate(attrs)` method;
to refuse, it raises an ApiError (usually `admission_forbidden(attrs, "why")`).

    class NoLatest(AdmissionPlugin):
        name = "NoLatest"
        def validate(self, attrs):
            if attrs.resource == "pods" and attrs.operation == "CREATE" and ...:
                raise admission_forbidden(attrs, "images must be pinned")

    server.admission.register(NoLatest())

The built-in plugins live in plugins.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kubelab.api.errors import ApiError, forbidden
from kubelab.apiserver.auth.authn import UserInfo

if TYPE_CHECKING:
    from kubelab.apiserver.auth.audit import AuditRecord

__all__ = [
    "AdmissionChain",
    "AdmissionPlugin",
    "Attributes",
    "Lister",
    "ReinvocationContext",
    "admission_forbidden",
]

CREATE, UPDATE, DELETE = "CREATE", "UPDATE", "DELETE"


class Lister(Protocol):
    """What a plugin may read: the live state, as upstream plugins read their informers."""

    def get(self, resource: str, namespace: str, name: str, group: str = "") -> dict[str, Any] | None:
        ...

    def namespace_phase(self, name: str) -> str | None:
        """"Active", "Terminating", or None when the namespace does not exist."""
        ...


@dataclass(slots=True)
class ReinvocationContext:
    """admission.ReinvocationContext (pkg/admission/reinvocation.go): a plugin that changed the
    object asks for the mutating chain to run once more (should_reinvoke); during that second
    pass is_reinvoke is True. `values` keeps each plugin's own state between the passes."""

    is_reinvoke: bool = False
    should_reinvoke: bool = False
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Attributes:
    """admission.Attributes: what is being done to what, by whom."""

    operation: str                      # "CREATE", "UPDATE" or "DELETE"
    resource: str                       # "pods"
    group: str
    version: str
    kind: str                           # "Pod"
    subresource: str                    # "", "status", "binding", "scale"
    namespace: str
    name: str
    object: dict[str, Any] | None       # the new object; mutate() may change it in place
    old_object: dict[str, Any] | None   # the live object (UPDATE, DELETE)
    user: UserInfo
    lister: Lister
    dry_run: bool = False
    # The request's audit record: a plugin that waits (a webhook call) adds to its latency.
    # Neither is an init field, so neither crosses to a learner's plugin (kubelab.grading).
    audit: AuditRecord | None = field(default=None, init=False)
    reinvocation: ReinvocationContext = field(default_factory=ReinvocationContext, init=False)


class AdmissionPlugin:
    """Base class for plugins; override mutate, validate or both. Raise ApiError to refuse."""

    name = "AdmissionPlugin"

    def mutate(self, attrs: Attributes) -> None:
        """Change attrs.object in place, or raise ApiError."""

    def validate(self, attrs: Attributes) -> None:
        """Raise ApiError to refuse the request; must not change the object."""


def _overrides(plugin: Any, method: str) -> bool:
    fn = getattr(type(plugin), method, None)
    return callable(fn) and fn is not getattr(AdmissionPlugin, method)


class AdmissionChain:
    """The ordered plugins. `failed_plugin` names the plugin that refused the last request."""

    def __init__(self) -> None:
        self.plugins: list[Any] = []
        self._mutators: list[Any] = []
        self._validators: list[Any] = []
        self.failed_plugin = ""

    def register(self, plugin: Any, *, before: str | None = None) -> None:
        """Add plugin at the end of the chain, or before the plugin named `before`."""
        if not isinstance(getattr(plugin, "name", None), str):
            raise TypeError("an admission plugin needs a `name`")
        if not (_overrides(plugin, "mutate") or _overrides(plugin, "validate")):
            raise TypeError(f"admission plugin {plugin.name} has neither mutate nor validate")
        if any(p.name == plugin.name for p in self.plugins):
            raise ValueError(f"an admission plugin named {plugin.name} is already registered")
        names = [p.name for p in self.plugins]
        self.plugins.insert(names.index(before) if before in names else len(names), plugin)
        self._rebuild()

    def unregister(self, name: str) -> None:
        self.plugins = [p for p in self.plugins if p.name != name]
        self._rebuild()

    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    def _rebuild(self) -> None:
        self._mutators = [p for p in self.plugins if _overrides(p, "mutate")]
        self._validators = [p for p in self.plugins if _overrides(p, "validate")]

    def mutate(self, attrs: Attributes) -> None:
        """Every mutating plugin in order; once more if one of them asks for it
        (pkg/admission/reinvocation.go reinvoker.Admit: the webhooks' reinvocationPolicy)."""
        for plugin in self._mutators:
            self.failed_plugin = plugin.name
            plugin.mutate(attrs)
        if attrs.reinvocation.should_reinvoke and not attrs.reinvocation.is_reinvoke:
            attrs.reinvocation.is_reinvoke = True
            for plugin in self._mutators:
                self.failed_plugin = plugin.name
                plugin.mutate(attrs)
        self.failed_plugin = ""

    def validate(self, attrs: Attributes) -> None:
        for plugin in self._validators:
            self.failed_plugin = plugin.name
            plugin.validate(attrs)
        self.failed_plugin = ""


def admission_forbidden(attrs: Attributes, reason: str) -> ApiError:
    """admission.NewForbidden: `pods "web" is forbidden: <reason>` (403)."""
    name = attrs.name
    if not name and isinstance(attrs.object, dict):
        meta = attrs.object.get("metadata")
        name = meta.get("name") or "" if isinstance(meta, dict) else ""
    return forbidden(attrs.resource, name if isinstance(name, str) else "", reason, attrs.group)
