"""The ResourceQuota admission plugin: k8s.io/apiserver pkg/admission/plugin/resourcequota
(admission.go Validate, controller.go quotaEvaluator.checkQuotas and CheckRequest,
resource_access.go quotaAccessor) with kubernetes pkg/quota/v1's evaluators
(kubelab/api/quota/).

For a create (or an update that can change usage) in a namespace with quotas, each quota that
limits one of the object's resources and whose scopes the object falls in is checked:

- the object must satisfy the evaluator's constraints: `failed quota: NAME: must specify
  limits.cpu for: web`;
- the quota's status must already count those resources (the controller writes it):
  `status unknown for quota: NAME, resources: pods`;
- used + requested may not pass hard: `exceeded quota: NAME, requested: pods=1, used: pods=2,
  limited: pods=2`.

Then every quota whose used changed is written (PUT resourcequotas/<name>/status, as the API
server itself) before the object is stored, with its resourceVersion: a quota changed meanwhile
answers 409, and the check runs again on the fresh quotas, three times at most (checkQuotas'
retries). The resourcequota controller recalculates used later (a refused or deleted object
gives its share back).

kubelab's departures: no admission configuration (limitedResources), no evaluator queue per
namespace (one request at a time); a dry-run request is checked but charges nothing.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object, deep_copy
from kubelab.api.errors import ApiError
from kubelab.api.quota import Evaluator, ObjectCountEvaluator, new_evaluators
from kubelab.api.quota.resources import (
    add,
    equals,
    is_zero,
    less_than_or_equal,
    mask,
    parse_resource_list,
    pretty_print,
    subtract,
    to_json,
)
from kubelab.apiserver.admission.chain import CREATE, UPDATE, AdmissionPlugin, Attributes, admission_forbidden

__all__ = ["ResourceQuota"]

RETRIES = 3
# install.DefaultIgnoredResources: virtual resources that are never stored, and events.
IGNORED_RESOURCES = frozenset({
    ("", "bindings"), ("", "componentstatuses"), ("", "events"), ("events.k8s.io", "events"),
    ("authentication.k8s.io", "tokenreviews"), ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews")})


class ResourceQuota(AdmissionPlugin):
    name = "ResourceQuota"

    def __init__(self) -> None:
        # The registry of evaluators; an object count evaluator is added for any other resource
        # the first time one is created (quotaEvaluator.Evaluate).
        self.evaluators: dict[tuple[str, str], Evaluator] = {
            e.group_resource(): e for e in new_evaluators()}

    def validate(self, attrs: Attributes) -> None:
        """Validate: not for subresources, cluster-scoped objects or a namespace's creation."""
        if attrs.subresource or not attrs.namespace or attrs.operation not in (CREATE, UPDATE) \
                or not isinstance(attrs.object, dict):
            return
        gr = (attrs.group, attrs.resource)
        if gr in IGNORED_RESOURCES:
            return
        evaluator = self.evaluators.get(gr)
        if evaluator is None:
            evaluator = self.evaluators[gr] = ObjectCountEvaluator(*gr)
        if not evaluator.handles(attrs.operation, attrs.subresource, attrs.object, attrs.old_object):
            return
        quotas = _quotas(attrs)
        for remaining in range(RETRIES, -1, -1):
            if not quotas:
                return
            checked = check_request(quotas, attrs, evaluator)
            if attrs.dry_run:
                return
            failed = [new for old, new in zip(quotas, checked, strict=True)
                      if not _same_used(old, new) and not _update_status(attrs, new)]
            if not failed:
                return
            if remaining == 0:
                raise admission_forbidden(attrs, "failed to update quota: Operation cannot be "
                                          "fulfilled on resourcequotas: the object has been "
                                          "modified; please apply your changes to the latest "
                                          "version and try again")
            names = {q["metadata"]["name"] for q in failed}
            quotas = [q for q in _quotas(attrs) if q["metadata"]["name"] in names]


def check_request(quotas: list[Object], attrs: Attributes, evaluator: Evaluator) -> list[Object]:
    """CheckRequest: the quotas as they would be with this request admitted, or a 403."""
    obj = attrs.object
    assert obj is not None
    interesting = []
    for i, quota in enumerate(quotas):
        if not evaluator.matches(quota, obj):
            continue
        name = quota["metadata"]["name"]
        status = quota.get("status") or {}
        restricted = evaluator.matching_resources(parse_resource_list(status.get("hard")))
        if err := evaluator.constraints(restricted, obj):
            raise admission_forbidden(attrs, f"failed quota: {name}: {err}")
        used = status.get("used") or {}
        if any(r not in used for r in restricted):
            raise admission_forbidden(attrs, f"status unknown for quota: {name}, resources: "
                                      f"{','.join(sorted(restricted))}")
        interesting.append(i)
    delta = evaluator.usage(obj)
    negative = sorted(n for n, q in delta.items() if q.as_decimal() < 0)
    if negative:
        raise admission_forbidden(attrs, "quota usage is negative for resource(s): "
                                  + ",".join(negative))
    if attrs.operation == UPDATE and attrs.old_object is not None and \
            (attrs.old_object.get("metadata") or {}).get("resourceVersion"):
        delta = {n: q for n, q in subtract(delta, evaluator.usage(attrs.old_object)).items()
                 if q.as_decimal() > 0}  # SubtractWithNonNegativeResult
    if is_zero(delta) or not interesting:
        return quotas
    out = [deep_copy(q) for q in quotas]
    for i in interesting:
        quota = out[i]
        status = quota.get("status") or {}
        hard, used = parse_resource_list(status.get("hard")), parse_resource_list(status.get("used"))
        requested = mask(delta, hard)
        new_usage = add(used, requested)
        allowed, exceeded = less_than_or_equal(mask(new_usage, requested), hard)
        if not allowed:
            raise admission_forbidden(
                attrs, f"exceeded quota: {quota['metadata']['name']}, requested: "
                       f"{pretty_print(mask(requested, exceeded))}, used: "
                       f"{pretty_print(mask(used, exceeded))}, limited: "
                       f"{pretty_print(mask(hard, exceeded))}")
        quota.setdefault("status", {})["used"] = to_json(new_usage)
    return out


def _quotas(attrs: Attributes) -> list[Object]:
    """quotaAccessor.GetQuotas: the namespace's quotas, in name order."""
    list_objects = getattr(attrs.lister, "list_objects", None)
    if list_objects is None:
        return []
    return sorted(list_objects("resourcequotas", "", attrs.namespace),
                  key=lambda q: q["metadata"]["name"])


def _same_used(old: Object, new: Object) -> bool:
    return equals(parse_resource_list((old.get("status") or {}).get("used")),
                  parse_resource_list((new.get("status") or {}).get("used")))


def _update_status(attrs: Attributes, quota: Object) -> bool:
    """quotaAccessor.UpdateQuotaStatus; False when the quota changed meanwhile (409)."""
    update_status: Any = getattr(attrs.lister, "update_status", None)
    if update_status is None:
        return True
    try:
        update_status("resourcequotas", "", quota)
    except ApiError as err:
        if err.code in (404, 409):  # gone or changed: GetQuotas again
            return False
        raise
    return True
