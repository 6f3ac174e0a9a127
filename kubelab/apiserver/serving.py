"""What the server serves: built-in resources, custom resources from CRDs, and the watch cache
of each. Writes to some resources change the server itself: RBAC objects drop the cached
authorization decisions, namespaces the NamespaceLifecycle cache, CRDs add or remove a resource.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.api.resources import ResourceInfo, ResourceTable
from kubelab.apiserver.admission.policy_match import validate_binding, validate_policy
from kubelab.apiserver.apiextensions import tableconvertor
from kubelab.apiserver.apiextensions.crd import crd_resource_info, crd_schema, validate_crd
from kubelab.apiserver.apiextensions.finalizer import CRDFinalizer
from kubelab.apiserver.apiextensions.versions import served_versions
from kubelab.apiserver.apis.schema import SCHEMAS
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.auth.rbac import RBAC_RESOURCES
from kubelab.apiserver.bootstrap import LOOPBACK
from kubelab.apiserver.context import RequestContext, Served
from kubelab.apiserver.printers import batch_policy, internalversion, services, workloads
from kubelab.apiserver.printers import certificates as certificates_printers
from kubelab.apiserver.printers import networking as networking_printers
from kubelab.apiserver.printers import quota as quota_printers
from kubelab.apiserver.printers import storage as storage_printers
from kubelab.apiserver.printers.tablegenerator import TableConvertor, TableGenerator
from kubelab.apiserver.registry.strategy import strategy_for
from kubelab.apiserver.storage.codec import decode
from kubelab.apiserver.storage.prefixes import key_prefix
from kubelab.apiserver.storage.watch_cache import INDEX_FIELDS, CacheEvent, Cacher
from kubelab.store.errors import UnavailableError

if TYPE_CHECKING:
    from kubelab.apiserver.admission.webhook import WebhookClient
    from kubelab.apiserver.server import APIServer

__all__ = ["ServedResources"]

GroupResource = tuple[str, str]
RELIST_UNAVAILABLE = 1.0  # seconds before a cacher whose first list found no etcd quorum lists again
POLICY_RESOURCES = ("validatingadmissionpolicies", "validatingadmissionpolicybindings")
WEBHOOK_RESOURCES = ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")
# The rules of built-in kinds validated next to their own code.
EXTRA_VALIDATION = {"customresourcedefinitions": validate_crd,
                    "validatingadmissionpolicies": validate_policy,
                    "validatingadmissionpolicybindings": validate_binding}


class ServedResources:
    def __init__(self, server: APIServer, table: ResourceTable) -> None:
        self.server, self.table = server, table
        self._served: dict[GroupResource, Served] = {}
        # A custom resource's other served versions (apiextensions/versions.py), by version.
        self._versions: dict[GroupResource, dict[str, Served]] = {}
        self.cachers: dict[GroupResource, Cacher] = {}
        self._namespace_phases: dict[str, str | None] = {}
        self.crd_finalizer = CRDFinalizer(server)
        # The admission policies and bindings, read once until one of them changes.
        self._policies: tuple[list[Object], list[Object]] | None = None
        # --- hpacsi ---
        # Whole group-versions an APIService hands to an extension server (aggregator.py
        # register_api_group): custom.metrics.k8s.io's and external.metrics.k8s.io's resources
        # are whatever the adapter knows, so the group, not each resource, is proxied.
        self._proxied_groups: dict[tuple[str, str], Served] = {}
        self._webhooks: dict[str, list[Object]] = {}  # the same, for webhook configurations
        # The built-in kinds' printers, as each registry's printerstorage.TableConvertor has them.
        self.table_generator = TableGenerator().with_handlers(internalversion.add_handlers,
                                                              services.add_handlers,
                                                              workloads.add_handlers,  # i31-sts
                                                              batch_policy.add_handlers,
                                                              storage_printers.add_handlers,
                                                              networking_printers.add_handlers,
                                                              certificates_printers.add_handlers,
                                                              quota_printers.add_handlers)
        for info in table:
            self._serve_builtin(info)

    def lookup(self, group: str, resource: str) -> Served | None:
        return self._served.get((group, resource))

    def lookup_version(self, group: str, resource: str, version: str) -> Served | None:
        """The resource as served at version (a custom resource may serve several)."""
        served = self._served.get((group, resource))
        if served is None and (group, version) in self._proxied_groups:  # hpacsi
            return self._proxied_group_resource(group, version, resource)
        if served is None or served.info.version == version:
            return served if served is None or _served_version(served) else None
        return self._versions.get((group, resource), {}).get(version)

    def __iter__(self) -> Iterator[Served]:
        """What clients can reach: every served version (discovery lists these)."""
        return iter([*(s for s in self._served.values() if _served_version(s)),
                     *(s for versions in self._versions.values() for s in versions.values())])

    def __len__(self) -> int:
        return len(self._served)

    def _serve_builtin(self, info: ResourceInfo) -> None:
        subs = set(info.subresources) | ({"finalize"} if info.resource == "namespaces" else set())
        extra = EXTRA_VALIDATION.get(info.resource)
        affects = info.resource in RBAC_RESOURCES or info.resource in (
            "namespaces", "customresourcedefinitions", "services", *POLICY_RESOURCES,
            *WEBHOOK_RESOURCES)
        rest = self.server.service_allocators if info.resource == "services" else None
        printed = self.table_generator.handles(info.resource)
        self._served[(info.group, info.resource)] = Served(
            info, strategy_for(info.resource), key_prefix(info.group, info.resource), True,
            SCHEMAS.get(info.kind), frozenset(subs), extra, affects, rest=rest,
            table_convertor=TableConvertor(self.table_generator, info.resource) if printed else None)

    def serve_proxied(self, served: Served) -> None:
        """Serve a resource of an aggregated API (apiserver/aggregator.py); no watch cache."""
        info = served.info
        self._served[(info.group, info.resource)] = served
        if self.table.for_kind(info.api_version, info.kind) is None:
            self.table.register(info)

    # --- hpacsi ---
    def serve_proxied_group(self, served: Served) -> None:
        """Proxy every resource of served.info's group and version to its backend."""
        self._proxied_groups[(served.info.group, served.info.version)] = served

    def unserve_proxied_group(self, group: str, version: str) -> None:
        self._proxied_groups.pop((group, version), None)

    def _proxied_group_resource(self, group: str, version: str, resource: str) -> Served:
        """The group's Served for one resource: any name and subresource goes to the backend
        (/namespaces/default/pods/*/http_requests: resource pods, name *, subresource the metric)."""
        base = self._proxied_groups[(group, version)]
        info = ResourceInfo(resource, base.info.kind, group=group, version=version,
                            verbs=base.info.verbs)
        return Served(info, base.strategy, "", True, None, frozenset(), backend=base.backend,
                      proxied_group=True)

    def serve_crd(self, crd: Object) -> None:
        """Serve the resource a CRD defines (stored under /registry/<group>/<plural>/)."""
        info = crd_resource_info(crd)
        if info is None:
            return
        gr = (info.group, info.resource)
        if gr in self._served and self._served[gr].builtin:
            return  # a CRD may not shadow a built-in resource
        has_status = "status" in info.subresources
        self._served[gr] = Served(
            info, strategy_for(info.resource, custom=True, has_status=has_status),
            key_prefix(info.group, info.resource, custom=True), False, None,
            frozenset(info.subresources),
            custom=crd_schema(crd),
            table_convertor=tableconvertor.new(tableconvertor.printer_columns(crd)))
        self._versions[gr] = served_versions(crd, self._served[gr])
        if self.table.get(info.group, info.resource) is None:
            self.table.register(info)
        if self.server.running and gr not in self.cachers:
            self.cachers[gr] = self._cacher(self._served[gr])
        self.crd_finalizer.enqueue(crd)

    def unserve_crd(self, crd_name: str) -> None:
        """The CRD named <plural>.<group> is gone: so are its resource and its objects."""
        for gr, served in list(self._served.items()):
            if not served.builtin and f"{served.info.resource}.{served.info.group}" == crd_name:
                del self._served[gr]
                self._versions.pop(gr, None)
                self.server.store.delete_range(served.prefix, prefix=True)
                cacher = self.cachers.pop(gr, None)
                if cacher is not None:
                    cacher.stop()

    # ------------------------------------------------------------------ what plugins read

    def get(self, resource: str, namespace: str, name: str, group: str = "") -> Object | None:
        """admission.Lister.get: the live object, or None."""
        served = self._served.get((group, resource))
        if served is None:
            return None
        kvs = self.server.store.range(served.key(namespace, name)).kvs
        return decode(kvs[0].value, kvs[0].mod_revision) if kvs else None

    def list_objects(self, resource: str, group: str = "", namespace: str = "") -> list[Object]:
        """Every live object of a resource (in namespace, if given), for admission plugins."""
        served = self._served.get((group, resource))
        if served is None:
            return []
        prefix = served.prefix + (f"{namespace}/" if served.info.namespaced and namespace else "")
        return [decode(kv.value, kv.mod_revision)
                for kv in self.server.store.range(prefix, prefix=True).kvs]

    def update_status(self, resource: str, group: str, obj: Object) -> Object:
        """PUT <resource>/<name>/status as the server itself (LOOPBACK), audited: what the
        ResourceQuota plugin's quotaAccessor does through its loopback client."""
        served = self._served[(group, resource)]
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        record = AuditRecord(self.server.clock.now, LOOPBACK.name, "update", resource, namespace,
                             name, "status")
        request = Request("update", resource, namespace, name=name, group=group,
                          subresource="status", body=obj)
        try:
            result: Object = self.server.registry.update(
                RequestContext(request, served, LOOPBACK, record, self.server), obj)
        except ApiError as err:
            record.code, record.message = err.code, err.message
            self.server.log(record)
            raise
        record.code = 200
        self.server.log(record)
        return result

    def admission_policies(self) -> tuple[list[Object], list[Object]]:
        """(ValidatingAdmissionPolicies, their bindings), cached as RBAC decisions are: a
        write here or a watch event from another server drops the cache."""
        if self._policies is None:
            group = "admissionregistration.k8s.io"
            self._policies = (self.list_objects(POLICY_RESOURCES[0], group),
                              self.list_objects(POLICY_RESOURCES[1], group))
        return self._policies

    def forget_policies(self) -> None:
        self._policies = None
        self._webhooks = {}

    def webhook_configurations(self, resource: str) -> list[Object]:
        """The Mutating- or ValidatingWebhookConfigurations, cached as the policies are."""
        if resource not in self._webhooks:
            self._webhooks[resource] = self.list_objects(resource, "admissionregistration.k8s.io")
        return self._webhooks[resource]

    def webhook_client(self) -> WebhookClient:
        """How this server calls webhooks (admission/webhook/client.py)."""
        return self.server.webhooks

    def resource_for(self, api_version: str, kind: str) -> ResourceInfo | None:
        return self.table.for_kind(api_version, kind)

    def namespace_phase(self, name: str) -> str | None:
        """admission.Lister.namespace_phase, cached until a namespace changes."""
        if name not in self._namespace_phases:
            kvs = self.server.store.range(key_prefix("", "namespaces") + name).kvs
            self._namespace_phases[name] = (json.loads(kvs[0].value).get("status") or {}).get(
                "phase", "Active") if kvs else None
        return self._namespace_phases[name]

    def forget_namespaces(self, name: str | None = None) -> None:
        if name is None:
            self._namespace_phases.clear()
        else:
            self._namespace_phases.pop(name, None)

    # ------------------------------------------------------------------ watch caches

    def _cacher(self, served: Served) -> Cacher:
        index = INDEX_FIELDS.get(served.info.resource) if served.builtin else None
        return Cacher(self.server, served.info.resource, served.prefix, self._on_change(served),
                      index_field=index)

    def start_cachers(self) -> None:
        for gr, served in self._served.items():
            if "watch" in served.verbs(""):  # a review has nothing to watch
                self.cachers[gr] = self._cacher(served)
        self.crd_finalizer.resume()

    def stop_cachers(self) -> None:
        cachers, self.cachers = list(self.cachers.values()), {}
        for cacher in cachers:
            cacher.stop()

    def restart_cacher(self, resource: str) -> None:
        for gr, cacher in list(self.cachers.items()):
            if cacher.resource == resource:
                cacher.stop()
                try:
                    self.cachers[gr] = self._cacher(self._served[gr])
                except UnavailableError:
                    # etcd has no quorum for the new cacher's first list: as the cacher's
                    # reflector would, list again a second later (until then its watches end)
                    self.server.clock.call_later(RELIST_UNAVAILABLE, lambda: self._relist(resource))

    def _relist(self, resource: str) -> None:
        if self.server.running:
            self.restart_cacher(resource)

    def _on_change(self, served: Served) -> Callable[[list[CacheEvent]], None] | None:
        """Caches derived from stored objects are dropped when their objects change (this
        also covers changes that did not come through this server's registry)."""
        if served.builtin and served.info.resource in RBAC_RESOURCES:
            return lambda _events: self.server.authorizer.invalidate()
        if served.builtin and served.info.resource == "namespaces":
            return lambda _events: self.forget_namespaces()
        if served.builtin and served.info.resource in (*POLICY_RESOURCES, *WEBHOOK_RESOURCES):
            return lambda _events: self.forget_policies()
        if served.builtin and served.info.resource == "customresourcedefinitions":
            return self._crds_changed
        if served.builtin and served.info.group == "flowcontrol.apiserver.k8s.io":
            resource = served.info.resource
            return lambda events: self._flowcontrol_changed(resource, events)
        return None

    def _crds_changed(self, events: list[CacheEvent]) -> None:
        """Serve every CRD in the store, whichever API server wrote it: each kube-apiserver's
        apiextensions controllers watch CRDs through an informer (crdHandler), so a kind
        created through one replica is served by all of them."""
        for event in events:
            crd = event.obj
            if crd is None:
                self.unserve_crd(event.key.rsplit("/", 1)[-1])
            else:
                self.serve_crd(copy.deepcopy(crd))  # the event's object is the cache's own

    def _flowcontrol_changed(self, resource: str, events: list[CacheEvent]) -> None:
        """Priority and fairness's configuration controller reads FlowSchemas and priority
        levels through listers this watch cache feeds (storage/lister.py)."""
        if self.server.flowcontrol is not None:
            self.server.flowcontrol.on_config_events(resource, events)

    def after_write(self, served: Served, key: str, obj: Object | None) -> None:
        """The registry wrote key (obj None: deleted it); keep the derived state current."""
        if not served.builtin:
            return
        resource = served.info.resource
        if resource in RBAC_RESOURCES:
            self.server.authorizer.invalidate()
        elif resource == "namespaces":
            self.forget_namespaces(key.rsplit("/", 1)[-1])
        elif resource in POLICY_RESOURCES or resource in WEBHOOK_RESOURCES:
            self.forget_policies()
        elif resource == "services":
            self.server.service_allocators.record(key, obj)
        elif resource == "customresourcedefinitions":
            if obj is None:
                self.unserve_crd(key.rsplit("/", 1)[-1])
            else:
                self.serve_crd(obj)


def _served_version(served: Served) -> bool:
    """A custom resource's storage version may be stored without being served."""
    return served.custom is None or served.custom.served
