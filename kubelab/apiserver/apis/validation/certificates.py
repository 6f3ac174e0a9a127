"""Validation of certificates.k8s.io/v1 CertificateSigningRequest.

Upstream: pkg/apis/certificates/validation/validation.go (validateCertificateSigningRequest,
validateConditions, validateCertificateSigningRequestUpdate and its three entry points: the
object, /status, which alone may set status.certificate, and /approval, which alone may add
or change the Approved and Denied conditions) and pkg/apis/core/validation ValidateSignerName.
The compatibility allowances for bad data already stored (getValidationOptions) are kept
where kubelab can meet them: Approved and Denied together, duplicate or empty condition types,
unknown or duplicate usages, an old object's legacy signer.

What a signer accepts (the kubelet client signer's O=system:nodes, CN=system:node:<name> and
exact usages) is not validation upstream: the signer marks a request it refuses Failed
(kubelab/controllers/certificates/signer.py).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509

from kubelab.api import Object
from kubelab.api.certificates import APPROVED, DENIED, FAILED, LEGACY_UNKNOWN_SIGNER, VALID_USAGES, parse_csr
from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
    field_too_long,
)
from kubelab.api.validation import is_dns1123_label, is_dns1123_subdomain

__all__ = ["validate_certificate_signing_request", "validate_certificate_signing_request_update",
           "validate_signer_name"]

TRUE_ONLY = (APPROVED, DENIED, FAILED)  # trueConditionTypes
ALL_STATUS = ["False", "True", "Unknown"]
SIGNER_FORM = "must be a fully qualified domain and path of the form 'example.com/signer-name'"


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _conditions(csr: Object) -> list[Object]:
    return [c if isinstance(c, dict) else {} for c in _dict(csr.get("status")).get("conditions") or []]


def validate_signer_name(path: str, signer: Any) -> list[FieldError]:
    """ValidateSignerName: <domain>/<path>, the domain of DNS labels with at least one dot."""
    if not isinstance(signer, str) or not signer:
        return [field_required(path, "")]
    segments = signer.split("/")
    if len(segments) != 2:
        return [field_invalid(path, signer, SIGNER_FORM)]
    domain, name = segments
    errs = [field_too_long(path, 253)] if len(domain) > 253 else []
    labels = domain.split(".")
    for label in labels:
        msgs = is_dns1123_label(label)
        if msgs:
            errs += [field_invalid(path, domain, f'validating label "{label}": {m}') for m in msgs]
            break
    if len(labels) < 2:
        errs.append(field_invalid(path, domain,
                                  "should be a domain with at least two segments separated by dots"))
    for label in name.split("."):  # DNS subdomains separated by '.'
        msgs = is_dns1123_subdomain(label)
        if msgs:
            errs += [field_invalid(path, name, f'validating label "{label}": {m}') for m in msgs]
            break
    max_length = 253 + (253 + 63 + 1) + 1  # the domain, a label + a subdomain + '.', the '/'
    if len(signer) > max_length:
        errs.append(field_too_long(path, max_length))
    return errs


def _validate_certificate(data: Any) -> str:
    """validateCertificate: empty, or only CERTIFICATE PEM blocks that parse. The error, or ""."""
    if not data:
        return ""
    try:
        pem = base64.b64decode(str(data), validate=True)
    except (binascii.Error, ValueError):
        return "must contain at least one CERTIFICATE PEM block"
    blocks = [b for b in pem.split(b"-----BEGIN ")[1:]]
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    for block in blocks:
        kind = block.split(b"-----", 1)[0].decode(errors="replace")
        if kind != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{kind}"'
        try:
            x509.load_pem_x509_certificate(b"-----BEGIN " + block)
        except ValueError as err:
            return f"x509: malformed certificate: {err}"
    return ""


def _options(new: Object, old: Object | None) -> dict[str, bool]:
    """getValidationOptions: what an update tolerates because the old object already had it."""
    old_conditions = _conditions(old) if old is not None else []
    old_types = [c.get("type") for c in old_conditions]
    old_usages = list(_dict((old or {}).get("spec")).get("usages") or [])
    new_cert = _dict(new.get("status")).get("certificate")
    old_cert = _dict((old or {}).get("status")).get("certificate")
    return {
        "both": APPROVED in old_types and DENIED in old_types,
        "legacy": _dict((old or {}).get("spec")).get("signerName") == LEGACY_UNKNOWN_SIGNER,
        "duplicate_types": len(set(old_types)) < len(old_types),
        "empty_type": "" in old_types or None in old_types,
        "any_certificate": old is not None and (new_cert == old_cert
                                                or bool(_validate_certificate(old_cert))),
        "unknown_usages": any(u not in VALID_USAGES for u in old_usages),
        "duplicate_usages": len(set(map(str, old_usages))) < len(old_usages),
    }


def _validate(csr: Object, opts: dict[str, bool]) -> list[FieldError]:
    """validateCertificateSigningRequest (the metadata is checked by validate_meta)."""
    spec = _dict(csr.get("spec"))
    errs: list[FieldError] = []
    try:
        req = parse_csr(spec.get("request"))
        if not req.is_signature_valid:
            raise ValueError("x509: ECDSA verification failure")
    except ValueError as err:
        errs.append(field_invalid("spec.request", spec.get("request") or "", str(err)))
    usages = spec.get("usages") or []
    if not usages:
        errs.append(field_required("spec.usages", ""))
    seen: set[str] = set()
    for i, usage in enumerate(usages):
        if not opts["unknown_usages"] and usage not in VALID_USAGES:
            errs.append(field_not_supported(f"spec.usages[{i}]", usage, sorted(VALID_USAGES)))
        if not opts["duplicate_usages"] and usage in seen:
            errs.append(field_duplicate(f"spec.usages[{i}]", usage))
        seen.add(str(usage))
    signer = spec.get("signerName")
    if not opts["legacy"] and signer == LEGACY_UNKNOWN_SIGNER:
        errs.append(field_invalid("spec.signerName", signer,
                                  "the legacy signerName is not allowed via this API version"))
    else:
        errs += validate_signer_name("spec.signerName", signer)
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < 600:
        errs.append(field_invalid("spec.expirationSeconds", seconds,
                                  "may not specify a duration less than 600 seconds (10 minutes)"))
    errs += _validate_conditions(csr, opts)
    if not opts["any_certificate"]:
        msg = _validate_certificate(_dict(csr.get("status")).get("certificate"))
        if msg:
            errs.append(field_invalid("status.certificate", "<certificate data>", msg))
    return errs


def _validate_conditions(csr: Object, opts: dict[str, bool]) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[Any] = set()
    approved = denied = False
    for i, c in enumerate(_conditions(csr)):
        path = f"status.conditions[{i}]"
        kind, status = c.get("type"), c.get("status")
        if not opts["empty_type"] and not kind:
            errs.append(field_required(f"{path}.type", ""))
        allowed = ["True"] if kind in TRUE_ONLY else ALL_STATUS
        if not status:
            errs.append(field_required(f"{path}.status", ""))
        elif status not in allowed:
            errs.append(field_not_supported(f"{path}.status", status, allowed))
        if not opts["both"]:
            if kind == APPROVED:
                approved = True
            elif kind == DENIED:
                denied = True
            if approved and denied and kind in (APPROVED, DENIED):
                errs.append(field_invalid(f"{path}.type", kind,
                                          "Approved and Denied conditions are mutually exclusive"))
        if not opts["duplicate_types"]:
            if kind in seen:
                errs.append(field_duplicate(f"{path}.type", kind))
            seen.add(kind)
    return errs


def validate_certificate_signing_request(csr: Object) -> list[FieldError]:
    """ValidateCertificateSigningRequestCreate."""
    return _validate(csr, _options(csr, None))


def _find(csr: Object, kind: str) -> list[Object]:
    return [c for c in _conditions(csr) if c.get("type") == kind]


def validate_certificate_signing_request_update(csr: Object, old: Object,
                                                subresource: str = "") -> list[FieldError]:
    """validateCertificateSigningRequestUpdate, as the object (""), /status or /approval asks."""
    opts = _options(csr, old)
    errs = _validate(csr, opts)
    for kind in (APPROVED, DENIED, FAILED):
        if len(_find(csr, kind)) < len(_find(old, kind)):
            errs.append(field_forbidden("status.conditions",
                                        f'updates may not remove a condition of type "{kind}"'))
    if subresource != "approval":
        for kind in (APPROVED, DENIED):
            new_c, old_c = _find(csr, kind), _find(old, kind)
            if len(new_c) > len(old_c):
                errs.append(field_forbidden("status.conditions",
                                            f'updates may not add a condition of type "{kind}"'))
            elif len(new_c) == len(old_c) and new_c != old_c:
                errs.append(field_forbidden("status.conditions",
                                            f'updates may not modify a condition of type "{kind}"'))
    cert = _dict(csr.get("status")).get("certificate") or ""
    old_cert = _dict(old.get("status")).get("certificate") or ""
    if cert != old_cert:
        if subresource != "status":
            errs.append(field_forbidden("status.certificate", "updates may not set certificate content"))
        elif old_cert:
            errs.append(field_forbidden("status.certificate",
                                        "updates may not modify existing certificate content"))
    return errs
