"""Name validation with upstream's messages.

Follows apimachinery pkg/util/validation/validation.go (IsDNS1123Label, IsDNS1123Subdomain,
RegexError, MaxLenError) and pkg/api/validation/objectmeta.go (ValidateObjectMeta).
"""

from __future__ import annotations

import re
from typing import Any

from kubelab.api.errors import FieldError, field_invalid, field_required

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "validate_object_meta",
]

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                     "characters or '-', and must start and end with an alphanumeric character")
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                         "characters, '-' or '.', and must start and end with an alphanumeric "
                         "character")
DNS1123_SUBDOMAIN_MAX_LENGTH = 253

_LABEL_RE = re.compile(f"^{DNS1123_LABEL_FMT}$")
_SUBDOMAIN_RE = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    # Reproduces RegexError's text, including its "(e.g. 'a',  or 'b', ..." double space.
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def is_dns1123_label(value: str) -> list[str]:
    """Problems with value as a DNS-1123 label (namespace names); [] when it is valid."""
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _LABEL_RE.match(value):
        if _SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Problems with value as a DNS-1123 subdomain (most object names); [] when it is valid."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _SUBDOMAIN_RE.match(value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def validate_object_meta(
    meta: Any, *, namespaced: bool, name_rule: str = "subdomain", path: str = "metadata"
) -> list[FieldError]:
    """ValidateObjectMeta for the fields kubelab uses: name, generateName, namespace."""
    if not isinstance(meta, dict):
        return [field_invalid(path, meta, "must be an object")]
    errs: list[FieldError] = []
    check = is_dns1123_label if name_rule == "label" else is_dns1123_subdomain
    name = meta.get("name")
    generate_name = meta.get("generateName")
    if not name and not generate_name:
        errs.append(field_required(f"{path}.name", "name or generateName is required"))
    elif name is not None:
        if not isinstance(name, str):
            errs.append(field_invalid(f"{path}.name", name, "must be a string"))
        else:
            errs += [field_invalid(f"{path}.name", name, msg) for msg in check(name)]
    if generate_name and isinstance(generate_name, str) and not name:
        # The server appends 5 characters, so the prefix is checked as if it were a name.
        prefix = generate_name.rstrip("-") or generate_name
        errs += [field_invalid(f"{path}.generateName", generate_name, msg) for msg in check(prefix)]
    ns = meta.get("namespace")
    if namespaced:
        if not ns:
            errs.append(field_required(f"{path}.namespace"))
        elif not isinstance(ns, str):
            errs.append(field_invalid(f"{path}.namespace", ns, "must be a string"))
        else:
            errs += [field_invalid(f"{path}.namespace", ns, m) for m in is_dns1123_label(ns)]
    elif ns:
        errs.append(field_invalid(f"{path}.namespace", ns, "not allowed on this type"))
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value is not None and not (
            isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
        ):
            errs.append(field_invalid(f"{path}.{field}", value, "must be a map of string to string"))
    return errs
