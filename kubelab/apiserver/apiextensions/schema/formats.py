"""The string formats apiextensions checks (pkg/apiserver/validation/formats.go lists them;
the checks are kube-openapi's pkg/validation/strfmt). A format kubelab does not check here
(isbn, creditcard, ssn, bsonobjectid, password, ...) is accepted as any string; upstream also
ignores formats it does not know.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable

__all__ = ["FORMATS", "valid_format"]

_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_UUID_V = {v: re.compile(rf"^[0-9a-f]{{8}}-[0-9a-f]{{4}}-{v}[0-9a-f]{{3}}-"
                         rf"{'[89ab]' if v != '3' else '[0-9a-f]'}[0-9a-f]{{3}}-[0-9a-f]{{12}}$",
                         re.I) for v in "345"}
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
# strfmt.ParseDateTime accepts RFC 3339 with or without fractions, and a few relatives.
_DATE_TIME = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):"
                        r"[0-5]\d(:[0-5]\d(\.\d+)?)?([Zz]|[+-]([01]\d|2[0-3]):?[0-5]\d)?$")
_DURATION = re.compile(r"^(\s*[+-]?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|"
                       r"(nanoseconds?|microseconds?|milliseconds?|seconds?|sec|minutes?|"
                       r"min|hours?|hr|days?|weeks?|wk)))+\s*$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_HEX_COLOR = re.compile(r"^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$")
_RGB_COLOR = re.compile(r"^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$|^/[^\s]*$")


def _ip(version: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False
    return check


def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


def _byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


FORMATS: dict[str, Callable[[str], bool]] = {
    "hostname": lambda v: bool(_HOSTNAME.match(v)),
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "cidr": _cidr,
    "mac": lambda v: bool(_MAC.match(v)),
    "uuid": lambda v: bool(_UUID.match(v)),
    "uuid3": lambda v: bool(_UUID_V["3"].match(v)),
    "uuid4": lambda v: bool(_UUID_V["4"].match(v)),
    "uuid5": lambda v: bool(_UUID_V["5"].match(v)),
    "byte": _byte,
    "date": lambda v: bool(_DATE.match(v)),
    "date-time": lambda v: bool(_DATE_TIME.match(v)),
    "datetime": lambda v: bool(_DATE_TIME.match(v)),
    "duration": lambda v: bool(_DURATION.match(v)),
    "email": lambda v: bool(_EMAIL.match(v)),
    "hexcolor": lambda v: bool(_HEX_COLOR.match(v)),
    "rgbcolor": lambda v: bool(_RGB_COLOR.match(v)),
    "uri": lambda v: bool(_URI.match(v)),
}


def valid_format(fmt: str, value: str) -> bool:
    """Does value have format fmt? True for a format nobody checks."""
    check = FORMATS.get(fmt)
    return check is None or check(value)
