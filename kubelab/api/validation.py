"""Name validation with upstream's messages, and the one status rule the kubelet checks too.

Follows apimachinery pkg/util/validation/validation.go (IsDNS1123Label, IsDNS1123Subdomain,
RegexError, MaxLenError), pkg/api/validation/objectmeta.go (ValidateObjectMeta) and
pkg/apis/core/validation/validation.go (ValidateContainerStateTransition).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from kubelab.api.errors import FieldError, field_invalid, field_required

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_key",
    "is_qualified_name",
    "is_valid_label_value",
    "left_terminated",
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

_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)


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
    if not _LABEL_RE.fullmatch(value):
        if _SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_ERR = ("a DNS-1035 label must consist of lower case alphanumeric characters or "
                     "'-', start with an alphabetic character, and end with an alphanumeric "
                     "character")
_DNS1035_RE = re.compile(DNS1035_LABEL_FMT)


def is_dns1035_label(value: str) -> list[str]:
    """IsDNS1035Label (Service names: they become DNS labels, so a letter first)."""
    errs = [max_len_error(DNS1123_LABEL_MAX_LENGTH)] if len(value) > DNS1123_LABEL_MAX_LENGTH else []
    if not _DNS1035_RE.fullmatch(value):
        errs.append(regex_error(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Problems with value as a DNS-1123 subdomain (most object names); [] when it is valid."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


# Label keys and values (IsQualifiedName, IsValidLabelValue).
_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"  # content/kube.go
_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character")
_VALUE_FMT = f"({_KEY_FMT})?"
_VALUE_MSG = "a valid label must be an empty string or " + _KEY_MSG.replace("must ", "", 1)


def _qualified(key: str, what: str) -> list[str]:
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) > 2:
        return [what + " " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if len(parts) == 2:
        prefix = parts[0]
        problems = is_dns1123_subdomain(prefix) if prefix else ["must be non-empty"]
        errs += ["prefix part " + p for p in problems]
    name = parts[-1]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + max_len_error(63))
    if not re.fullmatch(_KEY_FMT, name):
        errs.append("name part " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


@functools.lru_cache(maxsize=4096)
def is_qualified_name(key: str) -> tuple[str, ...]:
    """IsQualifiedName (label keys in objects, nodeSelector keys, ...): an optional DNS
    subdomain prefix and '/', then a name of at most 63 characters. () when valid."""
    return tuple(_qualified(key, "a qualified name"))


@functools.lru_cache(maxsize=4096)
def is_label_key(key: str) -> tuple[str, ...]:
    """IsLabelKey (label selectors): IsQualifiedName with "a valid label key" in its message."""
    return tuple(_qualified(key, "a valid label key"))


@functools.lru_cache(maxsize=4096)
def is_valid_label_value(value: str) -> tuple[str, ...]:
    """IsValidLabelValue: empty, or at most 63 of [-A-Za-z0-9_.], alphanumeric at the ends."""
    errs = [max_len_error(63)] if len(value.encode()) > 63 else []
    if not re.fullmatch(_VALUE_FMT, value):
        errs.append(regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errs)



def _any_name(_name: str) -> list[str]:
    """ValidateCertificateRequestName: "We don't care what you call your certificate requests."""
    return []


def validate_object_meta(
    meta: Any, *, namespaced: bool, name_rule: str = "subdomain", path: str = "metadata"
) -> list[FieldError]:
    """ValidateObjectMeta for the fields kubelab uses: name, generateName, namespace.

    (Plain loops rather than comprehensions: every create and update passes here.)"""
    if not isinstance(meta, dict):
        return [field_invalid(path, meta, "must be an object")]
    errs: list[FieldError] = []
    check = {"label": is_dns1123_label, "dns1035": is_dns1035_label,
             "any": _any_name}.get(name_rule, is_dns1123_subdomain)
    name = meta.get("name")
    generate_name = meta.get("generateName")
    if generate_name and isinstance(generate_name, str):
        # Checked whether or not a name is set (objectmeta.go ValidateObjectMetaAccessor), as
        # a prefix: the server appends 5 characters, so a trailing '-' is allowed.
        for msg in check(mask_trailing_dash(generate_name)):
            errs.append(field_invalid(f"{path}.generateName", generate_name, msg))
    if not name:
        if not generate_name:  # else the server generates the name before it validates
            errs.append(field_required(f"{path}.name", "name or generateName is required"))
    elif not isinstance(name, str):
        errs.append(field_invalid(f"{path}.name", name, "must be a string"))
    else:
        for msg in check(name):
            errs.append(field_invalid(f"{path}.name", name, msg))
    ns = meta.get("namespace")
    if namespaced:
        if not ns:
            errs.append(field_required(f"{path}.namespace"))
        elif not isinstance(ns, str):
            errs.append(field_invalid(f"{path}.namespace", ns, "must be a string"))
        else:
            for msg in _namespace_name_errors(ns):
                errs.append(field_invalid(f"{path}.namespace", ns, msg))
    elif ns:
        errs.append(field_invalid(f"{path}.namespace", ns, "not allowed on this type"))
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value is not None and not _string_map(value):
            errs.append(field_invalid(f"{path}.{field}", value, "must be a map of string to string"))
    return errs


def mask_trailing_dash(name: str) -> str:
    """maskTrailingDash (apimachinery pkg/api/validation/generic.go), quirk included: a
    trailing '-' and the character before it become one 'a'."""
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


@functools.lru_cache(maxsize=1024)
def _namespace_name_errors(namespace: str) -> tuple[str, ...]:
    # The few namespace names of a cluster are checked on every request: remember the answers.
    return tuple(is_dns1123_label(namespace))


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


def left_terminated(spec: dict[str, Any], new: dict[str, Any], old: dict[str, Any]
                    ) -> list[tuple[str, int]]:
    """Where a pod's status `new` has a container leave the terminated state that `old` had it
    in for good: ("containerStatuses" or "initContainerStatuses", index in old). With
    restartPolicy Never a container is never started again, and with OnFailure one that
    exited 0 is not (a sidecar, an init container with restartPolicy Always, always may be).
    The API server refuses such a status (ValidateContainerStateTransition), and the kubelet
    never sends one (status_manager.go checkContainerStateTransition)."""
    policy = spec.get("restartPolicy") or "Always"
    if policy == "Always":
        return []
    sidecars = {c.get("name") for c in spec.get("initContainers") or ()
                if c.get("restartPolicy") == "Always"}
    moved = []
    for key in ("containerStatuses", "initContainerStatuses"):
        for i, before in enumerate(old.get(key) or ()):
            terminated = ((before or {}).get("state") or {}).get("terminated")
            if terminated is None or (terminated.get("exitCode") and policy == "OnFailure") or \
                    (key == "initContainerStatuses" and before.get("name") in sidecars):
                continue
            if any((after or {}).get("name") == before.get("name") and
                   ((after or {}).get("state") or {}).get("terminated") is None
                   for after in new.get(key) or ()):
                moved.append((key, i))
    return moved
