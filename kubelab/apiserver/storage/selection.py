"""Which objects a list or watch asks for: namespace, label selector, field selector, page
size and where the next page of a list starts (the continue token).

storage.SelectionPredicate, storage.ListOptions and storage.EncodeContinue/DecodeContinue/
PrepareContinueToken upstream (k8s.io/apiserver/pkg/storage/selection_predicate.go,
interfaces.go, continue.go). A bad selector or token is the client's fault: 400 BadRequest in
the parser's words. Both list paths (etcd3.py, the watch cache's in delegator.py) end a page
with prepare_continue_token: one encoding of where the next page starts.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from kubelab.api.errors import ParseError, bad_request
from kubelab.api.fields import FieldSelector, parse_field_selector
from kubelab.api.labels import Selector, parse_selector

__all__ = ["CONTINUE_EXPIRED", "TRIGGER_FIELDS", "ListOptions", "ListResult", "Predicate",
           "decode_continue", "encode_continue", "make_predicate", "parse_resource_version",
           "prepare_continue_token"]

_UINT = re.compile(r"[0-9]+")
# The field each resource's watch cache indexes its watchers by, as upstream's storage
# registers them (pkg/registry/core/pod/storage/storage.go: spec.nodeName, so each kubelet's
# pod watch is offered only its node's pods; pkg/registry/core/node/storage/storage.go:
# metadata.name, so each kubelet's watch of its own Node is offered only that Node).
TRIGGER_FIELDS = {"pods": "spec.nodeName", "nodes": "metadata.name"}
CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter.")


@dataclass(frozen=True, slots=True)
class Predicate:
    namespace: str                 # "" for all namespaces
    label: Selector | None         # None: everything
    field: FieldSelector | None
    # The value this watch asks for of the field its resource's watch cache is indexed by
    # (upstream's TriggerFunc: pods by spec.nodeName, nodes by metadata.name), if it asks.
    trigger: str | None = None
    name: str | None = None        # metadata.name=<name>, if any (SelectionPredicate.MatchesSingle)
    limit: int = 0                 # a page's size (0: everything)
    continue_token: str = ""       # where the page starts (a previous page's metadata.continue)

    def matches(self, obj: dict[str, Any]) -> bool:
        if self.label is not None:
            labels = (obj.get("metadata") or {}).get("labels") or {}
            if not self.label.matches(labels):
                return False
        return self.field is None or self.field.matches(obj)

    @property
    def everything(self) -> bool:
        """SelectionPredicate.Empty: no selector."""
        return self.label is None and self.field is None

    def matches_single(self) -> str | None:
        """MatchesSingle: the one name a `metadata.name=<name>` field selector allows."""
        return self.name


@dataclass(frozen=True, slots=True)
class ListOptions:
    """storage.ListOptions: which revision, which objects, one key or every key under it."""

    resource_version: str
    predicate: Predicate
    recursive: bool = True


@dataclass(slots=True)
class ListResult:
    """What a GetList fills in: the items and the list's resourceVersion, continue and
    remainingItemCount (versioner.UpdateList); from_cache says which path served it."""

    items: list[dict[str, Any]]
    resource_version: int
    continue_token: str = ""
    remaining_item_count: int | None = None
    from_cache: bool = False


def make_predicate(resource: str, namespace: str, label_selector: str, field_selector: str,
                   limit: int = 0, continue_token: str = "") -> Predicate:
    try:
        label = parse_selector(label_selector) if label_selector.strip() else None
        field = parse_field_selector(field_selector) if field_selector.strip() else None
        if field is not None:
            field.validate_for(resource)
    except ParseError as err:
        raise bad_request(str(err)) from None
    if label is not None and label.empty():
        label = None
    if field is not None and field.empty():
        field = None
    trigger_field = TRIGGER_FIELDS.get(resource)
    trigger = field.exact_value(trigger_field) if field is not None and trigger_field else None
    name = field.exact_value("metadata.name") if field is not None else None
    return Predicate(namespace, label, field, trigger, name, max(limit, 0), continue_token)


def parse_resource_version(text: str) -> int:
    """Versioner.ParseResourceVersion: "" is 0; anything but an unsigned integer is 400."""
    if not text:
        return 0
    if not _UINT.fullmatch(text):
        raise bad_request(f'invalid resource version: strconv.ParseUint: parsing "{text}": '
                          "invalid syntax")
    return int(text)


def encode_continue(key: str, prefix: str, rev: int) -> str:
    """storage.EncodeContinue: base64url JSON naming the key the next page starts at."""
    token = {"v": "meta.k8s.io/v1", "rv": rev, "start": key[len(prefix):]}
    return base64.urlsafe_b64encode(json.dumps(token, separators=(",", ":")).encode()) \
        .decode().rstrip("=")


def decode_continue(token: str, prefix: str) -> tuple[str, int]:
    """storage.DecodeContinue: (start key, revision), or 400 in upstream's words."""
    invalid_key = "continue key is not valid"
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        version, rev, start = data.get("v"), data.get("rv"), data.get("start")
    except (ValueError, TypeError, AttributeError) as err:
        raise bad_request(f"invalid continue token: {invalid_key}: {err}") from None
    if version != "meta.k8s.io/v1":
        raise bad_request(f"invalid continue token: {invalid_key}: server does not recognize "
                          f"this encoded version {version}")
    if not isinstance(rev, int) or rev == 0:
        raise bad_request(f"invalid continue token: {invalid_key}: incorrect encoded start "
                          "resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise bad_request(f"invalid continue token: {invalid_key}: encoded start key empty "
                          "(version meta.k8s.io/v1)")
    key = start if start.startswith("/") else "/" + start
    if posixpath.normpath(key) != key:
        raise bad_request(f"invalid continue token: {invalid_key}: {start}")
    return prefix + key[1:], max(rev, 0)


def prepare_continue_token(key_last_evaluated: str, key_prefix: str, rev: int, items_count: int,
                           has_more_items: bool, opts: ListOptions) -> tuple[str, int | None]:
    """storage.PrepareContinueToken: when more items remain, the token that starts the next
    page just after the last key evaluated, and, for a list without selectors, how many items
    remain (with selectors the store's count includes objects that do not match: none)."""
    if not has_more_items:
        return "", None
    token = encode_continue(key_last_evaluated + "\x00", key_prefix, rev)  # just after it
    remaining = items_count - opts.predicate.limit if opts.predicate.everything else None
    return token, remaining
