"""The list of the etcd storage layer: GetList reads a range of keys from the store, a page at a
time, and keeps the objects the predicate matches.

k8s.io/apiserver pkg/storage/etcd3/store.go GetList, and storage.ValidateListOptions
(pkg/storage/util.go): a continue token names the key the page starts at and the revision
every page of the list reads at; a list without one reads at the newest revision, which
becomes the list's resourceVersion. Objects are decoded one by one as the range returns them
(appendListItem), so a selective list keeps few of the objects it reads.

kubelab's departures: a legacy exact list (a limit and a resourceVersion other than "" and "0")
reads the newest revision too, not the one asked for; and every page of the range asks for
`limit` keys (upstream doubles the page size while a selective list fills its page).
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import bad_request, resource_expired
from kubelab.apiserver.storage.codec import decode
from kubelab.apiserver.storage.selection import (
    CONTINUE_EXPIRED,
    ListOptions,
    ListResult,
    decode_continue,
    parse_resource_version,
    prepare_continue_token,
)
from kubelab.store import CompactedError, prefix_end
from kubelab.store.backend import Backend

__all__ = ["get_list", "validate_list_options"]

LIST_TOO_OLD = "The resourceVersion for the provided list is too old."


def validate_list_options(key_prefix: str, opts: ListOptions) -> tuple[int, str]:
    """ValidateListOptions: (the revision to read at, 0 for the newest; the key to start at,
    "" for the first), or 400. Only a recursive list pages."""
    pred = opts.predicate
    if opts.recursive and pred.continue_token:
        continue_key, continue_rev = decode_continue(pred.continue_token, key_prefix)
        if opts.resource_version not in ("", "0"):
            raise bad_request("specifying resource version is not allowed when using continue")
        return continue_rev, continue_key
    parse_resource_version(opts.resource_version)
    return 0, ""


def get_list(store: Backend, key: str, opts: ListOptions) -> ListResult:
    """store.GetList: the objects under key (or at key, not recursive) that match the
    predicate, at most predicate.limit of them, and where the next page starts."""
    key_prefix = key if not opts.recursive or key.endswith("/") else key + "/"
    with_rev, continue_key = validate_list_options(key_prefix, opts)
    pred = opts.predicate
    start, end = key, key + "\x00"
    if opts.recursive:
        start, end = continue_key or key_prefix, prefix_end(key_prefix)
    paging = pred.limit > 0
    items: list[dict[str, Any]] = []
    last_key, count, has_more = "", 0, False
    while True:
        try:
            resp = store.range(start, end, revision=with_rev, limit=pred.limit)
        except CompactedError:
            raise resource_expired(CONTINUE_EXPIRED if continue_key else LIST_TOO_OLD) from None
        has_more, count = resp.more, resp.count
        # Take items from the response until the page is full, filtering as we go.
        for kv in resp.kvs:
            if paging and len(items) >= pred.limit:
                has_more = True
                break
            last_key = kv.key
            obj = decode(kv.value, kv.mod_revision)
            if pred.matches(obj):
                items.append(obj)
        # Every later page reads at the revision of the first (the list's resourceVersion).
        with_rev = with_rev or resp.revision
        if not has_more or not paging or len(items) >= pred.limit:
            break
        start = last_key + "\x00"
    token, remaining = prepare_continue_token(last_key, key_prefix, with_rev, count, has_more,
                                              opts)
    return ListResult(items, with_rev, token, remaining)
