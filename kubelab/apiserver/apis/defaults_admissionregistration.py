"""admissionregistration/v1 defaults for the webhook configurations
(kubernetes/kubernetes pkg/apis/admissionregistration/v1/defaults.go): SetDefaults_ValidatingWebhook,
SetDefaults_MutatingWebhook, SetDefaults_Rule and SetDefaults_ServiceReference.

failurePolicy Fail, matchPolicy Equivalent, namespaceSelector and objectSelector {} (everything),
timeoutSeconds 10, reinvocationPolicy Never (mutating only), each rule's scope "*", a service
reference's port 443. sideEffects and admissionReviewVersions have no default in v1: validation
requires them.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object

__all__ = ["set_mutating_webhook_configuration_defaults",
           "set_validating_webhook_configuration_defaults"]


def _webhook(hook: dict[str, Any], mutating: bool) -> None:
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    for selector in ("namespaceSelector", "objectSelector"):
        if hook.get(selector) is None:
            hook[selector] = {}
    if hook.get("timeoutSeconds") is None:
        hook["timeoutSeconds"] = 10
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    for rule in hook.get("rules") or ():
        if isinstance(rule, dict) and rule.get("scope") is None:
            rule["scope"] = "*"
    service = (hook.get("clientConfig") or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def _configuration(obj: Object, mutating: bool) -> None:
    for hook in obj.get("webhooks") or ():
        if isinstance(hook, dict):
            _webhook(hook, mutating)


def set_mutating_webhook_configuration_defaults(obj: Object) -> None:
    _configuration(obj, True)


def set_validating_webhook_configuration_defaults(obj: Object) -> None:
    _configuration(obj, False)
