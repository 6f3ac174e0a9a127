"""A Service's IP fields: clusterIPs, ipFamilies, ipFamilyPolicy, externalIPs, CIDRs.

pkg/apis/core/validation/validation.go (ValidateServiceClusterIPsRelatedFields,
validateUpgradeDowngradeClusterIPs, validateUpgradeDowngradeIPFamilies, ValidateNonSpecialIP)
and apimachinery pkg/util/validation/ip.go (IsValidIP, IsValidCIDR). Upstream parses with
netutils' "sloppy" parsers (leading zeros allowed); Python's ipaddress refuses them, so
"010.0.0.1" is refused here and accepted by upstream's legacy fields.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_invalid,
    field_not_supported,
    field_required,
)

__all__ = ["IP_FAMILIES", "IP_FAMILY_POLICIES", "is_headless", "is_ipv6", "is_valid_cidr",
           "is_valid_ip", "validate_cluster_ips", "validate_non_special_ip",
           "validate_upgrade_downgrade"]

IP_FAMILIES = ["IPv4", "IPv6"]
IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"]
VALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
VALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def _ip(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value) if isinstance(value, str) else None
    except ValueError:
        return None


def is_ipv6(value: Any) -> bool:
    return isinstance(_ip(value), ipaddress.IPv6Address)


def is_valid_ip(path: str, value: Any) -> list[FieldError]:
    """IsValidIP."""
    return [] if _ip(value) is not None else [field_invalid(path, value, VALID_IP)]


def is_valid_cidr(path: str, value: Any) -> list[FieldError]:
    """IsValidCIDR: an address and a prefix length (host bits may be set, as ParseCIDR allows)."""
    try:
        ipaddress.ip_network(value, strict=False)
        if not isinstance(value, str) or "/" not in value:
            raise ValueError(value)
    except ValueError:
        return [field_invalid(path, value, VALID_CIDR)]
    return []


def validate_non_special_ip(value: str, path: str) -> list[FieldError]:
    """ValidateNonSpecialIP: no unspecified, loopback or link-local address (externalIPs)."""
    ip = _ip(value)
    if ip is None:
        return [field_invalid(path, value, "must be a valid IP address")]
    errs = []
    if ip.is_unspecified:
        errs.append(field_invalid(path, value, f"may not be unspecified ({value})"))
    if ip.is_loopback:
        errs.append(field_invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if ip.is_link_local:
        errs.append(field_invalid(path, value,
                                  "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    packed = ip.packed
    if (ip.version == 4 and packed[:3] == b"\xe0\x00\x00") or \
            (ip.version == 6 and packed[0] == 0xFF and packed[1] & 0x0F == 0x02):
        errs.append(field_invalid(path, value, "may not be in the link-local multicast range "
                                  "(224.0.0.0/24, ff02::/10)"))
    return errs


def is_headless(spec: Object) -> bool:
    ips = spec.get("clusterIPs") or []
    return len(ips) == 1 and ips[0] == "None"


def validate_cluster_ips(spec: Object) -> list[FieldError]:
    """ValidateServiceClusterIPsRelatedFields (also run by the allocator before it allocates)."""
    if spec.get("type") == "ExternalName":
        return []  # ValidateService forbids all of them there
    errs: list[FieldError] = []
    ips: list[Any] = list(spec.get("clusterIPs") or [])
    cluster_ip = spec.get("clusterIP") or ""
    if cluster_ip:
        if not ips:
            errs.append(field_required("spec.clusterIPs"))
        elif ips[0] != cluster_ip:
            errs.append(field_invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    elif ips:
        errs.append(field_invalid("spec.clusterIPs", ips,
                                  "must be empty when `clusterIP` is not specified"))
    families: list[Any] = list(spec.get("ipFamilies") or [])
    seen: set[Any] = set()
    for i, family in enumerate(families):
        if family not in IP_FAMILIES:
            errs.append(field_not_supported(f"spec.ipFamilies[{i}]", family, IP_FAMILIES))
        if family in seen:
            errs.append(field_duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        errs.append(field_not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    bad_ips = False
    for i, ip in enumerate(ips):
        if i == 0 and ip == "None":
            if len(ips) > 1:
                bad_ips = True
                errs.append(field_invalid("spec.clusterIPs", ips,
                                          "'None' must be the first and only value"))
            continue
        problems = is_valid_ip(f"spec.clusterIPs[{i}]", ip)
        bad_ips = bad_ips or bool(problems)
        errs += problems
    if len(ips) > 2:
        errs.append(field_invalid("spec.clusterIPs", ips, "may only hold up to 2 values"))
    if bad_ips:
        return errs  # upstream stops here: the checks below would only repeat the problem
    if len(ips) > 1 and len({is_ipv6(ip) for ip in ips}) < 2:
        errs.append(field_invalid("spec.clusterIPs", ips,
                                  "may specify no more than one IP for each IP family"))
    if not is_headless(spec) and ips and families:
        for i, (ip, family) in enumerate(zip(ips, families, strict=False)):
            if family == "IPv4" and is_ipv6(ip):
                errs.append(field_invalid(f"spec.clusterIPs[{i}]", ip, "expected an IPv4 value as "
                                          f"indicated by `ipFamilies[{i}]`"))
            if family == "IPv6" and not is_ipv6(ip):
                errs.append(field_invalid(f"spec.clusterIPs[{i}]", ip, "expected an IPv6 value as "
                                          f"indicated by `ipFamilies[{i}]`"))
    return errs


def validate_upgrade_downgrade(spec: Object, old: Object) -> list[FieldError]:
    """validateUpgradeDowngradeClusterIPs and validateUpgradeDowngradeIPFamilies: a secondary
    IP or family may come or go (going needs SingleStack), the primary never changes."""
    if "ExternalName" in (spec.get("type"), old.get("type")):
        return []
    errs: list[FieldError] = []
    new_headless, old_headless = is_headless(spec), is_headless(old)
    policy = spec.get("ipFamilyPolicy")
    if not (new_headless and old_headless):
        ips, old_ips = list(spec.get("clusterIPs") or []), list(old.get("clusterIPs") or [])
        if len(old_ips) == len(ips):
            errs += [field_invalid(f"spec.clusterIPs[{i}]", ips, "may not change once set")
                     for i, ip in enumerate(old_ips) if ip != ips[i]]
        elif len(old_ips) > len(ips):
            if not ips:
                errs.append(field_invalid("spec.clusterIPs[0]", ips, "primary clusterIP can not be unset"))
            elif old_ips and ips[0] != old_ips[0]:
                errs.append(field_invalid("spec.clusterIPs[0]", ips, "may not change once set"))
            if len(ips) == 1 and policy != "SingleStack":
                errs.append(field_invalid("spec.ipFamilyPolicy", policy, "must be set to 'SingleStack' "
                                          "when releasing the secondary clusterIP"))
        elif old_ips and ips[0] != old_ips[0]:
            errs.append(field_invalid("spec.clusterIPs[0]", ips, "may not change once set"))
    if new_headless != old_headless or new_headless:
        return errs  # headless Services may change families
    fams, old_fams = list(spec.get("ipFamilies") or []), list(old.get("ipFamilies") or [])
    ips = spec.get("clusterIPs") or []
    if len(old_fams) == len(fams):
        # (upstream reports every changed family at index 0)
        errs += [field_invalid("spec.ipFamilies[0]", fams, "may not change once set")
                 for i, fam in enumerate(old_fams) if fam != fams[i]]
    elif len(old_fams) > len(fams):
        if not ips:
            errs.append(field_invalid("spec.ipFamilies[0]", fams, "primary ipFamily can not be unset"))
        if fams and fams[0] != old_fams[0]:
            errs.append(field_invalid("spec.ipFamilies[0]", ips, "may not change once set"))
        if len(fams) == 1 and policy != "SingleStack":
            errs.append(field_invalid("spec.ipFamilyPolicy", policy, "must be set to 'SingleStack' "
                                      "when releasing the secondary ipFamily"))
    elif old_fams and fams and fams[0] != old_fams[0]:
        errs.append(field_invalid("spec.ipFamilies[0]", ips, "may not change once set"))
    return errs
