"""The parts of a container (and of a node) the kubelet acts on: probes, ports, resources.

pkg/apis/core/validation/validation.go: validateProbe, validateHandler, validateExecAction,
validateHTTPGetAction, ValidatePortNumOrName, validateContainerResourceName,
ValidateResourceQuantityValue, and ValidateNode's capacity, allocatable and podCIDRs rules.
A kubelet that read a negative period or a null quantity would fail later and far from the
cause; upstream refuses such objects here, and so do we, in the same words.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    ParseError,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.quantity import parse_quantity
from kubelab.api.validation import is_qualified_name

__all__ = ["validate_container_resource_name", "validate_node_resources", "validate_pod_cidrs",
           "validate_probes", "validate_resource_quantity"]

NEGATIVE = "must be greater than or equal to 0"
HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")  # a probe's ProbeHandler, in Go's order
HTTP_SCHEMES = ["HTTP", "HTTPS"]
# pkg/apis/core/helper/helpers.go: standardContainerResources and standardResources.
STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
STANDARD_RESOURCES = STANDARD_CONTAINER_RESOURCES | {
    "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu",
    "limits.memory", "limits.ephemeral-storage", "pods", "quota", "services",
    "replicationcontrollers", "resourcequotas", "secrets", "persistentvolumeclaims",
    "storage", "requests.storage", "services.nodeports", "services.loadbalancers", "configmaps"}
INTEGER_RESOURCES = frozenset({"pods", "quota", "services", "replicationcontrollers",
                               "resourcequotas", "secrets", "configmaps",
                               "persistentvolumeclaims", "services.nodeports",
                               "services.loadbalancers"})
_PORT_NAME = re.compile(r"[-a-z0-9]+")
_LETTER = re.compile(r"[a-z]")


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------------ probes


def validate_probes(c: Object, path: str) -> list[FieldError]:
    """validateLivenessProbe, validateReadinessProbe and validateStartupProbe of a container."""
    errs: list[FieldError] = []
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(kind)
        if not isinstance(probe, dict):  # absent (the decoder refused any other type)
            continue
        where = f"{path}.{kind}"
        errs += _probe(probe, where)
        success = probe.get("successThreshold")
        if kind != "readinessProbe" and success not in (None, 0, 1):  # 0 defaults to 1
            errs.append(field_invalid(f"{where}.successThreshold", success, "must be 1"))
        if kind == "readinessProbe" and probe.get("terminationGracePeriodSeconds") is not None:
            errs.append(field_invalid(f"{where}.terminationGracePeriodSeconds",
                                      probe["terminationGracePeriodSeconds"],
                                      "must not be set for readinessProbes"))
    return errs


def _probe(probe: Object, path: str) -> list[FieldError]:
    """validateProbe: one handler, and no negative count or duration."""
    errs = _handler(probe, path)
    for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                  "failureThreshold"):
        value = probe.get(field)
        if isinstance(value, int) and value < 0:
            errs.append(field_invalid(f"{path}.{field}", value, NEGATIVE))
    grace = probe.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace <= 0:
        errs.append(field_invalid(f"{path}.terminationGracePeriodSeconds", grace,
                                  "must be greater than 0"))
    return errs


def _handler(probe: Object, path: str) -> list[FieldError]:
    """validateHandler: exactly one of exec, httpGet, tcpSocket, grpc."""
    errs: list[FieldError] = []
    found = 0
    for kind in HANDLERS:
        action = probe.get(kind)
        if action is None:
            continue
        if found:
            errs.append(field_forbidden(f"{path}.{kind}", "may not specify more than 1 handler "
                                        "type"))
            continue
        found += 1
        action, where = _dict(action), f"{path}.{kind}"
        if kind == "exec":
            if not action.get("command"):
                errs.append(field_required(f"{where}.command"))
        elif kind == "grpc":
            errs += _port_num_or_name(action.get("port", 0), f"{where}.port", number_only=True)
        else:
            errs += _port_num_or_name(action.get("port", ""), f"{where}.port")
            scheme = action.get("scheme")
            if kind == "httpGet" and scheme and scheme not in HTTP_SCHEMES:
                errs.append(field_not_supported(f"{where}.scheme", scheme, HTTP_SCHEMES))
    if not found:
        errs.append(field_required(path, "must specify a handler type"))
    return errs


def _port_num_or_name(port: Any, path: str, number_only: bool = False) -> list[FieldError]:
    """ValidatePortNumOrName (an IntOrString) and, for grpc, ValidatePortNum."""
    if isinstance(port, int):
        if not 1 <= port <= 65535:
            return [field_invalid(path, port, "must be between 1 and 65535, inclusive")]
        return []
    if number_only or not isinstance(port, str):
        return []
    if not port:
        return [field_required(path)]
    return [field_invalid(path, port, m) for m in port_name_errors(port)]


def port_name_errors(port: str) -> list[str]:
    """IsValidPortName (apimachinery pkg/util/validation): an IANA service name."""
    errs = []
    if len(port) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if not _LETTER.search(port):
        errs.append("must contain at least one letter (a-z)")
    if port.startswith("-") or port.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


# ------------------------------------------------------------------ resources


def validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    """validateContainerResourceName: cpu, memory, ... or a fully qualified extended name."""
    errs = [field_invalid(path, name, m) for m in is_qualified_name(name)]
    if not errs and "/" not in name and name not in STANDARD_RESOURCES and \
            not name.startswith("hugepages-"):
        errs.append(field_invalid(path, name, "must be a standard resource type or fully "
                                  "qualified"))
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            errs.append(field_invalid(path, name, "must be a standard resource for containers"))
    elif "kubernetes.io/" not in name and (
            name.startswith("requests.") or is_qualified_name("requests." + name)):
        errs.append(field_invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def validate_resource_quantity(name: str, text: Any, path: str) -> list[FieldError]:
    """ValidateResourceQuantityValue: never negative, and whole for countable resources."""
    try:
        quantity = parse_quantity(text)
    except (ParseError, TypeError):
        return []  # the decoder refused it already
    if quantity.cmp(parse_quantity(0)) < 0:  # Go prints the quantity's canonical form
        return [field_invalid(path, str(quantity), NEGATIVE)]
    whole = name in INTEGER_RESOURCES or ("/" in name and "kubernetes.io/" not in name)
    if whole and quantity.milli_value() % 1000:
        return [field_invalid(path, quantity, "must be an integer")]  # a Stringer: bare
    return []


def validate_node_resources(status: Object) -> list[FieldError]:
    """ValidateNode: every capacity and allocatable quantity (paths status.capacity.<name>)."""
    errs: list[FieldError] = []
    for field in ("capacity", "allocatable"):
        for name, text in _dict(status.get(field)).items():
            errs += validate_resource_quantity(name, text, f"status.{field}.{name}")
    return errs


def validate_pod_cidrs(spec: Object) -> list[FieldError]:
    """ValidateNode: spec.podCIDRs (v1's podCIDR converts to its first item) are CIDRs, at
    most one per IP family."""
    cidrs = spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else [])
    errs: list[FieldError] = []
    families = []
    for i, cidr in enumerate(cidrs):
        try:
            families.append(ipaddress.ip_network(str(cidr), strict=False).version)
        except ValueError:
            errs.append(field_invalid(f"spec.podCIDRs[{i}]", cidr, "must be a valid CIDR value, "
                                      "(e.g. 10.9.8.0/24 or 2001:db8::/64)"))
    if not errs and len(cidrs) > 1 and (len(cidrs) > 2 or families[0] == families[1]):
        errs.append(field_invalid("spec.podCIDRs", cidrs, "may specify no more than one CIDR "
                                  "for each IP family"))
    return errs
