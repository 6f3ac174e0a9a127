"""Validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration
(kubernetes/kubernetes pkg/apis/admissionregistration/validation/validation.go:
validateMutatingWebhookConfiguration, validateValidatingWebhook, validateRuleWithOperations,
validateResources, validateAdmissionReviewVersions, validateMatchConditions; the client config
by k8s.io/apiserver pkg/util/webhook/validation.go ValidateWebhookURL and ValidateWebhookService).

Create and update use the same rules (upstream relaxes a few on update only for objects that
were stored before a rule existed, which cannot happen here).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.validation import is_dns1035_label, is_dns1123_subdomain, is_qualified_name
from kubelab.apiserver.apis.validation.scheduling import validate_label_selector
from kubelab.apiserver.cel import CelCompileError, compile_expression

__all__ = ["validate_mutating_webhook_configuration", "validate_validating_webhook_configuration"]

FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
REINVOCATION_POLICIES = ["IfNeeded", "Never"]
SCOPES = ["*", "Cluster", "Namespaced"]
REVIEW_VERSIONS = ["v1", "v1beta1"]
MAX_MATCH_CONDITIONS = 64
_FORM = "; desired format: https://host[/path]"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def is_fully_qualified_name(path: str, name: Any) -> list[FieldError]:
    """utilvalidation.IsFullyQualifiedName: a DNS subdomain of at least three segments."""
    if not name:
        return [field_required(path)]
    problems = is_dns1123_subdomain(str(name))
    if problems:
        return [field_invalid(path, name, ",".join(problems))]
    if len(str(name).split(".")) < 3:
        return [field_invalid(path, name, "should be a domain with at least three segments "
                              "separated by dots")]
    return []


def _resources(resources: list[Any], path: str) -> list[FieldError]:
    """validateResources: `x`, `x/y`, `x/*`, `*/y`, `*`, `*/*`, without contradictions."""
    errs: list[FieldError] = [] if resources else [field_required(path)]
    with_wild_sub: set[str] = set()
    wild_res_subs: set[str] = set()
    double = single = plain = False
    for i, entry in enumerate(resources):
        entry = str(entry)
        if not entry:
            errs.append(field_required(f"{path}[{i}]"))
            continue
        double = double or entry == "*/*"
        single = single or entry == "*"
        if "/" not in entry:
            plain = entry != "*"
            continue
        res, sub = entry.split("/", 1)
        if res in with_wild_sub:
            errs.append(field_invalid(f"{path}[{i}]", entry,
                                      f"if '{res}/*' is present, must not specify {entry}"))
        if sub in wild_res_subs:
            errs.append(field_invalid(f"{path}[{i}]", entry,
                                      f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            with_wild_sub.add(res)
        if res == "*":
            wild_res_subs.add(sub)
    if len(resources) > 1 and double:
        errs.append(field_invalid(path, resources, "if '*/*' is present, must not specify other "
                                  "resources"))
    if single and plain:
        errs.append(field_invalid(path, resources, "if '*' is present, must not specify other "
                                  "resources without subresources"))
    return errs


def validate_rule_with_operations(rule: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    operations = _list(rule.get("operations"))
    if not operations:
        errs.append(field_required(f"{path}.operations"))
    if len(operations) > 1 and "*" in operations:
        errs.append(field_invalid(f"{path}.operations", operations,
                                  "if '*' is present, must not specify other operations"))
    for i, op in enumerate(operations):
        if op not in OPERATIONS:
            errs.append(field_not_supported(f"{path}.operations[{i}]", op, OPERATIONS))
    groups, versions = _list(rule.get("apiGroups")), _list(rule.get("apiVersions"))
    if not groups:
        errs.append(field_required(f"{path}.apiGroups"))
    if len(groups) > 1 and "*" in groups:
        errs.append(field_invalid(f"{path}.apiGroups", groups,
                                  "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(field_required(f"{path}.apiVersions"))
    if len(versions) > 1 and "*" in versions:
        errs.append(field_invalid(f"{path}.apiVersions", versions,
                                  "if '*' is present, must not specify other API versions"))
    errs += [field_required(f"{path}.apiVersions[{i}]") for i, v in enumerate(versions) if v == ""]
    errs += _resources(_list(rule.get("resources")), f"{path}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(field_not_supported(f"{path}.scope", scope, SCOPES))
    return errs


def validate_webhook_url(path: str, url: str) -> list[FieldError]:
    """ValidateWebhookURL with forceHttps."""
    try:
        parts = urlsplit(url)
    except ValueError as err:
        return [field_required(path, f"url must be a valid URL: {err}{_FORM}")]
    errs = []
    if parts.scheme != "https":
        errs.append(field_invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _FORM))
    if not parts.netloc:
        errs.append(field_invalid(path, parts.netloc, "host must be specified" + _FORM))
    if "@" in parts.netloc:
        errs.append(field_invalid(path, parts.netloc.rsplit("@", 1)[0],
                                  "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(field_invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(field_invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def validate_webhook_service(path: str, service: dict[str, Any]) -> list[FieldError]:
    """ValidateWebhookService: name, namespace, port, and a path of DNS-subdomain segments."""
    errs = []
    if not service.get("name"):
        errs.append(field_required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        errs.append(field_required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(field_invalid(f"{path}.port", port, "port is not valid: must be between 1 "
                                  "and 65535, inclusive"))
    url_path = service.get("path")
    if url_path is None or url_path in ("", "/"):
        return errs
    url_path = str(url_path)
    if url_path == "//":
        return [*errs, field_invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(field_invalid(f"{path}.path", url_path, "must start with a '/'"))
    check = url_path[1:]
    check = check[:-1] if check.endswith("/") else check
    for i, step in enumerate(check.split("/")):
        if not step:
            errs.append(field_invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [field_invalid(f"{path}.path", url_path, f"segment[{i}]: {m}")
                 for m in is_dns1123_subdomain(step)]
    return errs


def validate_match_conditions(conditions: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        errs.append(FieldError("Too many", path, len(conditions),
                               f"must have at most {MAX_MATCH_CONDITIONS} items"))
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        condition, where = _dict(condition), f"{path}[{i}]"
        name = str(condition.get("name") or "")
        if not name:
            errs.append(field_required(f"{where}.name"))
        else:
            errs += [field_invalid(f"{where}.name", name, m) for m in is_qualified_name(name)]
            if name in seen:
                errs.append(field_duplicate(f"{where}.name", name))
            seen.add(name)
        expression = str(condition.get("expression") or "")
        if not expression.strip():
            errs.append(field_required(f"{where}.expression"))
            continue
        try:
            compile_expression(expression)
        except CelCompileError as err:
            errs.append(field_invalid(f"{where}.expression", expression, f"compilation failed: {err}"))
    return errs


def _admission_review_versions(versions: list[Any], path: str) -> list[FieldError]:
    if not versions:
        return [field_required(path, "must specify one of " + ", ".join(REVIEW_VERSIONS))]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, raw in enumerate(versions):
        version = str(raw)
        if version in seen:
            errs.append(field_invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [field_invalid(f"{path}[{i}]", version, m) for m in is_dns1035_label(version)]
    if not any(v in REVIEW_VERSIONS for v in versions):
        errs.append(field_invalid(path, versions, "must include at least one of "
                                  + ", ".join(REVIEW_VERSIONS)))
    return errs


def validate_webhook(hook: dict[str, Any], path: str, mutating: bool) -> list[FieldError]:
    """validateMutatingWebhook / validateValidatingWebhook."""
    errs = is_fully_qualified_name(f"{path}.name", hook.get("name"))
    for i, rule in enumerate(_list(hook.get("rules"))):
        errs += validate_rule_with_operations(_dict(rule), f"{path}.rules[{i}]")
    for field, allowed in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        value = hook.get(field)
        if value is not None and value not in allowed:
            errs.append(field_not_supported(f"{path}.{field}", value, allowed))
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(field_required(f"{path}.sideEffects",
                                   "must specify one of " + ", ".join(NO_SIDE_EFFECTS)))
    elif side_effects not in NO_SIDE_EFFECTS:
        errs.append(field_not_supported(f"{path}.sideEffects", side_effects, NO_SIDE_EFFECTS))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or not 1 <= timeout <= 30):
        errs.append(field_invalid(f"{path}.timeoutSeconds", timeout,
                                  "the timeout value must be between 1 and 30 seconds"))
    for selector in ("namespaceSelector", "objectSelector"):
        if hook.get(selector) is not None:
            errs += validate_label_selector(hook[selector], f"{path}.{selector}")
    policy = hook.get("reinvocationPolicy")
    if mutating and policy is not None and policy not in REINVOCATION_POLICIES:
        errs.append(field_not_supported(f"{path}.reinvocationPolicy", policy, REINVOCATION_POLICIES))
    config = _dict(hook.get("clientConfig"))
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        errs.append(field_required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif url is not None:
        errs += validate_webhook_url(f"{path}.clientConfig.url", str(url))
    else:
        errs += validate_webhook_service(f"{path}.clientConfig.service", _dict(service))
    errs += validate_match_conditions(_list(hook.get("matchConditions")), f"{path}.matchConditions")
    return errs


def _configuration(obj: Object, mutating: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(_list(obj.get("webhooks"))):
        hook, path = _dict(hook), f"webhooks[{i}]"
        errs += validate_webhook(hook, path, mutating)
        errs += _admission_review_versions(_list(hook.get("admissionReviewVersions")),
                                           f"{path}.admissionReviewVersions")
        name = hook.get("name")
        if name:
            if name in names:
                errs.append(field_duplicate(f"{path}.name", name))
            names.add(name)
    return errs


def validate_mutating_webhook_configuration(obj: Object) -> list[FieldError]:
    return _configuration(obj, True)


def validate_validating_webhook_configuration(obj: Object) -> list[FieldError]:
    return _configuration(obj, False)
