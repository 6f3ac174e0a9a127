"""What the two webhook plugins share: which hooks exist, which apply to a request, and the
call itself.

Follows k8s.io/apiserver pkg/admission/plugin/webhook/generic/webhook.go (Webhook.Dispatch,
ShouldCallHook), predicates/ (rules, namespace, object), matchconditions/matcher.go and
pkg/util/webhook/ (the REST client for a url or a service reference).

- The hooks: every configuration of the kind, sorted by name, each webhook in its order; a
  webhook's id is `<configuration>/<webhook>/<index>` (upstream's accessor UID).
- ShouldCallHook: a rule matches (operations, apiGroups, apiVersions, resources with
  subresources, scope); then namespaceSelector (a cluster-scoped object matches; a Namespace
  is matched by its own labels), objectSelector (the object or the old object), then the
  matchConditions, CEL over `object`, `oldObject` and `request`: a false one skips the
  webhook; an error fails the request (403) unless the failurePolicy is Ignore.
  matchPolicy: kubelab serves one version of each kind, so Exact and Equivalent match alike.
- The call goes through the server's WebhookClient (client.py): a service reference through
  the Service's endpoints, a url through the HTTPS edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kubelab.api import Object
from kubelab.api.errors import ApiError, forbidden
from kubelab.apiserver.admission.chain import Attributes, Lister
from kubelab.apiserver.admission.policy_match import matches
from kubelab.apiserver.admission.webhook.client import WebhookClient
from kubelab.apiserver.cel import CelCompileError, CelEvalError, compile_expression

__all__ = ["Hook", "WebhookLister", "hooks", "should_call_hook"]

GROUP = "admissionregistration.k8s.io"


class WebhookLister(Lister, Protocol):
    """What the webhook plugins read besides single objects (upstream: their informers)."""

    def webhook_configurations(self, resource: str) -> list[Object]:
        ...

    def webhook_client(self) -> WebhookClient:
        ...


@dataclass(frozen=True)
class Hook:
    """One webhook of one configuration (upstream: the WebhookAccessor)."""

    uid: str                  # "<configuration>/<webhook>/<index>"
    configuration: str
    spec: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")

    @property
    def failure_policy(self) -> str:
        return str(self.spec.get("failurePolicy") or "Fail")


def hooks(lister: Any, resource: str) -> list[Hook]:
    """The webhooks of every configuration of `resource`, configurations sorted by name."""
    if not hasattr(lister, "webhook_configurations"):
        return []
    found = []
    for config in sorted(lister.webhook_configurations(resource),
                         key=lambda c: c["metadata"]["name"]):
        name = config["metadata"]["name"]
        for i, spec in enumerate(config.get("webhooks") or []):
            if isinstance(spec, dict):
                found.append(Hook(f"{name}/{spec.get('name')}/{i}", name, spec))
    return found


def exempt(attrs: Attributes) -> bool:
    """IsExemptAdmissionConfigurationResource: a webhook never sees webhook configurations or
    admission policies, so a broken webhook cannot lock its own fix out."""
    return attrs.group == GROUP


def should_call_hook(hook: Hook, attrs: Attributes) -> bool:
    """ShouldCallHook: True to call it, False to skip it; raises a 403 when a matchCondition
    cannot be evaluated and the failurePolicy is Fail."""
    rules = hook.spec.get("rules") or []
    if not rules:
        return False
    constraints = {"resourceRules": rules,
                   "namespaceSelector": hook.spec.get("namespaceSelector") or {},
                   "objectSelector": hook.spec.get("objectSelector") or {}}
    if not matches(constraints, attrs):
        return False
    return _match_conditions(hook, attrs)


def _match_conditions(hook: Hook, attrs: Attributes) -> bool:
    """matchconditions.Matcher.Match: every condition true; one false skips; errors go by the
    failurePolicy (Ignore: skip the webhook)."""
    conditions = hook.spec.get("matchConditions") or []
    if not conditions:
        return True
    activation = {"object": attrs.object, "oldObject": attrs.old_object,
                  "request": _request_variable(attrs)}
    errors: list[str] = []
    for condition in conditions:
        expression = str(condition.get("expression") or "")
        try:
            result = compile_expression(expression).evaluate(activation)
        except (CelCompileError, CelEvalError) as err:
            errors.append(f"expression '{expression}' resulted in error: {err}")
            continue
        if result is False:
            return False
        if result is not True:
            errors.append(f"expression '{expression}' resulted in error: no such overload")
    if not errors:
        return True
    if hook.failure_policy == "Ignore":
        return False
    name = attrs.name or str(((attrs.object or {}).get("metadata") or {}).get("name") or "")
    raise forbidden(attrs.resource, name, "failed to evaluate match conditions: "
                    + "; ".join(errors), attrs.group)


def _request_variable(attrs: Attributes) -> dict[str, Any]:
    user = attrs.user
    return {"kind": {"group": attrs.group, "version": attrs.version, "kind": attrs.kind},
            "resource": {"group": attrs.group, "version": attrs.version,
                         "resource": attrs.resource},
            "subResource": attrs.subresource, "name": attrs.name, "namespace": attrs.namespace,
            "operation": attrs.operation, "dryRun": attrs.dry_run,
            "userInfo": {"username": user.name, "groups": list(user.groups)}}


def dry_run_unsupported(hook: Hook, attrs: Attributes) -> ApiError | None:
    """A dry-run request may only reach a webhook without side effects."""
    if attrs.dry_run and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
        return ApiError(400, "BadRequest",
                        f'admission webhook "{hook.name}" does not support dry run')
    return None
