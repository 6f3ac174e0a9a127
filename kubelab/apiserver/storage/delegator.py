"""Who serves a list: the watch cache, or etcd behind it.

k8s.io/apiserver pkg/storage/cacher/delegator.go CacheDelegator.GetList and
delegator/interface.go ShouldDelegateList: a list the cache can answer is served from it (in
1.34 that includes the consistent list, resourceVersion "", once the cache has caught up with
etcd's current revision); a legacy exact list (a limit and a resourceVersion N) and a
continued list go to etcd, as they do upstream when the cache keeps no snapshots of past
revisions (ListFromCacheSnapshot off). Then Cacher.GetList (cacher.go): the watch cache's
index narrows the keys (watch_cache.go list: "prefiltering" by an indexed field), the
predicate decides, and the page ends with the same continue token etcd's list writes.

kubelab's departures, both from a cache that keeps the keys of its index, not the objects:
- the cache can answer a list only when its index can (pods by spec.nodeName); every other
  list is delegated. The objects of the keys the index names are read from the store now.
- upstream's consistent read waits until the cache is fresh (WaitUntilFreshAndList); a
  simulated server cannot wait inside a request, so a cache that is not fresh makes the list
  fall back to etcd, as upstream does when that wait times out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubelab.apiserver.storage import etcd3
from kubelab.apiserver.storage.codec import decode
from kubelab.apiserver.storage.selection import ListOptions, ListResult, prepare_continue_token
from kubelab.store.backend import Backend

if TYPE_CHECKING:
    from kubelab.apiserver.storage.watch_cache import Cacher

__all__ = ["Result", "get_list", "should_delegate_list"]


@dataclass(frozen=True, slots=True)
class Result:
    """delegator.Result: whether etcd serves the list, and whether it is a consistent read."""

    should_delegate: bool
    consistent_read: bool = False


def should_delegate_list(opts: ListOptions) -> Result:
    """ShouldDelegateList for resourceVersionMatch "" (kubelab's requests have no other) and a
    cache without snapshots: ShouldDelegateExactRV and ShouldDelegateContinue delegate."""
    pred, rv = opts.predicate, opts.resource_version
    if pred.limit > 0 and rv not in ("", "0"):  # legacy exact match
        return Result(should_delegate=True)
    if pred.continue_token:
        return Result(should_delegate=True)
    if rv == "":  # ShouldDelegateConsistentRead: etcd can tell the cache its progress
        return Result(should_delegate=False, consistent_read=True)
    return Result(should_delegate=False)


def get_list(store: Backend, cacher: Cacher | None, key: str, opts: ListOptions) -> ListResult:
    """CacheDelegator.GetList: the options are validated first (400 before any read)."""
    key_prefix = key if not opts.recursive or key.endswith("/") else key + "/"
    etcd3.validate_list_options(key_prefix, opts)
    if should_delegate_list(opts).should_delegate or cacher is None:
        return etcd3.get_list(store, key, opts)
    keys = _list_items(cacher, key_prefix, opts)
    if keys is None:  # the cache cannot serve it (see above): etcd does
        return etcd3.get_list(store, key, opts)
    return _get_list_from_cache(store, keys, key_prefix, opts)


def _list_items(cacher: Cacher, key_prefix: str, opts: ListOptions) -> list[str] | None:
    """Cacher.listItems: the keys under key_prefix the index names for the predicate's value of
    the indexed field (pred.MatcherIndex), or None: no index for it, or the cache not fresh."""
    trigger = opts.predicate.trigger
    if not opts.recursive or trigger is None:
        return None
    keys = cacher.by_index(trigger)
    return None if keys is None else [k for k in keys if k.startswith(key_prefix)]


def _get_list_from_cache(store: Backend, keys: list[str], key_prefix: str,
                         opts: ListOptions) -> ListResult:
    """Cacher.GetList: the matching objects of keys, in key order, at most limit of them."""
    pred = opts.predicate
    rev = store.revision  # the cache is fresh: it has seen every change up to now
    items: list[dict[str, Any]] = []
    last_selected, has_more = "", False
    for key in keys:
        if pred.limit > 0 and len(items) >= pred.limit:
            # Reaching an item past a full page is how we learn a continuation is needed.
            has_more = True
            break
        for kv in store.range(key).kvs:
            obj = decode(kv.value, kv.mod_revision)
            if pred.matches(obj):
                items.append(obj)
                last_selected = kv.key
    token, remaining = prepare_continue_token(last_selected, key_prefix, rev, len(keys),
                                              has_more, opts)
    return ListResult(items, rev, token, remaining, from_cache=True)
