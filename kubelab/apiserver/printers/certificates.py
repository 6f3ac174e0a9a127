"""The Table of CertificateSigningRequests: kubernetes pkg/printers/internalversion/printers.go
(printCertificateSigningRequest, extractCSRStatus).

    NAME        AGE   SIGNERNAME                                    REQUESTOR   ...   CONDITION
    csr-8x2kq   2m    kubernetes.io/kube-apiserver-client-kubelet   system:...  ...   Approved,Issued
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.certificates import csr_condition_status
from kubelab.api.duration import human_duration
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["add_handlers"]


def add_handlers(h: TableGenerator) -> None:
    h.table_handler("certificatesigningrequests", [
        column("Name", format_="name"), column("Age"), column("SignerName"), column("Requestor"),
        column("RequestedDuration"), column("Condition")], _csr_row)


def _csr_row(csr: Object, now: float) -> list[str]:
    spec = csr.get("spec") or {}
    seconds = spec.get("expirationSeconds")
    return [csr["metadata"]["name"], _age(csr, now), str(spec.get("signerName") or "<none>"),
            str(spec.get("username") or ""),
            human_duration(seconds) if isinstance(seconds, int) else "<none>",
            csr_condition_status(csr)]
