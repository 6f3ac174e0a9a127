"""ValidateEndpointSlice (pkg/apis/discovery/validation/validation.go): at most 1000 endpoints
and 100 ports, addresses valid for the addressType (an IPv6 address in an IPv4 slice is
refused: "must be an IPv4 address"), and an addressType that never changes."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.apiserver.apis.validation.service_ips import VALID_IP, is_ipv6, is_valid_ip

__all__ = ["validate_endpoint_slice", "validate_endpoint_slice_update"]

ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
MAX_ENDPOINTS, MAX_PORTS = 1000, 100


def validate_endpoint_slice(eps: Object) -> list[FieldError]:
    errs: list[FieldError] = []
    address_type = eps.get("addressType")
    if not address_type:
        errs.append(field_required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        errs.append(field_not_supported("addressType", address_type, ADDRESS_TYPES))
    endpoints = eps.get("endpoints") or []
    if len(endpoints) > MAX_ENDPOINTS:
        errs.append(field_forbidden("endpoints", f"must have at most {MAX_ENDPOINTS} items"))
    for i, endpoint in enumerate(endpoints):
        addresses = (endpoint if isinstance(endpoint, dict) else {}).get("addresses") or []
        if not addresses:
            errs.append(field_required(f"endpoints[{i}].addresses", "must contain at least 1 address"))
        for j, address in enumerate(addresses):
            path = f"endpoints[{i}].addresses[{j}]"
            if address_type not in ("IPv4", "IPv6"):
                continue
            if is_valid_ip("", address):
                errs.append(field_invalid(path, address, VALID_IP))
            elif is_ipv6(address) != (address_type == "IPv6"):
                # IsValidIPv4Address / IsValidIPv6Address: the family must match the slice's.
                errs.append(field_invalid(path, address, f"must be an {address_type} address"))
    ports = eps.get("ports") or []
    if len(ports) > MAX_PORTS:
        errs.append(field_forbidden("ports", f"must have at most {MAX_PORTS} items"))
    for i, port in enumerate(ports):
        port = port if isinstance(port, dict) else {}
        number = port.get("port")
        if number is not None and (not isinstance(number, int) or not 0 <= number <= 65535):
            errs.append(field_invalid(f"ports[{i}].port", number,
                                      "must be between 0 and 65535, inclusive"))
        if port.get("protocol") not in PROTOCOLS:
            errs.append(field_not_supported(f"ports[{i}].protocol", port.get("protocol"), PROTOCOLS))
    return errs


def validate_endpoint_slice_update(eps: Object, old: Object) -> list[FieldError]:
    errs = validate_endpoint_slice(eps)
    if eps.get("addressType") != old.get("addressType"):
        errs.append(field_invalid("addressType", eps.get("addressType"), "field is immutable"))
    return errs
