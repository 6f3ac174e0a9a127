"""ValidatingAdmissionPolicy: a rule declared as an object, checked in CEL, no webhook.

Follows k8s.io/apiserver pkg/admission/plugin/policy/validating (plugin.go, dispatcher.go,
validator.go). For each ValidatingAdmissionPolicyBinding whose policy matches the request
(policy_match.py), each param the binding selects (paramKind + paramRef; none without
paramKind) is evaluated: the policy's `variables`, then each validation's `expression` over
`object`, `oldObject`, `request`, `params`, `namespaceObject` and `variables`. A false result
is a violation, reported by the binding's validationActions:

- Deny: the request fails, 422 Invalid unless the validation names another reason, with
  `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding
  '<binding>' denied request: <message>`; the message is the value of the validation's
  `messageExpression`, else its `message`, else `failed expression: <expression>`;
- Warn: `Validation failed for ValidatingAdmissionPolicy '<policy>' with binding '<binding>':
  <message>` goes on the plugin's `warnings` (kubelab's HTTP edge sends no Warning headers);
- Audit: the `validation.policy.admission.k8s.io/validation_failure` annotation value goes on
  the plugin's `audit_annotations`.

An expression that fails to compile or run, and a param that is not found with
parameterNotFoundAction Deny, follow the policy's failurePolicy (Fail, the default: deny;
Ignore: skip). The policy and binding kinds themselves are exempt, so a policy cannot lock its
own fix out. Not supported: matchConditions, auditAnnotations, the `authorizer` variable,
matchPolicy Equivalent (kubelab serves one version of each kind) and the per-binding
RuntimeCELCostBudget (each expression stops at its PerCallLimit, kubelab/apiserver/cel.py, and
that error goes to the failurePolicy like any other). The expressions are compiled when the
policy is written (policy_match.py validate_policy).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from kubelab.api import Object
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.admission.chain import AdmissionPlugin, Attributes, Lister, admission_forbidden
from kubelab.apiserver.admission.policy_match import matches
from kubelab.apiserver.cel import CelCompileError, CelEvalError, compile_expression

__all__ = ["PolicyLister", "ValidatingAdmissionPolicy"]

GROUP = "admissionregistration.k8s.io"
CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


class PolicyLister(Lister, Protocol):
    """What the plugin reads besides single objects (upstream: its informers)."""

    def list_objects(self, resource: str, group: str = "", namespace: str = "") -> list[Object]:
        ...

    def admission_policies(self) -> tuple[list[Object], list[Object]]:
        ...

    def resource_for(self, api_version: str, kind: str) -> ResourceInfo | None:
        ...


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class _Failure(Exception):
    """A decision the failurePolicy decides about (compile or eval error, missing params)."""


class ValidatingAdmissionPolicy(AdmissionPlugin):
    name = "ValidatingAdmissionPolicy"

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.audit_annotations: list[dict[str, str]] = []

    def validate(self, attrs: Attributes) -> None:
        lister = attrs.lister
        if attrs.group == GROUP or not hasattr(lister, "admission_policies"):
            return  # IsExemptAdmissionConfigurationResource
        all_policies, all_bindings = lister.admission_policies()
        if not all_bindings:
            return
        policies = {p["metadata"]["name"]: p for p in all_policies}
        bindings = sorted(all_bindings, key=lambda b: b["metadata"]["name"])
        for name in sorted(policies):
            policy = policies[name]
            spec = _dict(policy.get("spec"))
            if not matches(spec.get("matchConstraints"), attrs):
                continue
            for binding in bindings:
                bspec = _dict(binding.get("spec"))
                if bspec.get("policyName") != name:
                    continue
                if bspec.get("matchResources") and not matches(bspec["matchResources"], attrs):
                    continue
                self._dispatch(attrs, lister, policy, binding)

    def _dispatch(self, attrs: Attributes, lister: Any, policy: Object, binding: Object) -> None:
        spec, bspec = _dict(policy.get("spec")), _dict(binding.get("spec"))
        actions = list(bspec.get("validationActions") or [])
        try:
            params = self._params(attrs, lister, spec, bspec)
            failures = [f for p in params for f in self._evaluate(attrs, lister, spec, p)]
        except _Failure as err:
            if spec.get("failurePolicy", "Fail") == "Ignore":
                return
            failures, actions = [(str(err), "", -1)], ["Deny"]
        pname, bname = policy["metadata"]["name"], binding["metadata"]["name"]
        for message, _reason, index in failures:
            if "Warn" in actions:
                self.warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{pname}' "
                                     f"with binding '{bname}': {message}")
            if "Audit" in actions:
                self.audit_annotations.append({
                    "validation.policy.admission.k8s.io/validation_failure": json.dumps([{
                        "message": message, "policy": pname, "binding": bname,
                        "expressionIndex": index, "validationActions": actions}],
                        separators=(",", ":"))})
        if "Deny" in actions and failures:
            message, reason, _ = failures[0]
            text = (f"ValidatingAdmissionPolicy '{pname}' with binding '{bname}' denied "
                    f"request: {message}")
            denial = admission_forbidden(attrs, text)
            denial.reason = reason or "Invalid"
            denial.code = CODES.get(denial.reason, 422)
            denial.details.setdefault("causes", []).append({"message": text})
            raise denial

    def _params(self, attrs: Attributes, lister: Any, spec: dict[str, Any],
                bspec: dict[str, Any]) -> list[Any]:
        """collectParams: the params to evaluate against ([None] without a paramKind)."""
        kind, ref = spec.get("paramKind"), bspec.get("paramRef")
        if not kind:
            return [None]
        if not isinstance(ref, dict):
            raise _Failure(f"failed to configure binding: no paramRef in binding for policy with "
                           f"paramKind {kind.get('apiVersion')}, Kind={kind.get('kind')}")
        info = lister.resource_for(str(kind.get("apiVersion", "")), str(kind.get("kind", "")))
        if info is None:
            raise _Failure(f"failed to configure policy: failed to find resource referenced by "
                           f"paramKind: '{kind.get('apiVersion')}, Kind={kind.get('kind')}'")
        namespace = str(ref.get("namespace") or (attrs.namespace if info.namespaced else ""))
        if ref.get("name"):
            found = lister.get(info.resource, namespace, ref["name"], info.group)
            params = [found] if found is not None else []
        else:
            selector = selector_from_label_selector(ref.get("selector") or {})
            params = [p for p in lister.list_objects(info.resource, info.group, namespace)
                      if selector.matches(_dict(p.get("metadata")).get("labels") or {})]
        if not params:
            if ref.get("parameterNotFoundAction") == "Allow":
                return []
            raise _Failure("failed to configure binding: no params found for policy binding "
                           "with `Deny` parameterNotFoundAction")
        return params

    def _evaluate(self, attrs: Attributes, lister: Any, spec: dict[str, Any],
                  params: Any) -> list[tuple[str, str, int]]:
        """(message, reason, index) for each validation that fails."""
        activation = self._activation(attrs, lister, params)
        variables: dict[str, Any] = {}
        activation["variables"] = variables
        for variable in spec.get("variables") or []:
            variables[str(variable.get("name"))] = _run(str(variable.get("expression", "")),
                                                        activation)
        failures = []
        for index, validation in enumerate(spec.get("validations") or []):
            expression = str(validation.get("expression", ""))
            if _run(expression, activation) is True:
                continue
            failures.append((_message(validation, expression, activation),
                             str(validation.get("reason") or ""), index))
        return failures

    def _activation(self, attrs: Attributes, lister: Any, params: Any) -> dict[str, Any]:
        namespace = lister.get("namespaces", "", attrs.namespace) if attrs.namespace else None
        user = attrs.user
        request = {
            "kind": {"group": attrs.group, "version": attrs.version, "kind": attrs.kind},
            "resource": {"group": attrs.group, "version": attrs.version,
                         "resource": attrs.resource},
            "subResource": attrs.subresource, "name": attrs.name, "namespace": attrs.namespace,
            "operation": attrs.operation, "dryRun": attrs.dry_run,
            "userInfo": {"username": user.name, "groups": list(user.groups)},
        }
        return {"object": attrs.object, "oldObject": attrs.old_object, "request": request,
                "params": params, "namespaceObject": namespace}


def _run(expression: str, activation: dict[str, Any]) -> Any:
    try:
        return compile_expression(expression).evaluate(activation)
    except CelCompileError as err:
        raise _Failure(f"compilation error: {err}") from None
    except CelEvalError as err:
        raise _Failure(f"expression '{expression}' resulted in error: {err}") from None


def _message(validation: dict[str, Any], expression: str, activation: dict[str, Any]) -> str:
    """messageExpression wins over message when it gives a string; then the default."""
    if validation.get("messageExpression"):
        try:
            text = compile_expression(str(validation["messageExpression"])).evaluate(activation)
        except (CelCompileError, CelEvalError):
            text = None
        if isinstance(text, str) and text.strip():
            return text.strip()
    if validation.get("message"):
        return str(validation["message"])
    return f"failed expression: {expression.strip()}"


