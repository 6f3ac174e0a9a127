"""`kubectl describe csr` (k8s.io/kubectl pkg/describe/describe.go
CertificateSigningRequestDescriber, describeCertificateSigningRequest).

Name, Labels and Annotations (on one line each, labels.FormatLabels), CreationTimestamp, the
requesting user, the signer, the requested duration when there is one, the status
(extractCSRStatus: Approved,Issued ...), then the request's subject as the API server parsed
it and its subject alternative names, and the events.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.x509.oid import NameOID

from kubelab.api import Object
from kubelab.api.certificates import csr_condition_status, parse_csr
from kubelab.api.duration import human_duration
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import Describer, describe_events, rfc1123z
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["CERTIFICATE_DESCRIBERS", "describe_certificate_signing_request"]

_SUBJECT = (("Organization", NameOID.ORGANIZATION_NAME),
            ("Organizational Unit", NameOID.ORGANIZATIONAL_UNIT_NAME),
            ("Country", NameOID.COUNTRY_NAME), ("Locality", NameOID.LOCALITY_NAME),
            ("Province", NameOID.STATE_OR_PROVINCE_NAME), ("StreetAddress", NameOID.STREET_ADDRESS),
            ("PostalCode", NameOID.POSTAL_CODE))


def _format_map(values: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((values or {}).items())) or "<none>"


def _list(w: PrefixWriter, name: str, values: list[str]) -> None:
    """printListHelper: nothing for an empty list, else one value a line under the name."""
    if values:
        w.write(0, f"\t{name}:\t" + "\n\t\t".join(values) + "\n")


def describe_certificate_signing_request(client: Client, csr: Object, events: list[Object],
                                         now: float) -> str:
    meta, spec = csr["metadata"], csr.get("spec") or {}
    req = parse_csr(spec.get("request"))  # upstream: "Error parsing CSR: ..." and no description

    def subject(oid: x509.ObjectIdentifier) -> list[str]:
        return [str(a.value) for a in req.subject.get_attributes_for_oid(oid)]

    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Labels:\t{_format_map(meta.get('labels'))}\n")
    w.write(0, f"Annotations:\t{_format_map(meta.get('annotations'))}\n")
    w.write(0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    w.write(0, f"Requesting User:\t{spec.get('username', '')}\n")
    if spec.get("signerName"):
        w.write(0, f"Signer:\t{spec['signerName']}\n")
    if isinstance(spec.get("expirationSeconds"), int):
        w.write(0, f"Requested Duration:\t{human_duration(spec['expirationSeconds'])}\n")
    w.write(0, f"Status:\t{csr_condition_status(csr)}\n")
    w.write(0, "Subject:\n")
    w.write(0, f"\tCommon Name:\t{''.join(subject(NameOID.COMMON_NAME)[:1])}\n")
    w.write(0, f"\tSerial Number:\t{''.join(subject(NameOID.SERIAL_NUMBER)[:1])}\n")
    for name, oid in _SUBJECT:
        _list(w, name, subject(oid))
    try:
        sans = req.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        sans = None
    if sans is not None and len(sans):
        w.write(0, "Subject Alternative Names:\n")
        _list(w, "DNS Names", [str(v) for v in sans.get_values_for_type(x509.DNSName)])
        _list(w, "Email Addresses", [str(v) for v in sans.get_values_for_type(x509.RFC822Name)])
        _list(w, "URIs", [str(v) for v in sans.get_values_for_type(x509.UniformResourceIdentifier)])
        _list(w, "IP Addresses", [str(v) for v in sans.get_values_for_type(x509.IPAddress)])
    describe_events(w, events, now)
    return w.text()


CERTIFICATE_DESCRIBERS: dict[str, Describer] = {
    "certificatesigningrequests": describe_certificate_signing_request}
