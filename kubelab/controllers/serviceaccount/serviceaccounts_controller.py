"""The serviceaccount controller: a `default` ServiceAccount in every namespace
(kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go).

DefaultServiceAccountsControllerOptions asks for one ServiceAccount, `default`. The controller
watches namespaces (added, updated) and ServiceAccounts (deleted): each event queues the
namespace, and syncNamespace creates every wanted account the lister does not hold, in an
Active namespace only. Deleting `default` brings it back at once. A create that answers
AlreadyExists (the cache was behind) or Forbidden (the namespace began terminating) is no error.

kubelab runs it only in the anatomy (Cluster(anatomy=True), `kubelab serve`): it is disabled by
default in kubelab's manager (controller_descriptor.py), so the traces of clusters without
the anatomy keep their objects and resourceVersions (docs/ARCHITECTURE.md, departures).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory

__all__ = ["DEFAULT_SERVICE_ACCOUNTS", "ServiceAccountsController"]

DEFAULT_SERVICE_ACCOUNTS = ("default",)  # DefaultServiceAccountsControllerOptions


class ServiceAccountsController:
    NAME = "serviceaccount-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.client = ctx.client
        self.service_accounts = DEFAULT_SERVICE_ACCOUNTS
        self.controller = Controller("serviceaccount", self.sync_namespace, ctx.clock,
                                     trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        accounts = informers.informer_for("serviceaccounts")
        namespaces = informers.informer_for("namespaces")
        self.sa_lister, self.ns_lister = accounts.indexer, namespaces.indexer
        accounts.add_event_handler(ResourceEventHandler(on_delete=self.service_account_deleted))
        namespaces.add_event_handler(ResourceEventHandler(
            on_add=self.namespace_added, on_update=lambda _old, new: self.namespace_added(new)))

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def service_account_deleted(self, obj: Any) -> None:
        """serviceAccountDeleted: the namespace may be missing an account now."""
        sa = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(sa, dict):
            self.controller.queue.add(sa["metadata"].get("namespace", ""))

    def namespace_added(self, namespace: Object) -> None:
        """namespaceAdded, namespaceUpdated: look at the namespace's accounts."""
        self.controller.queue.add(namespace["metadata"]["name"])

    def sync_namespace(self, key: str) -> None:
        namespace, exists = self.ns_lister.get_by_key(key)
        if not exists or (namespace.get("status") or {}).get("phase", "Active") != "Active":
            return  # gone or terminating: nothing to create
        for name in self.service_accounts:
            _, found = self.sa_lister.get_by_key(f"{key}/{name}")
            if found:
                continue
            try:
                self.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                    "metadata": {"name": name, "namespace": key}})
            except ApiError as err:
                if err.code not in (403, 409):  # terminating namespace, already exists
                    raise
