"""The customresourcecleanup finalizer: deleting a CRD deletes its objects first.

Follows apiextensions-apiserver: pkg/registry/customresourcedefinition/etcd.go (the first
DELETE of a CRD adds the finalizer `customresourcecleanup.apiextensions.k8s.io` and the
condition Terminating=True, InstanceDeletionPending) and pkg/controller/finalizer/
crd_finalizer.go (a controller inside the API server: it marks the deletion in progress,
deletes every custom object through the normal delete path, so their own finalizers are
honoured, waits until none is left, then records InstanceDeletionCompleted and removes its
finalizer, which deletes the CRD). While the CRD is terminating, creating objects of its kind
is refused with 405 (customresource_handler.go).

The controller runs on the API server's clock, one sync per CRD being deleted, and retries
every RETRY seconds while objects remain (upstream: a rate-limited workqueue, 5 ms doubling
to 1000 s). A stopped API
server does nothing; on restart it resumes each CRD that still carries the finalizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.apiserver.apiextensions.crd import CLEANUP_FINALIZER, set_condition
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.bootstrap import LOOPBACK
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.storage.codec import decode
from kubelab.apiserver.storage.prefixes import key_prefix

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["CRDFinalizer"]

GROUP = "apiextensions.k8s.io"
CRD_PREFIX = key_prefix(GROUP, "customresourcedefinitions")
RETRY = 1.0


class CRDFinalizer:
    def __init__(self, server: APIServer) -> None:
        self.server = server
        self._pending: set[str] = set()

    def enqueue(self, crd: Object) -> None:
        """A CRD was written: if it is being deleted with our finalizer, sync it soon."""
        meta = crd.get("metadata") or {}
        name = str(meta.get("name") or "")
        if meta.get("deletionTimestamp") and CLEANUP_FINALIZER in (meta.get("finalizers") or ()) \
                and name not in self._pending:
            self._pending.add(name)
            self.server.clock.call_later(0.0, lambda: self.sync(name))

    def resume(self) -> None:
        """The server (re)starts: pick up every CRD still being deleted."""
        for kv in self.server.store.range(CRD_PREFIX, prefix=True).kvs:
            self.enqueue(decode(kv.value, kv.mod_revision))

    def sync(self, name: str) -> None:
        self._pending.discard(name)
        server = self.server
        if not server.running:
            return  # resumed by serve_crd when the server starts again
        crd = self._read(name)
        if crd is None or CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or ()):
            return
        spec = crd.get("spec") or {}
        resource, group = (spec.get("names") or {}).get("plural", ""), spec.get("group", "")
        served = server.served.lookup(group, resource)
        remaining = self._delete_instances(served, resource, group) if served is not None else 0
        now = server.timestamp()
        if remaining:
            set_condition(crd, "Terminating", "True", "InstanceDeletionInProgress",
                          "CustomResource deletion is in progress", now)
            self._write(crd, "status")
            self._pending.add(name)
            # A background timer, as a periodic loop: waiting for another finalizer is idle.
            server.clock.call_later(RETRY, lambda: self.sync(name), background=True)
            return
        set_condition(crd, "Terminating", "False", "InstanceDeletionCompleted",
                      "removed all instances", now)
        crd = self._write(crd, "status") or crd
        crd["metadata"]["finalizers"] = [f for f in crd["metadata"].get("finalizers") or ()
                                         if f != CLEANUP_FINALIZER]
        self._write(crd, "")

    def _delete_instances(self, served: Any, resource: str, group: str) -> int:
        """Delete every object of the kind not yet being deleted; how many are left."""
        for kv in self.server.store.range(served.prefix, prefix=True).kvs:
            meta = decode(kv.value, kv.mod_revision)["metadata"]
            if meta.get("deletionTimestamp"):
                continue  # its own finalizers hold it; wait
            request = Request("delete", resource, namespace=meta.get("namespace", ""),
                              name=meta["name"], group=group)
            try:
                self._run(request, lambda ctx: self.server.registry.delete(ctx))
            except ApiError:
                continue  # tried again on the next sync
        return len(self.server.store.range(served.prefix, prefix=True).kvs)

    def _read(self, name: str) -> Object | None:
        return self.server.served.get("customresourcedefinitions", "", name, GROUP)

    def _write(self, crd: Object, subresource: str) -> Object | None:
        name = crd["metadata"]["name"]
        request = Request("update", "customresourcedefinitions", name=name, group=GROUP,
                          subresource=subresource, body=crd)
        try:
            result: Object = self._run(request, lambda ctx: self.server.registry.update(ctx, crd))
        except ApiError:  # a conflict: the next sync reads again
            return None
        return result

    def _run(self, request: Request, call: Any) -> Any:
        """One request as the API server's own loopback identity, audited."""
        server = self.server
        served = server.served.lookup(request.group, request.resource)
        assert served is not None
        record = AuditRecord(server.clock.now, LOOPBACK.name, request.verb, request.resource,
                             request.namespace, request.name)
        ctx = RequestContext(request, served, LOOPBACK, record, server)
        try:
            result = call(ctx)
        except ApiError as err:
            record.code = err.code
            server.log(record)
            raise
        record.code = 200
        server.log(record)
        return result
