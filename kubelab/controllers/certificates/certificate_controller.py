"""The loop the CSR approver and signers share (kubernetes pkg/controller/certificates/
certificate_controller.go, NewCertificateController).

It watches CertificateSigningRequests (added, updated, deleted: each queues the name) and
syncFunc hands a private copy of each to the controller's handler, unless the request is gone
or already holds a certificate (nothing is left to do for it).
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object, deep_copy
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller, enqueue_handler
from kubelab.client.shared_informer import SharedInformerFactory

__all__ = ["CertificateController"]


class CertificateController:
    def __init__(self, ctx: ComponentContext, name: str, informers: SharedInformerFactory,
                 handler: Callable[[Object], None]) -> None:
        self.handler = handler
        self.controller = Controller(name, self.sync_func, ctx.clock, trace=ctx.trace,
                                     client=ctx.client, cost=ctx.sync_cost)
        csrs = informers.informer_for("certificatesigningrequests")
        self.lister = csrs.indexer
        csrs.add_event_handler(enqueue_handler(self.controller.enqueue))

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def sync_func(self, key: str) -> None:
        csr, exists = self.lister.get_by_key(key)
        if not exists:
            return  # the request was deleted
        if (csr.get("status") or {}).get("certificate"):
            return  # it already has a certificate: nothing to do
        self.handler(deep_copy(csr))
