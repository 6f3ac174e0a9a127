"""Which requests a ValidatingAdmissionPolicy (and its binding) applies to, and the API rules
of the two kinds.

Matching follows k8s.io/apiserver pkg/admission/plugin/policy/matching/matching.go and
pkg/admission/plugin/webhook/predicates (rules, namespace, object): a request matches
matchConstraints when one resourceRule matches it (operations, apiGroups, apiVersions,
resources with `pods/status` and `*/scale` subresource forms, resourceNames, scope), no
excludeResourceRule does, its namespace's labels match namespaceSelector (cluster-scoped
objects always do, except a Namespace, whose own labels count) and the object's or the old
object's labels match objectSelector. A binding's matchResources narrows the policy's.

The API rules follow pkg/apis/admissionregistration/validation/validation.go for the common
mistakes: among them each expression compiles (kubelab/apiserver/cel_check.py; a validation's
must evaluate to bool, a messageExpression to string), variables compile in order with the
ones before them (so a cycle is an undefined field of `variables`), and operations are
`*`, CREATE, UPDATE, DELETE or CONNECT.
"""

from __future__ import annotations

import re
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, ParseError, field_invalid, field_not_supported, field_required
from kubelab.api.labels import selector_from_label_selector
from kubelab.apiserver.admission.chain import Attributes
from kubelab.apiserver.cel_check import DYN, CelCheckError, CelType, check

__all__ = ["matches", "validate_binding", "validate_policy"]

