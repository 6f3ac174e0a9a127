"""The CSR signers: kube-controller-manager's csrsigning controller (kubernetes
pkg/controller/certificates/signer/signer.go, and authority/policies.go for what goes into the
certificate).

NewCSRSigningController runs one signer per well-known signer name, each a certificate
controller of its own: kubernetes.io/kubelet-serving, kube-apiserver-client-kubelet and
kube-apiserver-client, all with the cluster CA (--cluster-signing-cert-file and -key-file;
kubeadm: /etc/kubernetes/pki/ca.crt and ca.key). handle() skips a request that is not
approved, already failed, or for another signer; checks the request is one the signer may sign
(isRequestForSignerFn: the kubelet signers want a kubelet's request, ValidateKubeletClientCSR
or ValidateKubeletServingCSR; the client signer wants client auth and no usage beyond digital
signature and key encipherment); a request it refuses gets the Failed condition, reason
SignerValidationFailure, with the reason why. Otherwise it signs (PermissiveSigningPolicy:
the request's subject and key, the usages asked for, not a CA, backdated 5 minutes) for
`duration`: --cluster-signing-duration (8760h) or spec.expirationSeconds when shorter, at
least 10 minutes, never past the CA's own expiry; and writes status.certificate through
/status.

Departures: the legacy-unknown signer (no v1 request may name it) is not run. In-process the
cluster CA is an Ed25519 key derived from the seed (kubelab/cluster/pki.py) and certificates'
serials come from the controller manager's seeded rand, so same seed, same certificates.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID

from kubelab.api import Object
from kubelab.api.certificates import (
    FAILED,
    KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
    KUBE_APISERVER_CLIENT_SIGNER,
    KUBELET_SERVING_SIGNER,
    has_true_condition,
    is_approved,
    parse_csr,
    validate_kubelet_client_csr,
    validate_kubelet_serving_csr,
)
from kubelab.api.meta import epoch
from kubelab.client.component import ComponentContext
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.controllers.certificates.certificate_controller import CertificateController

__all__ = ["CLUSTER_SIGNING_DURATION", "CSRSigningController", "Signer", "is_request_for_signer", "sign",
           "signing_duration"]

CLUSTER_SIGNING_DURATION = 365 * 24 * 3600  # --cluster-signing-duration: 8760h
MIN_DURATION = 600                          # twice the backdate: the sanity lower bound
BACKDATE = 300                              # 5 minutes
SHORT = 8 * 3600                            # below this the backdate comes off the lifetime

# What the signers are handed: the CA's certificate and private key, as PEM.
CAProvider = Callable[[], tuple[bytes, bytes]]


def _no_ca() -> tuple[bytes, bytes]:
    return b"", b""


def signing_duration(expiration_seconds: object, cert_ttl: int = CLUSTER_SIGNING_DURATION) -> int:
    """signer.duration: the requested duration when shorter than the TTL, at least 10 minutes."""
    if not isinstance(expiration_seconds, int):
        return cert_ttl
    return max(MIN_DURATION, min(expiration_seconds, cert_ttl))


def _client_usages(usages: set[str]) -> str:
    """validAPIServerClientUsages: client auth, and nothing beyond the two optional usages."""
    for usage in usages:
        if usage not in ("digital signature", "key encipherment", "client auth"):
            return f"invalid usage for client certificate: {usage}"
    if "client auth" not in usages:
        return "invalid usage for client certificate: missing required client auth"
    return ""


def is_request_for_signer(signer_name: str, csr: Object) -> tuple[bool, str]:
    """isRequestForSignerFn of each signer: (recognized, the validation error or "")."""
    spec = csr.get("spec") or {}
    if spec.get("signerName") != signer_name:
        return False, ""
    usages = set(spec.get("usages") or [])
    req = parse_csr(spec.get("request"))
    if signer_name == KUBELET_SERVING_SIGNER:
        return True, validate_kubelet_serving_csr(req, usages)
    if signer_name == KUBE_APISERVER_CLIENT_KUBELET_SIGNER:
        return True, validate_kubelet_client_csr(req, usages)
    return True, _client_usages(usages)


_KEY_USAGES = {"digital signature": "digital_signature", "signing": "digital_signature",
               "content commitment": "content_commitment", "key encipherment": "key_encipherment",
               "key agreement": "key_agreement", "data encipherment": "data_encipherment",
               "cert sign": "key_cert_sign", "crl sign": "crl_sign",
               "encipher only": "encipher_only", "decipher only": "decipher_only"}
_EXT_USAGES = {"any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
               "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
               "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
               "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
               "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
               "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
               "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING}


def sign(csr: Object, ca_pem: bytes, ca_key_pem: bytes, now: datetime.datetime, serial: int,
         cert_ttl: int = CLUSTER_SIGNING_DURATION) -> bytes:
    """signer.sign with the PermissiveSigningPolicy: the certificate, as PEM."""
    spec = csr.get("spec") or {}
    req = parse_csr(spec.get("request"))
    ca = x509.load_pem_x509_certificate(ca_pem)
    key = serialization.load_pem_private_key(ca_key_pem, None)
    ttl = signing_duration(spec.get("expirationSeconds"), cert_ttl)
    not_before = now - datetime.timedelta(seconds=BACKDATE)
    not_after = now + datetime.timedelta(seconds=ttl - (BACKDATE if ttl < SHORT else 0))
    not_after = min(not_after, ca.not_valid_after_utc)
    usages = set(spec.get("usages") or [])
    flags = dict.fromkeys(set(_KEY_USAGES.values()), False)
    for usage in usages:
        if usage in _KEY_USAGES:
            flags[_KEY_USAGES[usage]] = True
    builder = (x509.CertificateBuilder().subject_name(req.subject).issuer_name(ca.subject)
               .public_key(req.public_key()).serial_number(serial)
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
    if any(flags.values()):
        builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
    extended = [_EXT_USAGES[u] for u in sorted(usages) if u in _EXT_USAGES]
    if extended:
        builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    cert = builder.sign(key, algorithm)  # type: ignore[arg-type]
    return cert.public_bytes(serialization.Encoding.PEM)


class Signer:
    """One signer (signer.go's `signer`), a certificate controller named after its signer."""

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, signer_name: str,
                 controller_name: str, ca: CAProvider) -> None:
        self.client, self.clock, self.rand = ctx.client, ctx.clock, ctx.rand
        self.signer_name, self.ca = signer_name, ca
        self.certificate_controller = CertificateController(ctx, controller_name, informers, self.handle)

    def handle(self, csr: Object) -> None:
        if not is_approved(csr) or has_true_condition(csr, FAILED):
            return  # ignore unapproved or failed requests
        if (csr.get("spec") or {}).get("signerName") != self.signer_name:
            return
        recognized, err = is_request_for_signer(self.signer_name, csr)
        status = csr.setdefault("status", {})
        if err:
            status["conditions"] = [*(status.get("conditions") or []), {
                "type": FAILED, "status": "True", "reason": "SignerValidationFailure",
                "message": err}]
            self.client.update(csr, subresource="status")
            return
        if not recognized:
            return
        ca_pem, ca_key = self.ca()
        if not ca_pem or not ca_key:
            raise RuntimeError("error auto signing csr: no CA")
        now = epoch() + datetime.timedelta(seconds=int(self.clock.now))
        cert = sign(csr, ca_pem, ca_key, now, self.rand.getrandbits(127) + 1)
        status["certificate"] = base64.b64encode(cert).decode()
        self.client.update(csr, subresource="status")


class CSRSigningController:
    NAME = "certificatesigningrequest-signing-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory,
                 ca: CAProvider = _no_ca) -> None:
        self.signers = [
            Signer(ctx, informers, KUBELET_SERVING_SIGNER, "csrsigning-kubelet-serving", ca),
            Signer(ctx, informers, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, "csrsigning-kubelet-client", ca),
            Signer(ctx, informers, KUBE_APISERVER_CLIENT_SIGNER, "csrsigning-kube-apiserver-client", ca),
        ]

    def run(self) -> None:
        for signer in self.signers:
            signer.certificate_controller.run()

    def stop(self) -> None:
        for signer in self.signers:
            signer.certificate_controller.stop()



