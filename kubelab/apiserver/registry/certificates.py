"""The CertificateSigningRequest strategies (kubernetes pkg/registry/certificates/
certificates/strategy.go): csrStrategy, csrStatusStrategy and csrApprovalStrategy.

- Create: the requestor is the user who made the request. spec.username, uid, groups and
  extra come from the request's user.Info, whatever the body said; the status starts empty
  (no one creates a pre-approved request).
- Update of the object: spec and status stay as they were (only metadata changes).
- /status: the spec stays, and so do the Approved and Denied conditions already there
  (preserveConditionInstances); the certificate and the other conditions are the writer's.
- /approval: the spec and the certificate stay; the conditions are the writer's, but an
  existing Failed condition is kept as it was.

Each then fills the conditions' times (populateConditionTimestamps): lastUpdateTime now when
unset, lastTransitionTime that of the old condition of the same type and status, else now.
Validation (apis/validation/certificates.py) refuses what a path may not change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object, deep_copy
from kubelab.api.certificates import APPROVED, DENIED, FAILED

if TYPE_CHECKING:
    from kubelab.apiserver.auth.authn import UserInfo

__all__ = ["prepare_csr_for_create", "prepare_csr_for_update"]


def prepare_csr_for_create(csr: Object, user: UserInfo | None) -> None:
    spec = csr.get("spec")
    if not isinstance(spec, dict):
        spec = csr["spec"] = {}
    for field in ("username", "uid", "groups", "extra"):
        spec.pop(field, None)
    if user is not None:
        spec["username"] = user.name
        if user.uid:
            spec["uid"] = user.uid
        if user.groups:
            spec["groups"] = list(user.groups)
        if user.extra:
            spec["extra"] = {key: list(values) for key, values in user.extra}
    csr["status"] = {}


def _conditions(csr: Object) -> list[Object]:
    status = csr.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return conditions if isinstance(conditions, list) else []


def _preserve_condition_instances(new: Object, old: Object, kind: str) -> None:
    """preserveConditionInstances: when the count of this type is unchanged, the old ones stay."""
    new_conditions, old_conditions = _conditions(new), _conditions(old)
    new_at = [i for i, c in enumerate(new_conditions) if isinstance(c, dict) and c.get("type") == kind]
    old_at = [i for i, c in enumerate(old_conditions) if isinstance(c, dict) and c.get("type") == kind]
    if len(new_at) == len(old_at):
        for n, o in zip(new_at, old_at, strict=True):
            new_conditions[n] = deep_copy(old_conditions[o])


def _populate_condition_timestamps(new: Object, old: Object, now: str) -> None:
    old_conditions = [c for c in _conditions(old) if isinstance(c, dict)]
    for condition in _conditions(new):
        if not isinstance(condition, dict):
            continue
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            condition["lastTransitionTime"] = next(
                (o["lastTransitionTime"] for o in old_conditions
                 if o.get("type") == condition.get("type") and o.get("status") == condition.get("status")
                 and o.get("lastTransitionTime")), now)


def prepare_csr_for_update(csr: Object, old: Object, subresource: str, now: str) -> Object:
    """PrepareForUpdate of the object, /status or /approval (csr and old are private copies)."""
    csr["spec"] = old.get("spec") or {}
    old_status = old.get("status") if isinstance(old.get("status"), dict) else {}
    if subresource == "status":
        if not isinstance(csr.get("status"), dict):
            csr["status"] = {}
        _preserve_condition_instances(csr, old, APPROVED)
        _preserve_condition_instances(csr, old, DENIED)
    elif subresource == "approval":
        conditions = _conditions(csr)
        csr["status"] = {k: v for k, v in (old_status or {}).items() if k != "conditions"}
        if conditions:
            csr["status"]["conditions"] = conditions
        _preserve_condition_instances(csr, old, FAILED)
    else:
        csr["status"] = old_status or {}
        return csr
    _populate_condition_timestamps(csr, old, now)
    return csr
