"""The root-CA publisher: the ConfigMap `kube-root-ca.crt`, key `ca.crt`, in every namespace
(kubernetes pkg/controller/certificates/rootcacertpublisher/publisher.go).

It watches namespaces (added; updated while Active) and ConfigMaps named kube-root-ca.crt
(updated, deleted): each event queues the namespace. syncNamespace creates the ConfigMap when
the lister has none, with the kubernetes.io/description annotation; when one exists whose
data is not exactly {ca.crt: the CA} or whose annotation is missing, it puts both back. So a
learner who edits or deletes it sees it restored. A create refused because the namespace is
gone or terminating is not retried.

The CA is kube-controller-manager's --root-ca-file (kubeadm: /etc/kubernetes/pki/ca.crt, the
cluster CA that signed the API server's serving certificate). kubelab's manager is handed a
function that returns it (ControllerManager(root_ca=...)): in `kubelab serve` the CA of its
HTTPS (kubelab/serve/certs.py), in-process a deterministic CA certificate made from the
cluster's seed (kubelab/cluster/pki.py). resync() requeues every namespace, for when the CA
changes (serve hands its CA to a cluster already running).

Run only in the anatomy, as the serviceaccount controller (controller_descriptor.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api import Object, deep_copy
from kubelab.api.errors import ApiError
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory

__all__ = ["DESCRIPTION", "DESCRIPTION_ANNOTATION", "ROOT_CA_CERT_CONFIG_MAP_NAME", "Publisher"]

ROOT_CA_CERT_CONFIG_MAP_NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using "
               "internal endpoints such as the internal service IP or kubernetes.default.svc. "
               "No other usage is guaranteed across distributions of Kubernetes clusters.")
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


def _placeholder() -> bytes:
    return b""


class Publisher:
    NAME = "root-ca-certificate-publisher-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory,
                 root_ca: Callable[[], bytes] = _placeholder) -> None:
        self.client = ctx.client
        self.root_ca = root_ca
        self.controller = Controller("root_ca_cert_publisher", self.sync_namespace, ctx.clock,
                                     trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        configmaps = informers.informer_for("configmaps")
        namespaces = informers.informer_for("namespaces")
        self.cm_lister, self.ns_lister = configmaps.indexer, namespaces.indexer
        configmaps.add_event_handler(ResourceEventHandler(
            on_update=lambda _old, new: self.config_map_changed(new),
            on_delete=self.config_map_changed))
        namespaces.add_event_handler(ResourceEventHandler(
            on_add=self.namespace_added, on_update=self.namespace_updated))

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def resync(self) -> None:
        """Queue every namespace (the CA changed)."""
        for namespace in self.ns_lister.list():
            self.controller.queue.add(namespace["metadata"]["name"])

    def config_map_changed(self, obj: Any) -> None:
        """configMapDeleted, configMapUpdated: only kube-root-ca.crt matters."""
        cm = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(cm, dict) and cm["metadata"].get("name") == ROOT_CA_CERT_CONFIG_MAP_NAME:
            self.controller.queue.add(cm["metadata"].get("namespace", ""))

    def namespace_added(self, namespace: Object) -> None:
        self.controller.queue.add(namespace["metadata"]["name"])

    def namespace_updated(self, _old: Object, new: Object) -> None:
        if (new.get("status") or {}).get("phase") == "Active":
            self.controller.queue.add(new["metadata"]["name"])

    def sync_namespace(self, key: str) -> None:
        data = {"ca.crt": self.root_ca().decode()}
        cm, exists = self.cm_lister.get_by_key(f"{key}/{ROOT_CA_CERT_CONFIG_MAP_NAME}")
        if not exists:
            try:
                self.client.create({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": ROOT_CA_CERT_CONFIG_MAP_NAME, "namespace": key,
                                 "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                    "data": data})
            except ApiError as err:
                causes = (err.details or {}).get("causes") or []
                if err.code == 404 or any(c.get("reason") == NAMESPACE_TERMINATING_CAUSE
                                          for c in causes):
                    return  # don't retry a create if the namespace is gone or terminating
                raise
            return
        annotations = cm["metadata"].get("annotations") or {}
        if cm.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
            return
        cm = deep_copy(cm)
        cm["data"] = data
        cm["metadata"]["annotations"] = {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}
        self.client.update(cm)
