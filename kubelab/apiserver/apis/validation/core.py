"""core/v1 rules: pods (and the pod templates of workloads), nodes, config maps.

pkg/apis/core/validation/validation.go (ValidatePodSpec, validateContainers,
ValidateResourceRequirements, ValidateTolerations, ValidateNodeSpecific taints,
ValidateConfigMap), with the same field paths and words.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    ParseError,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.quantity import parse_quantity
from kubelab.api.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    left_terminated,
    regex_error,
)
from kubelab.apiserver.apis.validation.container import (
    validate_container_resource_name,
    validate_node_resources,
    validate_pod_cidrs,
    validate_probes,
    validate_resource_quantity,
)
from kubelab.apiserver.apis.validation.meta import label_value_errors, qualified_name_errors
from kubelab.apiserver.apis.validation.scheduling import (
    validate_affinity,
    validate_topology_spread_constraints,
)

__all__ = ["validate_config_map", "validate_node", "validate_node_update", "validate_pod",
           "validate_pod_spec", "validate_pod_status_update", "validate_pod_update"]

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def validate_pod(pod: Object) -> list[FieldError]:
    spec = _dict(pod.get("spec"))
    errs = validate_pod_spec(spec, "spec")
    if spec.get("ephemeralContainers"):  # only through pods/ephemeralcontainers
        errs.append(field_forbidden("spec.ephemeralContainers", "cannot be set on create"))
    return errs


def validate_pod_spec(spec: Object, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    containers = spec.get("containers") or []
    if not containers:
        errs.append(field_required(f"{path}.containers"))
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            errs += _container(_dict(c), f"{path}.{key}[{i}]", seen)
    restart = spec.get("restartPolicy")
    if restart not in RESTART_POLICIES:
        errs.append(field_required(f"{path}.restartPolicy") if not restart else
                    field_not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if dns and dns not in DNS_POLICIES:
        errs.append(field_not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    for field in ("hostname", "subdomain"):  # ValidateDNS1123Label
        value = spec.get(field)
        if value and isinstance(value, str):
            errs += [field_invalid(f"{path}.{field}", value, m) for m in is_dns1123_label(value)]
    node = spec.get("nodeName")
    if node:
        errs += [field_invalid(f"{path}.nodeName", node, m) for m in is_dns1123_subdomain(node)]
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= 2**31 - 1:  # InclusiveRangeError
        errs.append(field_invalid(f"{path}.activeDeadlineSeconds", deadline,
                                  "must be between 1 and 2147483647, inclusive"))
    selector = _dict(spec.get("nodeSelector"))
    for key, value in selector.items():
        errs += [field_invalid(f"{path}.nodeSelector", key, m) for m in qualified_name_errors(key)]
        errs += [field_invalid(f"{path}.nodeSelector[{key}]", value, m)
                 for m in label_value_errors(value)]
    errs += validate_tolerations(spec.get("tolerations") or [], f"{path}.tolerations")
    errs += validate_affinity(spec.get("affinity"), f"{path}.affinity")
    errs += validate_topology_spread_constraints(spec.get("topologySpreadConstraints"),
                                                 f"{path}.topologySpreadConstraints")
    return errs


def _container(c: Object, path: str, seen: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    name = c.get("name")
    if not name:
        errs.append(field_required(f"{path}.name"))
    elif name in seen:
        errs.append(field_duplicate(f"{path}.name", name))
    else:
        errs += [field_invalid(f"{path}.name", name, m) for m in is_dns1123_label(name)]
        seen.add(name)
    if not c.get("image"):
        errs.append(field_required(f"{path}.image"))
    pull = c.get("imagePullPolicy")
    if pull and pull not in PULL_POLICIES:
        errs.append(field_not_supported(f"{path}.imagePullPolicy", pull, PULL_POLICIES))
    for i, port in enumerate(c.get("ports") or []):
        number = _dict(port).get("containerPort")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            errs.append(field_invalid(f"{path}.ports[{i}].containerPort", number or 0,
                                      "must be between 1 and 65535, inclusive"))
        protocol = _dict(port).get("protocol")
        if protocol and protocol not in PROTOCOLS:
            errs.append(field_not_supported(f"{path}.ports[{i}].protocol", protocol, PROTOCOLS))
    for i, env in enumerate(c.get("env") or []):
        if not _dict(env).get("name"):
            errs.append(field_required(f"{path}.env[{i}].name"))
    errs += validate_probes(c, path)
    return errs + _resources(_dict(c.get("resources")), f"{path}.resources")


def _resources(resources: Object, path: str) -> list[FieldError]:
    """ValidateResourceRequirements: known resource names, quantities >= 0 and each request
    <= its limit."""
    errs: list[FieldError] = []
    parsed: dict[str, dict[str, Any]] = {}
    for kind in ("limits", "requests"):
        parsed[kind] = {}
        for name, text in _dict(resources.get(kind)).items():
            where = f"{path}.{kind}[{name}]"
            errs += validate_container_resource_name(name, where)
            errs += validate_resource_quantity(name, text, where)
            try:
                parsed[kind][name] = parse_quantity(text)
            except (ParseError, TypeError):
                continue  # the decoder already refused it
    for name, request in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None and request.cmp(limit) > 0:
            errs.append(field_invalid(f"{path}.requests", str(request),
                                      f"must be less than or equal to {name} limit of {limit}"))
    return errs


def validate_tolerations(tolerations: list[Any], path: str) -> list[FieldError]:
    """ValidateTolerations."""
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        t, p = _dict(t), f"{path}[{i}]"
        key, op, effect = t.get("key", ""), t.get("operator", ""), t.get("effect", "")
        if key:
            errs += [field_invalid(f"{p}.key", key, m) for m in qualified_name_errors(key)]
        if not key and op != "Exists":
            errs.append(field_invalid(f"{p}.operator", op, 'operator must be Exists when `key` '
                                      'is empty, which means "match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(field_invalid(f"{p}.effect", effect, "effect must be 'NoExecute' when "
                                      "`tolerationSeconds` is set"))
        if op in ("", "Equal"):
            errs += [field_invalid(f"{p}.operator", t.get("value", ""), m)
                     for m in label_value_errors(t.get("value", ""))]
        elif op == "Exists":
            if t.get("value"):
                errs.append(field_invalid(f"{p}.operator", t, "value must be empty when "
                                          "`operator` is 'Exists'"))
        else:
            errs.append(field_not_supported(f"{p}.operator", op, ["Equal", "Exists"]))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(field_not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
    return errs


# Fields a pod update may change (ValidatePodUpdate); everything else in spec is immutable.
_POD_UPDATE_MESSAGE = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)")


def validate_pod_update(pod: Object, old: Object) -> list[FieldError]:
    spec, old_spec = _dict(pod.get("spec")), _dict(old.get("spec"))
    errs = validate_pod_spec(spec, "spec")

    def mutable_removed(s: Object) -> Object:
        out = {k: v for k, v in s.items() if k not in ("activeDeadlineSeconds", "tolerations")}
        for key in ("containers", "initContainers"):
            out[key] = [{k: v for k, v in _dict(c).items() if k != "image"}
                        for c in s.get(key) or []]
        return out

    if mutable_removed(spec) != mutable_removed(old_spec):
        errs.append(field_forbidden("spec", _POD_UPDATE_MESSAGE))
    old_tolerations = old_spec.get("tolerations") or []
    if any(t not in (spec.get("tolerations") or []) for t in old_tolerations):
        errs.append(field_forbidden("spec.tolerations", "existing toleration can not be "
                                    "modified except its tolerationSeconds"))
    return errs


def validate_pod_status_update(pod: Object, old: Object) -> list[FieldError]:
    """ValidatePodStatusUpdate: the spec is the old one (the status strategy put it back), so
    only what the status says is checked, not the spec again."""
    status, old_status = _dict(pod.get("status")), _dict(old.get("status"))
    errs = []
    nominated = status.get("nominatedNodeName") or ""
    if nominated and nominated != old_status.get("nominatedNodeName"):
        errs += [field_invalid("status.nominatedNodeName", nominated, m)
                 for m in is_dns1123_subdomain(nominated)]
    errs += [field_forbidden(f"status.{key}[{i}].state", "may not be transitioned to "
                             "non-terminated state")
             for key, i in left_terminated(_dict(old.get("spec")), status, old_status)]
    return errs


def validate_node(node: Object) -> list[FieldError]:
    """ValidateNode: resource quantities, pod CIDRs and taints."""
    spec = _dict(node.get("spec"))
    errs = validate_node_resources(_dict(node.get("status"))) + validate_pod_cidrs(spec)
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(spec.get("taints") or []):
        taint, p = _dict(taint), f"spec.taints[{i}]"
        key, effect = taint.get("key", ""), taint.get("effect", "")
        if not key:
            errs.append(field_required(f"{p}.key"))
        errs += [field_invalid(f"{p}.key", key, m) for m in qualified_name_errors(key) if key]
        errs += [field_invalid(f"{p}.value", taint.get("value", ""), m)
                 for m in label_value_errors(taint.get("value", ""))]
        if not effect:
            errs.append(field_required(f"{p}.effect"))
        elif effect not in TAINT_EFFECTS:
            errs.append(field_not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            errs.append(field_duplicate(p, taint))
        seen.add((key, effect))
    return errs


def validate_node_update(node: Object, old: Object) -> list[FieldError]:
    """ValidateNodeUpdate: the node as on create; podCIDRs and providerID, once set, stay
    (the node IPAM controller may set them once)."""
    errs = validate_node(node)
    spec, old_spec = _dict(node.get("spec")), _dict(old.get("spec"))
    if old_spec.get("podCIDRs") and spec.get("podCIDRs") != old_spec["podCIDRs"]:
        errs.append(field_forbidden("spec.podCIDRs", 'node updates may not change podCIDR '
                                    'except from "" to valid'))
    if old_spec.get("providerID") and spec.get("providerID") != old_spec["providerID"]:
        errs.append(field_forbidden("spec.providerID", 'node updates may not change providerID '
                                    'except from "" to valid'))
    return errs


def validate_config_map(cm: Object) -> list[FieldError]:
    """Keys of data and binaryData are config keys (IsConfigMapKey)."""
    errs: list[FieldError] = []
    for field in ("data", "binaryData"):
        for key in _dict(cm.get(field)):
            for msg in config_key_errors(key):
                errs.append(field_invalid(f"{field}[{key}]", key, msg))
    return errs


@functools.lru_cache(maxsize=4096)
def config_key_errors(key: str) -> tuple[str, ...]:
    # The same few keys come back in ConfigMap after ConfigMap: remember the answers.
    errs = []
    if len(key) > 253:
        errs.append("must be no more than 253 characters")
    if not _CONFIG_KEY.fullmatch(key):
        errs.append(regex_error("a valid config key must consist of alphanumeric characters, "
                                "'-', '_' or '.'", "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME",
                                "key-name"))
    if key in (".", ".."):
        errs.append(f"must not be '{key}'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return tuple(errs)
