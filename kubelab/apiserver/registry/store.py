"""The generic registry: create, get, list, update and delete on top of the store.

One class serves every resource, as upstream's generic Store does
(k8s.io/apiserver/pkg/registry/generic/registry/store.go, rest/create.go, rest/update.go);
what differs between kinds is in strategy.py. Objects are stored as compact JSON under
<prefix><namespace>/<name> (<prefix><name> if cluster-scoped), the prefix the storage factory
gives the resource (storage/prefixes.py: `/registry/pods/`, but `/registry/minions/` for nodes
and `/registry/services/specs/` for services); metadata.resourceVersion is not stored but taken from
the key's mod_revision on every read, as the etcd3 storage layer does. Writes are etcd txns
that compare revisions, so "create if absent" and "update if unchanged" are each one atomic
step (storage/etcd3/store.go Create and GuaranteedUpdate).

Lists take store.go's one path: List makes the predicate, ListPredicate picks the key (one
key for a single name, else the key root) and the storage's GetList (storage/delegator.py:
the watch cache when it can serve, else storage/etcd3.py) fills the list. As upstream, a list
that names a single object is not paged: its continue token is not looked at.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import (
    ApiError,
    already_exists,
    bad_request,
    conflict,
    invalid,
    not_found,
    request_entity_too_large,
)
from kubelab.api.meta import new_uid, random_suffix
from kubelab.apiserver.admission.chain import CREATE, UPDATE, Attributes
from kubelab.apiserver.apis.validation import validate_create, validate_update
from kubelab.apiserver.context import RequestContext, Served
from kubelab.apiserver.endpoints.decode import MAX_REQUEST_BODY_BYTES
from kubelab.apiserver.registry.deletion import delete_object
from kubelab.apiserver.registry.strategy import prepare_for_create, prepare_for_update
from kubelab.apiserver.storage.codec import decode, encode
from kubelab.apiserver.storage.delegator import get_list
from kubelab.apiserver.storage.selection import (
    ListOptions,
    ListResult,
    Predicate,
    make_predicate,
    parse_resource_version,
)
from kubelab.store import Compare, DeleteRequest, KeyValue, PutRequest, RequestTooLargeError

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["Registry"]

MAX_GENERATE_NAME_ATTEMPTS = 8   # store.go maxNameGenerationCreateAttempts
MAX_GENERATED_PREFIX = 58        # names.SimpleNameGenerator: 63 - 5 random characters


class Registry:
    def __init__(self, server: APIServer) -> None:
        self.server = server

    # ------------------------------------------------------------------ reads

    def read(self, ctx: RequestContext, namespace: str, name: str) -> KeyValue:
        """The live key-value of an object, or 404 (rejected at the storage stage)."""
        served = ctx.served
        kvs = self.server.store.range(served.key(namespace, name)).kvs
        if not kvs:
            ctx.enter("storage")
            raise not_found(served.info.resource, name, served.info.group)
        return kvs[0]

    def get(self, ctx: RequestContext) -> Object:
        r = ctx.request
        # store.Get reads etcd (etcd_requests_total{operation="get"}, found or not); an update's
        # or a delete's read is not counted: upstream they start from the watch cache's copy.
        info = ctx.served.info
        self.server.metrics.etcd_request("get", info.group, info.resource, 0.0)
        kv = self.read(ctx, r.namespace, r.name)
        ctx.enter("storage")
        return decode(kv.value, kv.mod_revision)

    def list_objects(self, ctx: RequestContext) -> Object:
        """List: the request's selectors, page size and continue token as a predicate
        (PredicateFunc), then ListPredicate; counts which path served it (fanout.py)."""
        r, info = ctx.request, ctx.served.info
        ctx.enter("storage")
        predicate = make_predicate(info.resource, r.namespace, r.label_selector, r.field_selector,
                                   r.limit, r.continue_token)
        result = self.list_predicate(ctx, predicate, r.resource_version)
        self.server.fanout.listed(ctx.user.name, "watch-cache" if result.from_cache else "etcd")
        meta: dict[str, Any] = {"resourceVersion": str(result.resource_version)}
        if result.continue_token:
            meta["continue"] = result.continue_token
        if result.remaining_item_count is not None:
            meta["remainingItemCount"] = result.remaining_item_count
        return {"apiVersion": info.api_version, "kind": f"{info.kind}List", "metadata": meta,
                "items": result.items}

    def list_predicate(self, ctx: RequestContext, predicate: Predicate,
                       resource_version: str) -> ListResult:
        """ListPredicate: the objects that match, from the storage (the watch cache in front
        of etcd, delegator.py). A predicate that can match one name only reads that one key
        (p.MatchesSingle(), then GetList not recursive), so a kubelet listing its own Node
        does not read every node; any other list reads every key under the key root. A
        watch's initial state is a list too (upstream: the cacher's or etcd's initial list)."""
        served = ctx.served
        cacher = self.server.served.cachers.get((served.info.group, served.info.resource))
        opts = ListOptions(resource_version, predicate)
        key = _key_func(served, predicate)
        if key is not None:
            opts = dataclasses.replace(opts, recursive=False)
        else:
            key = served.prefix + (f"{predicate.namespace}/"
                                   if served.info.namespaced and predicate.namespace else "")
        result = get_list(self.server.store, cacher, key, opts)
        if not result.from_cache:
            self.server.metrics.etcd_request("list", served.info.group, served.info.resource, 0.0)
        return result

    # ------------------------------------------------------------------ create

    def create(self, ctx: RequestContext, obj: Object) -> Object:
        served, info, server = ctx.served, ctx.served.info, self.server
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        namespace = ctx.request.namespace if info.namespaced else ""
        if meta.get("namespace", "") != namespace:
            _ensure_namespace(meta, namespace)
        if served.custom is not None:
            served.custom.decode(obj, info, creating=True)
        attrs = ctx.attributes(CREATE, obj, None)
        ctx.enter("mutating-admission")
        server.admission.mutate(attrs)
        ctx.enter("validation")
        if meta.get("resourceVersion"):
            raise bad_request("resourceVersion should not be set on objects to be created")
        for field in ("uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(field, None)
        generate = meta.get("generateName") if not meta.get("name") else None
        if isinstance(generate, str) and generate:
            meta["name"] = generate[:MAX_GENERATED_PREFIX] + random_suffix(server.rand)
        if isinstance(meta.get("name"), str):
            ctx.record.name = meta["name"]
        meta["uid"] = new_uid(server.rand)
        meta["creationTimestamp"] = server.timestamp()
        prepare_for_create(info.resource, served.strategy, obj, ctx.user)
        # BeginCreate (services: allocate a ClusterIP and NodePorts); whatever no stored
        # object holds once the request ends is released (a failed or dry-run create).
        rest = served.rest
        pending = rest.begin_create(obj) if rest is not None else None
        try:
            errs = validate_create(obj, info, served.builtin, served.extra_validation)
            if served.custom is not None:
                errs += served.custom.validate(obj, None)
            if errs:
                raise invalid(info.kind, str(meta.get("name") or ""), errs, info.group)
            ctx.enter("validating-admission")
            server.admission.validate(attrs)
            ctx.enter("storage")
            for _ in range(MAX_GENERATE_NAME_ATTEMPTS):
                key = served.key(meta.get("namespace", ""), meta["name"])
                created = self._write(ctx, key, obj, Compare.create_revision(key, "=", 0))
                if created or not generate:
                    break
                meta["name"] = ctx.record.name = generate[:MAX_GENERATED_PREFIX] + \
                    random_suffix(server.rand)
            if not created:
                raise self._exists_error(served, meta["name"], key)
        finally:
            if rest is not None and pending is not None:
                rest.finish(pending)
        return obj

    def _exists_error(self, served: Served, name: str, key: str) -> ApiError:
        err = already_exists(served.info.resource, name, served.info.group)
        kvs = self.server.store.range(key).kvs
        if kvs and (json.loads(kvs[0].value).get("metadata") or {}).get("deletionTimestamp"):
            err.message = f"object is being deleted: {err.message}"
        return err

    # ------------------------------------------------------------------ update

    def update(self, ctx: RequestContext, obj: Object, existing: KeyValue | None = None,
               decoded: Object | None = None) -> Object:
        """PUT of the object or of its status (or a namespace's finalize) subresource.

        existing: the live key-value, if the caller has read it; decoded: its decoded object,
        if the caller has one that nobody has changed (a patch reads and decodes it first)."""
        r, served, server = ctx.request, ctx.served, self.server
        info = served.info
        kv = existing or self.read(ctx, r.namespace, r.name)
        old = decoded if decoded is not None and existing is not None else \
            decode(kv.value, kv.mod_revision)
        meta = obj.setdefault("metadata", {})
        _ensure_namespace(meta, r.namespace if info.namespaced else "")
        rv = parse_resource_version(str(meta.get("resourceVersion") or ""))
        if served.custom is not None:
            served.custom.decode(obj, info)
        attrs = ctx.attributes(UPDATE, obj, old)
        ctx.enter("mutating-admission")
        server.admission.mutate(attrs)
        ctx.enter("validation")
        old_meta = old["metadata"]
        for field in ("uid", "creationTimestamp", "deletionTimestamp", "generation"):
            if field in old_meta and (field != "uid" or not meta.get("uid")):
                meta[field] = old_meta[field]
            elif field != "uid":
                meta.pop(field, None)
        if "deletionGracePeriodSeconds" in old_meta:
            meta.setdefault("deletionGracePeriodSeconds", old_meta["deletionGracePeriodSeconds"])
        new = prepare_for_update(info.resource, served.strategy, obj, old, r.subresource,
                                 server.timestamp())
        attrs.object = new
        rest = served.rest if not r.subresource else None
        pending = rest.begin_update(kv.key, new, old) if rest is not None else None
        try:
            return self._update_validated(ctx, kv, new, old, rv, attrs)
        finally:
            if rest is not None and pending is not None:
                rest.finish(pending)

    def _update_validated(self, ctx: RequestContext, kv: KeyValue, new: Object, old: Object,
                          rv: int, attrs: Attributes) -> Object:
        r, served, server = ctx.request, ctx.served, self.server
        info, old_meta = served.info, old["metadata"]
        errs = validate_update(new, old, info, served.builtin, served.extra_validation,
                               r.subresource)
        if served.custom is not None:
            errs += served.custom.validate(new, old)
        if errs:
            raise invalid(info.kind, r.name, errs, info.group)
        ctx.enter("validating-admission")
        server.admission.validate(attrs)
        ctx.enter("storage")
        if rv and rv != kv.mod_revision:
            raise conflict(info.resource, r.name, group=info.group)
        new_meta = new["metadata"]
        if old_meta.get("deletionTimestamp") and not new_meta.get("finalizers") and \
                not _pending_namespace_finalizers(info.resource, new) and \
                not old_meta.get("deletionGracePeriodSeconds"):
            # The last finalizer is gone: the object goes (store.go ShouldDeleteDuringUpdate).
            self.delete_key(ctx, served.key(r.namespace, r.name), kv.mod_revision)
            new_meta["resourceVersion"] = str(server.store.revision)
            return new
        new_meta.pop("resourceVersion", None)
        data = encode(_stored(served, new))
        if data == kv.value:  # nothing changed: no write, no new revision
            new_meta["resourceVersion"] = str(kv.mod_revision)
            return new
        if not self._write(ctx, kv.key, new, Compare.mod_revision(kv.key, "=", kv.mod_revision),
                           data):
            raise conflict(info.resource, r.name, group=info.group)
        return new

    # ------------------------------------------------------------------ delete

    def delete(self, ctx: RequestContext) -> Object:
        r = ctx.request
        return delete_object(self, ctx, self.read(ctx, r.namespace, r.name))

    def delete_collection(self, ctx: RequestContext) -> Object:
        listing = self.list_objects(ctx)
        deleted = []
        for item in listing["items"]:
            meta = item["metadata"]
            kvs = self.server.store.range(ctx.served.key(meta.get("namespace", ""),
                                                         meta["name"])).kvs
            if kvs:
                deleted.append(delete_object(self, ctx, kvs[0]))
        listing["items"] = deleted
        return listing

    # ------------------------------------------------------------------ the store

    def _write(self, ctx: RequestContext, key: str, obj: Object, compare: Compare,
               data: bytes | None = None) -> bool:
        """Put obj at key if compare holds; sets metadata.resourceVersion. False if it failed.

        data: obj already encoded without its resourceVersion, when the caller has it."""
        meta = obj["metadata"]
        if data is None:
            meta.pop("resourceVersion", None)
            data = encode(_stored(ctx.served, obj))
        if len(data) > MAX_REQUEST_BODY_BYTES:
            raise request_entity_too_large(f"limit is {MAX_REQUEST_BODY_BYTES}")
        if ctx.request.dry_run:
            # DryRunnableStorage (k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go):
            # nothing is written. A create that would collide fails, and its answer has no
            # resourceVersion; an update answers with the live one, so `kubectl diff` shows
            # only the real change.
            target, _, _, live = compare
            if target == "create":
                if self.server.store.range(key).kvs:
                    return False
                meta.pop("resourceVersion", None)
            else:
                meta["resourceVersion"] = str(live)
            return True
        try:
            resp = self.server.store.txn([compare], [PutRequest(key, data)], [])
        except RequestTooLargeError as err:
            # etcd refuses entries over --max-request-bytes; upstream passes etcd's own words on.
            raise request_entity_too_large(str(err)) from None
        ctx.record.latency += resp.latency
        self.server.metrics.etcd_request("create" if compare[0] == "create" else "update",
                                         ctx.served.info.group, ctx.served.info.resource,
                                         resp.latency)
        if resp.succeeded:
            meta["resourceVersion"] = str(resp.revision)
            if ctx.served.affects_server:
                self.server.after_write(ctx.served, key, obj)
        return resp.succeeded

    def put(self, ctx: RequestContext, kv: KeyValue, obj: Object) -> Object:
        """Write obj over the live kv (unchanged since it was read), or 409."""
        if not self._write(ctx, kv.key, obj, Compare.mod_revision(kv.key, "=", kv.mod_revision)):
            name = obj["metadata"]["name"]
            raise conflict(ctx.served.info.resource, name, group=ctx.served.info.group)
        return obj

    def delete_key(self, ctx: RequestContext, key: str, mod_revision: int) -> None:
        if ctx.request.dry_run:
            return
        resp = self.server.store.txn([Compare.mod_revision(key, "=", mod_revision)],
                                     [DeleteRequest(key)], [])
        ctx.record.latency += resp.latency
        self.server.metrics.etcd_request("delete", ctx.served.info.group, ctx.served.info.resource,
                                         resp.latency)
        if not resp.succeeded:
            raise conflict(ctx.served.info.resource, key.rsplit("/", 1)[-1],
                           group=ctx.served.info.group)
        if ctx.served.affects_server:
            self.server.after_write(ctx.served, key, None)


def _stored(served: Served, obj: Object) -> Object:
    """What the store holds: a custom object in its storage version (crd_versions.py)."""
    return served.custom.storage_form(obj) if served.custom is not None else obj


def _key_func(served: Served, predicate: Predicate) -> str | None:
    """KeyFunc of the one name the predicate can match (MatchesSingle), or None: it matches
    more than one name, or the key cannot be known (a namespaced resource needs the
    namespace too)."""
    name = predicate.matches_single()
    if name is None or (served.info.namespaced and not predicate.namespace):
        return None
    return served.key(predicate.namespace, name)


def _ensure_namespace(meta: Object, namespace: str) -> None:
    """EnsureObjectNamespaceMatchesRequestNamespace (registry/rest/meta.go)."""
    current = meta.get("namespace") or ""
    if current == namespace:
        return
    if not current or not namespace:
        if namespace:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        return
    raise bad_request("the namespace of the provided object does not match the namespace sent "
                      "on the request")


def _pending_namespace_finalizers(resource: str, obj: Object) -> bool:
    return resource == "namespaces" and bool((obj.get("spec") or {}).get("finalizers"))
