"""ValidateEndpoints (pkg/apis/core/validation/validation.go: ValidateEndpoints,
validateEndpointSubsets, validateEndpointAddress, validateEndpointPort).

Every subset lists at least one address, ready or not; each address is a valid IP that is not
special (unspecified, loopback, link-local), with an optional DNS-label hostname; each port has
a number in 1-65535 and a protocol, and a DNS-label name, required when the subset has more
than one port. The update is checked as a create (ValidateEndpointsUpdate adds nothing else
kubelab checks).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.validation import is_dns1123_label
from kubelab.apiserver.apis.validation.service_ips import VALID_IP, is_valid_ip, validate_non_special_ip

__all__ = ["validate_endpoints", "validate_endpoints_update"]

PROTOCOLS = ["SCTP", "TCP", "UDP"]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def validate_endpoint_address(address: Object, path: str) -> list[FieldError]:
    ip = address.get("ip")
    if is_valid_ip(f"{path}.ip", ip):
        return [field_invalid(f"{path}.ip", ip, VALID_IP)]
    errs = validate_non_special_ip(str(ip), f"{path}.ip")
    hostname = address.get("hostname")
    if hostname:
        errs += [field_invalid(f"{path}.hostname", hostname, m) for m in is_dns1123_label(hostname)]
    return errs


def validate_endpoint_port(port: Object, require_name: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(field_required(f"{path}.name"))
    elif name:
        errs += [field_invalid(f"{path}.name", name, m) for m in is_dns1123_label(name)]
    number = port.get("port")
    if not isinstance(number, int) or not 1 <= number <= 65535:
        errs.append(field_invalid(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
    protocol = port.get("protocol")
    if not protocol:
        errs.append(field_required(f"{path}.protocol"))
    elif protocol not in PROTOCOLS:
        errs.append(field_not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    return errs


def validate_endpoints(ep: Object) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, subset in enumerate(ep.get("subsets") or []):
        subset, path = _dict(subset), f"subsets[{i}]"
        ready, not_ready = subset.get("addresses") or [], subset.get("notReadyAddresses") or []
        if not ready and not not_ready:
            errs.append(field_required(path, "must specify `addresses` or `notReadyAddresses`"))
        for key, addresses in (("addresses", ready), ("notReadyAddresses", not_ready)):
            for j, address in enumerate(addresses):
                errs += validate_endpoint_address(_dict(address), f"{path}.{key}[{j}]")
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            errs += validate_endpoint_port(_dict(port), len(ports) > 1, f"{path}.ports[{j}]")
    return errs


def validate_endpoints_update(ep: Object, old: Object) -> list[FieldError]:
    return validate_endpoints(ep)
