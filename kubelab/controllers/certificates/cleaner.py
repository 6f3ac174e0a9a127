"""The CSR cleaner: kube-controller-manager's csrcleaner controller (kubernetes
pkg/controller/certificates/cleaner/cleaner.go).

Every hour (pollingInterval; the first pass when it starts) it lists the requests from its
lister and deletes those past their deadline: issued (a certificate, Approved) for more than
an hour since the approval's lastUpdateTime, Denied or Failed for more than an hour, Pending
(no condition at all) for more than 24 hours since it was created, and any whose certificate
has expired. So on a kind cluster an hour old `kubectl get csr` lists nothing.
"""

from __future__ import annotations

import datetime

from cryptography import x509

from kubelab.api import Object
from kubelab.api.certificates import APPROVED, DENIED, FAILED, decode_bytes
from kubelab.api.errors import ApiError
from kubelab.api.meta import epoch, parse_time
from kubelab.client.component import ComponentContext
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.sim.clock import Timer

__all__ = ["APPROVED_EXPIRATION", "PENDING_EXPIRATION", "POLLING_INTERVAL", "CSRCleanerController"]

POLLING_INTERVAL = 3600.0
APPROVED_EXPIRATION = DENIED_EXPIRATION = FAILED_EXPIRATION = 3600.0
PENDING_EXPIRATION = 24 * 3600.0


class CSRCleanerController:
    NAME = "certificatesigningrequest-cleaner-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.client, self.clock, self.trace = ctx.client, ctx.clock, ctx.trace
        self.lister = informers.informer_for("certificatesigningrequests").indexer
        self._timer: Timer | None = None

    def run(self) -> None:
        self.worker()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def worker(self) -> None:
        """One pass over every request, then the next in an hour (wait.Until)."""
        for csr in self.lister.list():
            try:
                self.handle(csr)
            except ApiError as err:
                self.trace.record("csrcleaner", "error", csr["metadata"]["name"], error=err.reason)
        self._timer = self.clock.call_later(POLLING_INTERVAL, self.worker, background=True)

    def handle(self, csr: Object) -> None:
        if self._is_issued_past_deadline(csr) or self._past(csr, DENIED, DENIED_EXPIRATION) or \
                self._past(csr, FAILED, FAILED_EXPIRATION) or self._is_pending_past_deadline(csr) or \
                self._is_issued_expired(csr):
            try:
                self.client.delete("certificatesigningrequests", csr["metadata"]["name"], "")
            except ApiError as err:
                if err.code != 404:
                    raise

    def _older_than(self, stamp: object, seconds: float) -> bool:
        return isinstance(stamp, str) and bool(stamp) and self.clock.now - parse_time(stamp) > seconds

    def _past(self, csr: Object, kind: str, seconds: float) -> bool:
        return any(c.get("type") == kind and self._older_than(c.get("lastUpdateTime"), seconds)
                   for c in (csr.get("status") or {}).get("conditions") or [])

    def _is_pending_past_deadline(self, csr: Object) -> bool:
        return not (csr.get("status") or {}).get("conditions") and \
            self._older_than(csr["metadata"].get("creationTimestamp"), PENDING_EXPIRATION)

    def _is_issued_past_deadline(self, csr: Object) -> bool:
        return bool((csr.get("status") or {}).get("certificate")) and \
            self._past(csr, APPROVED, APPROVED_EXPIRATION)

    def _is_issued_expired(self, csr: Object) -> bool:
        pem = decode_bytes((csr.get("status") or {}).get("certificate"))
        if not pem:
            return False
        try:
            certs = x509.load_pem_x509_certificates(pem)
        except ValueError:
            return False
        now = epoch() + datetime.timedelta(seconds=self.clock.now)
        return any(now > cert.not_valid_after_utc for cert in certs)