FAILURE_POLICIES = ["Fail", "Ignore"]
ACTIONS = ["Audit", "Deny", "Warn"]
REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"]
NOT_FOUND_ACTIONS = ["Allow", "Deny"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
_CEL_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _labels(obj: Any) -> dict[str, str]:
    return dict(_dict(_dict(obj).get("metadata")).get("labels") or {})


def _in(value: str, allowed: Any) -> bool:
    allowed = list(allowed or [])
    return "*" in allowed or value in allowed


def _resource_matches(resource: str, subresource: str, allowed: Any) -> bool:
    for entry in allowed or []:
        if entry in ("*/*",):
            return True
        base, _, sub = str(entry).partition("/")
        if (base in ("*", resource)) and (sub == subresource or (sub == "*" and subresource)):
            return True
    return False


def _rule_matches(rule: dict[str, Any], attrs: Attributes) -> bool:
    scope = rule.get("scope") or "*"
    if (scope == "Cluster" and attrs.namespace) or (scope == "Namespaced" and not attrs.namespace):
        return False
    names = rule.get("resourceNames") or []
    return (_in(attrs.operation, rule.get("operations")) and _in(attrs.group, rule.get("apiGroups"))
            and _in(attrs.version, rule.get("apiVersions"))
            and _resource_matches(attrs.resource, attrs.subresource, rule.get("resources"))
            and (not names or attrs.name in names))


def _selects(selector: Any, labels: dict[str, str]) -> bool:
    try:
        return selector_from_label_selector(selector if selector is not None else {}).matches(labels)
    except ParseError:
        return False


def matches(constraints: Any, attrs: Attributes) -> bool:
    """Does the request match these matchConstraints (or a binding's matchResources)?"""
    constraints = _dict(constraints)
    rules = [r for r in constraints.get("resourceRules") or [] if isinstance(r, dict)]
    if rules and not any(_rule_matches(r, attrs) for r in rules):
        return False
    if any(_rule_matches(r, attrs) for r in constraints.get("excludeResourceRules") or []
           if isinstance(r, dict)):
        return False
    namespace_selector = constraints.get("namespaceSelector")
    if attrs.resource == "namespaces" and not attrs.group:
        if not _selects(namespace_selector, _labels(attrs.object or attrs.old_object)):
            return False
    elif attrs.namespace:
        namespace = attrs.lister.get("namespaces", "", attrs.namespace)
        if not _selects(namespace_selector, _labels(namespace)):
            return False
    selector = constraints.get("objectSelector")
    return _selects(selector, _labels(attrs.object)) or \
        (attrs.old_object is not None and _selects(selector, _labels(attrs.old_object)))


def validate_policy(policy: Object) -> list[FieldError]:
    """The rules of ValidateValidatingAdmissionPolicy that catch the usual mistakes."""
    spec = _dict(policy.get("spec"))
    errs: list[FieldError] = []
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        errs.append(field_required("spec.validations", "validations or auditAnnotations must "
                                   "contain at least one item"))
    variables = _check_variables(spec, errs)
    for i, validation in enumerate(spec.get("validations") or []):
        validation = _dict(validation)
        expression = str(validation.get("expression") or "")
        if not expression.strip():
            errs.append(field_required(f"spec.validations[{i}].expression", "expression is not "
                                       "specified"))
        else:
            errs += _compile(expression, variables, "bool", f"spec.validations[{i}].expression")
        message = validation.get("messageExpression")
        if isinstance(message, str) and message and not message.strip():
            errs.append(field_invalid(f"spec.validations[{i}].messageExpression", message,
                                      "must be non-empty if specified"))
        elif isinstance(message, str) and message.strip():
            errs += _compile(message, variables, "string",
                             f"spec.validations[{i}].messageExpression")
        reason = validation.get("reason")
        if reason is not None and reason not in REASONS:
            errs.append(field_not_supported(f"spec.validations[{i}].reason", reason, REASONS))
    policy_ = spec.get("failurePolicy")
    if policy_ is not None and policy_ not in FAILURE_POLICIES:
        errs.append(field_not_supported("spec.failurePolicy", policy_, FAILURE_POLICIES))
    constraints = _dict(spec.get("matchConstraints"))
    if not constraints.get("resourceRules"):
        errs.append(field_required("spec.matchConstraints.resourceRules", ""))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(constraints.get(key) or []):
            errs += _operations(_dict(rule), f"spec.matchConstraints.{key}[{i}]")
    kind = spec.get("paramKind")
    if kind is not None:
        for key in ("apiVersion", "kind"):
            if not _dict(kind).get(key):
                errs.append(field_required(f"spec.paramKind.{key}", ""))
    return errs


def _operations(rule: dict[str, Any], path: str) -> list[FieldError]:
    """validateRuleWithOperations: the operations a rule names."""
    operations = rule.get("operations") or []
    errs: list[FieldError] = []
    if not operations:
        errs.append(field_required(f"{path}.operations", ""))
    if len(operations) > 1 and "*" in operations:
        errs.append(field_invalid(f"{path}.operations", operations,
                                  "if '*' is present, must not specify other operations"))
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errs.append(field_not_supported(f"{path}.operations[{i}]", operation, OPERATIONS))
    return errs


def _check_variables(spec: dict[str, Any], errs: list[FieldError]) -> dict[str, CelType]:
    """validateVariable: each variable compiles with the variables before it (composition), so
    one that names itself or a later one is an undefined field of `variables`."""
    declared: dict[str, CelType] = {}
    names = {"object": DYN, "oldObject": DYN, "request": DYN, "namespaceObject": DYN,
             "authorizer": DYN, "variables": CelType("object", fields=declared)}
    if spec.get("paramKind") is not None:
        names["params"] = DYN
    for i, variable in enumerate(spec.get("variables") or []):
        variable = _dict(variable)
        name = str(variable.get("name") or "")
        path = f"spec.variables[{i}]"
        if not name.strip():
            errs.append(field_required(f"{path}.name", "name is not specified"))
        elif not _CEL_IDENTIFIER.match(name):
            errs.append(field_invalid(f"{path}.name", name, "name is not a valid CEL identifier"))
        expression = str(variable.get("expression") or "")
        if not expression.strip():
            errs.append(field_required(f"{path}.expression", "expression is not specified"))
            continue
        problems = _compile(expression, names, "", f"{path}.expression")
        errs += problems
        if name and not problems:
            declared[name] = DYN
    return names


def _compile(expression: str, names: dict[str, CelType], want: str, path: str) -> list[FieldError]:
    """CompileCELExpression: "compilation failed: ..." or "must evaluate to <type>"."""
    try:
        checked = check(expression, names)
    except CelCheckError as err:
        return [field_invalid(path, expression, f"compilation failed: {err}")]
    if want and checked.output.kind not in (want, "dyn"):
        return [field_invalid(path, expression, f"must evaluate to {want}")]
    return []


def validate_binding(binding: Object) -> list[FieldError]:
    """The rules of ValidateValidatingAdmissionPolicyBinding that catch the usual mistakes."""
    spec = _dict(binding.get("spec"))
    errs: list[FieldError] = []
    if not spec.get("policyName"):
        errs.append(field_required("spec.policyName", ""))
    actions = spec.get("validationActions") or []
    if not actions:
        errs.append(field_required("spec.validationActions", "at least one validation action "
                                   "is required"))
    for i, action in enumerate(actions):
        if action not in ACTIONS:
            errs.append(field_not_supported(f"spec.validationActions[{i}]", action, ACTIONS))
    ref = spec.get("paramRef")
    if isinstance(ref, dict):
        if ref.get("name") and ref.get("selector") is not None:
            errs.append(FieldError("Forbidden", "spec.paramRef.name", None,
                                   "name and selector are mutually exclusive"))
        action = ref.get("parameterNotFoundAction")
        if action is None:
            errs.append(field_required("spec.paramRef.parameterNotFoundAction", ""))
        elif action not in NOT_FOUND_ACTIONS:
            errs.append(field_not_supported("spec.paramRef.parameterNotFoundAction", action,
                                            NOT_FOUND_ACTIONS))
    return errs
