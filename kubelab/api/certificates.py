"""certificates.k8s.io/v1 CertificateSigningRequest helpers shared by the API server, the
certificates controllers, the kubelet and kubectl.

Upstream: k8s.io/api certificates/v1 types.go (the well-known signer names, the key usages,
the condition types), pkg/apis/certificates/helpers.go (ParseCSR), pkg/apis/certificates/v1
helpers.go (IsKubeletClientCSR, ValidateKubeletClientCSR, ValidateKubeletServingCSR),
pkg/controller/certificates/certificate_controller_utils.go (IsCertificateRequestApproved,
HasTrueCondition) and kubectl's describe.go / printers.go extractCSRStatus.

A CSR's spec.request and status.certificate are []byte: base64 text in the JSON kubelab keeps.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from kubelab.api import Object

__all__ = [
    "APPROVED", "DENIED", "FAILED", "KUBELET_SERVING_SIGNER", "KUBE_APISERVER_CLIENT_KUBELET_SIGNER",
    "KUBE_APISERVER_CLIENT_SIGNER", "LEGACY_UNKNOWN_SIGNER", "VALID_USAGES", "csr_condition_status",
    "decode_bytes", "has_true_condition", "is_approved", "is_denied", "make_csr", "parse_csr",
    "validate_kubelet_client_csr", "validate_kubelet_serving_csr",
]

# The well-known signers (types.go).
KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET_SIGNER = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING_SIGNER = "kubernetes.io/kubelet-serving"
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"

# KeyUsage values, in types.go's order.
VALID_USAGES = (
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc",
)

PEM_TYPE_ERROR = "PEM block type must be CERTIFICATE REQUEST"


def decode_bytes(value: Any) -> bytes:
    """A []byte field's JSON form (base64) as bytes; b'' when absent or not base64."""
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def parse_csr(request: Any) -> x509.CertificateSigningRequest:
    """ParseCSR: spec.request (base64 in JSON) must hold a PEM "CERTIFICATE REQUEST" block.
    Raises ValueError with upstream's message."""
    pem = decode_bytes(request) if isinstance(request, str) else bytes(request or b"")
    start = pem.find(b"-----BEGIN ")
    if start < 0 or not pem[start:].startswith(b"-----BEGIN CERTIFICATE REQUEST-----"):
        raise ValueError(PEM_TYPE_ERROR)
    try:
        return x509.load_pem_x509_csr(pem[start:])
    except ValueError as err:
        raise ValueError(f"x509: malformed certificate request: {err}") from None


def _conditions(csr: Object) -> list[Object]:
    status = csr.get("status") or {}
    return [c for c in status.get("conditions") or [] if isinstance(c, dict)]


def has_true_condition(csr: Object, condition_type: str) -> bool:
    """HasTrueCondition: a condition of this type whose status is True (or empty, as v1 defaults)."""
    return any(c.get("type") == condition_type and c.get("status", "True") in ("True", "")
               for c in _conditions(csr))


def is_approved(csr: Object) -> bool:
    """IsCertificateRequestApproved: Approved and not Denied."""
    return has_true_condition(csr, APPROVED) and not has_true_condition(csr, DENIED)


def is_denied(csr: Object) -> bool:
    return has_true_condition(csr, DENIED)


def csr_condition_status(csr: Object) -> str:
    """extractCSRStatus (printers.go and describe.go): Pending, Approved or Denied, then
    ,Failed and ,Issued."""
    types = {c.get("type") for c in _conditions(csr)}
    status = DENIED if DENIED in types else APPROVED if APPROVED in types else "Pending"
    if FAILED in types:
        status += ",Failed"
    if (csr.get("status") or {}).get("certificate"):
        status += ",Issued"
    return status


def _subject(req: x509.CertificateSigningRequest, oid: x509.ObjectIdentifier) -> list[str]:
    return [str(a.value) for a in req.subject.get_attributes_for_oid(oid)]


def _sans(req: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        return req.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def _common_name(req: x509.CertificateSigningRequest) -> str:
    names = _subject(req, NameOID.COMMON_NAME)
    return names[0] if names else ""


KUBELET_CLIENT_USAGES = ({"digital signature", "key encipherment", "client auth"},
                         {"digital signature", "client auth"})  # ... and NoRSA
KUBELET_SERVING_USAGES = ({"digital signature", "key encipherment", "server auth"},
                          {"digital signature", "server auth"})


def validate_kubelet_client_csr(req: x509.CertificateSigningRequest, usages: set[str]) -> str:
    """ValidateKubeletClientCSR: the error's text, or "" when the request is a kubelet's
    client certificate (O=system:nodes, CN=system:node:<name>, no SANs, its usages)."""
    if _subject(req, NameOID.ORGANIZATION_NAME) != ["system:nodes"]:
        return "subject organization is not system:nodes"
    sans = _sans(req)
    for kind, what in ((x509.DNSName, "DNS"), (x509.RFC822Name, "Email"),
                       (x509.IPAddress, "IP"), (x509.UniformResourceIdentifier, "URI")):
        if sans is not None and sans.get_values_for_type(kind):
            return f"{what} subjectAltNames are not allowed"
    if not _common_name(req).startswith("system:node:"):
        return "subject common name does not begin with system:node:"
    if usages not in KUBELET_CLIENT_USAGES:
        return f"usages did not match [{' '.join(sorted(KUBELET_CLIENT_USAGES[0]))}]"
    return ""


def validate_kubelet_serving_csr(req: x509.CertificateSigningRequest, usages: set[str]) -> str:
    """ValidateKubeletServingCSR: O=system:nodes, CN=system:node:<name>, a DNS or IP SAN, no
    email or URI SANs, the serving usages."""
    if usages not in KUBELET_SERVING_USAGES:
        return f"usages did not match [{' '.join(sorted(KUBELET_SERVING_USAGES[0]))}]"
    if _subject(req, NameOID.ORGANIZATION_NAME) != ["system:nodes"]:
        return "subject organization is not system:nodes"
    sans = _sans(req)
    dns = sans.get_values_for_type(x509.DNSName) if sans is not None else []
    ips = sans.get_values_for_type(x509.IPAddress) if sans is not None else []
    if not dns and not ips:
        return "DNS or IP subjectAltName is required"
    if sans is not None and sans.get_values_for_type(x509.RFC822Name):
        return "Email subjectAltNames are not allowed"
    if sans is not None and sans.get_values_for_type(x509.UniformResourceIdentifier):
        return "URI subjectAltNames are not allowed"
    if not _common_name(req).startswith("system:node:"):
        return "subject common name does not begin with system:node:"
    return ""


def make_csr(key: Any, common_name: str, organizations: tuple[str, ...] = ()) -> bytes:
    """client-go util/cert MakeCSR: a PEM CERTIFICATE REQUEST for this subject, signed by key
    (Ed25519 keys sign deterministically, so the same key makes the same request)."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs))
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return builder.sign(key, algorithm).public_bytes(serialization.Encoding.PEM)
