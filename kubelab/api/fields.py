"""Field selectors: "spec.nodeName=node-1,status.phase!=Running".

A field selector filters a list or watch by a few well-known fields of each object. The kubelet
uses one to watch only the pods bound to its node, and the API server indexes those watches by
spec.nodeName. Follows apimachinery pkg/fields/selector.go (parsing, escaping, String,
RequiresExactMatch), runtime/conversion.go and kubernetes pkg/apis/core/v1/conversion.go
(which fields each resource supports, and the errors for the others).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubelab.api.errors import ParseError

__all__ = [
    "DEFAULT_FIELDS",
    "SUPPORTED_FIELDS",
    "FieldSelector",
    "Requirement",
    "escape_value",
    "field_value",
    "one_term_equal_selector",
    "parse_field_selector",
]

# Every resource can be selected by name and namespace (DefaultMetaV1FieldSelectorConversion).
DEFAULT_FIELDS = frozenset({"metadata.name", "metadata.namespace"})

# The core/v1 resources that register their own field label conversion (core/v1/conversion.go).
# Note that nodes and namespaces are cluster-scoped and do not accept metadata.namespace.
SUPPORTED_FIELDS: dict[str, frozenset[str]] = {
    "pods": DEFAULT_FIELDS | {
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
        "status.nominatedNodeName"},
    "events": DEFAULT_FIELDS | {
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"},
    "nodes": frozenset({"metadata.name", "spec.unschedulable"}),
    "namespaces": frozenset({"metadata.name", "status.phase"}),
    "replicationcontrollers": DEFAULT_FIELDS | {"status.replicas"},
    "secrets": DEFAULT_FIELDS | {"type"},
    "services": DEFAULT_FIELDS | {"spec.clusterIP", "spec.type"},
}

# Where a selectable field's value lives when it is not the field's own path, and the value
# a missing field has (Go's zero value, formatted), from each resource's ToSelectableFields.
_PATHS = {"source": "source.component", "reportingComponent": "reportingController"}
_ZERO = {"spec.hostNetwork": "false", "spec.unschedulable": "false", "status.replicas": "0"}


@dataclass(frozen=True)
class Requirement:
    """fields.Requirement: field = value, or field != value ("==" parses as "=")."""

    field: str
    operator: Literal["=", "!="]
    value: str

    def matches(self, obj: Mapping[str, Any]) -> bool:
        equal = field_value(obj, self.field) == self.value
        return equal if self.operator == "=" else not equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """An AND of requirements. FieldSelector() selects everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements

    def exact_value(self, field: str) -> str | None:
        """RequiresExactMatch: the value an `=` requirement demands for field, if any.

        The API server uses it to send a kubelet's `spec.nodeName=<node>` watch only the
        events of that node's pods, instead of testing every pod against every watch."""
        for r in self.requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def validate_for(self, resource: str) -> None:
        """ConvertFieldLabel: raise ParseError, in upstream's words, for a field the
        resource (plural, e.g. "pods") cannot be selected by."""
        for r in self.requirements:
            if r.field in SUPPORTED_FIELDS.get(resource, DEFAULT_FIELDS):
                continue
            if resource in SUPPORTED_FIELDS:  # core/v1/conversion.go
                raise ParseError(f"field label not supported: {r.field}")
            raise ParseError(f'"{r.field}" is not a known field selector: '  # runtime/conversion.go
                             'only "metadata.name", "metadata.namespace"')

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def one_term_equal_selector(field: str, value: str) -> FieldSelector:
    """OneTermEqualSelector: what a kubelet watches with, spec.nodeName=<its node>."""
    return FieldSelector((Requirement(field, "=", value),))


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The value a field selector compares: the string at the field's dotted path.

    Booleans and integers print as Go prints them; a missing field is Go's zero value."""
    node: Any = obj
    for part in _PATHS.get(field, field).split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _ZERO.get(field, "")
        node = node[part]
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, (str, int)):
        return str(node)
    return _ZERO.get(field, "")


def escape_value(value: str) -> str:
    """EscapeValue: backslash-escape \\, "," and "=" so the value parses back unchanged."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@functools.lru_cache(maxsize=1024)
def parse_field_selector(text: str) -> FieldSelector:
    """fields.ParseSelector: the selector written as text, or ParseError naming it.

    Cached: a FieldSelector is immutable."""
    requirements = []
    for part in sorted(_split_terms(text)):  # upstream sorts the raw terms
        if not part:
            continue
        field, operator, value = _split_term(text, part)
        if field or value:  # Transform drops a term whose field and value are both empty
            requirements.append(Requirement(field, operator, _unescape(text, value)))
    return FieldSelector(tuple(requirements))


def _split_terms(text: str) -> list[str]:
    """splitTerms: split at commas that are not escaped with a backslash."""
    terms, start, in_slash = [], 0, False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    return [*terms, text[start:]] if text else []


def _split_term(text: str, term: str) -> tuple[str, Literal["=", "!="], str]:
    """splitTerm: the field has no escapes, so the first operator splits the term."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):  # "==" before "=", so no "=" is left on the value
            if term.startswith(op, i):
                return term[:i], ("!=" if op == "!=" else "="), term[i + len(op):]
    raise ParseError(f"invalid selector: '{text}'; can't understand '{term}'")


def _unescape(text: str, value: str) -> str:
    """UnescapeValue. Upstream's two errors do not name the selector; we prefix it."""
    out, in_slash = [], False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise ParseError(f"invalid selector: '{text}'; "
                                 f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go formats the rune with %v, so it prints its number: "=" is 61.
            raise ParseError(f"invalid selector: '{text}'; "
                             f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise ParseError(f"invalid selector: '{text}'; "
                         "invalid field selector: invalid escape sequence: \\")
    return "".join(out)
