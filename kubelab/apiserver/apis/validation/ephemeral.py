"""Ephemeral containers: `kubectl debug`'s containers, added to a running pod.

pkg/apis/core/validation/validation.go: validateEphemeralContainers (as part of a pod's
spec) and ValidatePodEphemeralContainersUpdate (the pods/ephemeralcontainers subresource,
pkg/registry/core/pod/strategy.go ephemeralContainersStrategy):

- they cannot be set when the pod is created (`spec.ephemeralContainers: Forbidden: cannot be
  set on create`), only through the subresource;
- each has a name unique among all the pod's containers (`Duplicate value`) and an image;
- targetContainerName, if set, names one of the pod's containers or init containers (`Not
  found`);
- what only a long-running container has is forbidden: ports, probes, lifecycle, resources,
  resizePolicy, restartPolicy (`Forbidden: cannot be set for an Ephemeral Container`);
- an update may add ephemeral containers, never remove (`existing ephemeral containers "x"
  may not be removed`) or change one (`... may not be changed`), and a static pod has none
  (`Forbidden: static pods do not support ephemeral containers`).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_duplicate, field_forbidden, field_invalid, field_required
from kubelab.api.validation import is_dns1123_label

__all__ = ["validate_ephemeral_containers", "validate_pod_ephemeral_containers_update"]

_FORBIDDEN = ("lifecycle", "livenessProbe", "ports", "readinessProbe", "resizePolicy", "resources",
              "restartPolicy", "startupProbe")
_MIRROR = "kubernetes.io/config.mirror"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(spec: Object, key: str) -> list[str]:
    return [str(_dict(c).get("name") or "") for c in spec.get(key) or []]


def validate_ephemeral_containers(spec: Object, path: str) -> list[FieldError]:
    """validateEphemeralContainers: each of spec.ephemeralContainers."""
    errs: list[FieldError] = []
    others = set(_names(spec, "containers")) | set(_names(spec, "initContainers"))
    seen: set[str] = set()
    for i, raw in enumerate(spec.get("ephemeralContainers") or []):
        ec, at = _dict(raw), f"{path}.ephemeralContainers[{i}]"
        name = ec.get("name")
        if not name:
            errs.append(field_required(f"{at}.name"))
        elif name in seen or name in others:
            errs.append(field_duplicate(f"{at}.name", name))
        else:
            errs += [field_invalid(f"{at}.name", name, m) for m in is_dns1123_label(str(name))]
            seen.add(str(name))
        if not ec.get("image"):
            errs.append(field_required(f"{at}.image"))
        target = ec.get("targetContainerName")
        if target and target not in others:
            errs.append(FieldError("Not found", f"{at}.targetContainerName", target))
        errs += [field_forbidden(f"{at}.{field}", "cannot be set for an Ephemeral Container")
                 for field in _FORBIDDEN if ec.get(field)]
    return errs


def validate_pod_ephemeral_containers_update(pod: Object, old: Object) -> list[FieldError]:
    """ValidatePodEphemeralContainersUpdate: the new pod's spec, then what changed."""
    if _MIRROR in (_dict(old.get("metadata")).get("annotations") or {}):
        return [field_forbidden("", "static pods do not support ephemeral containers")]
    spec, old_spec = _dict(pod.get("spec")), _dict(old.get("spec"))
    errs = validate_ephemeral_containers(spec, "spec")
    new = {str(_dict(c).get("name")): c for c in spec.get("ephemeralContainers") or []}
    for ec in old_spec.get("ephemeralContainers") or []:
        name = str(_dict(ec).get("name"))
        if name not in new:
            errs.append(field_forbidden("spec.ephemeralContainers",
                                        f'existing ephemeral containers "{name}" may not be removed\n'))
        elif new[name] != ec:
            errs.append(field_forbidden(f"spec.ephemeralContainers[{name}]",
                                        f'existing ephemeral containers "{name}" may not be changed\n'))
    return errs
