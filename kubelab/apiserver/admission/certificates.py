"""The CertificateSigningRequest admission plugins (kubernetes plugin/pkg/admission/
certificates: approval/admission.go, signing/admission.go, subjectrestriction/admission.go and
util.go IsAuthorizedForSignerName), on by default upstream.

- CertificateApproval: an update through /approval needs the `approve` verb on the signer the
  old object names (`signers` in certificates.k8s.io, by name, or `<domain>/*`): `user not
  permitted to approve requests with signerName "..."`.
- CertificateSigning: an update through /status that changes the certificate or the
  conditions needs `sign` on the signer: `user not permitted to sign requests with signerName
  "..."`.
- CertificateSubjectRestriction: a new request for kubernetes.io/kube-apiserver-client may
  not ask for the group system:masters.

The bootstrap policy gives the controller manager approve on the kubelet client signer and
sign on the kubernetes.io signers (controller_policy.go, csrapproving and csrsigning);
system:masters passes, as it passes every authorization.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cryptography.x509.oid import NameOID

from kubelab.api.certificates import KUBE_APISERVER_CLIENT_SIGNER, parse_csr
from kubelab.apiserver.admission.chain import (
    CREATE,
    UPDATE,
    AdmissionPlugin,
    Attributes,
    admission_forbidden,
)
from kubelab.apiserver.auth.authn import MASTERS, UserInfo
from kubelab.apiserver.auth.rbac import AuthzAttributes

__all__ = ["CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction",
           "is_authorized_for_signer_name"]

GROUP, CSRS = "certificates.k8s.io", "certificatesigningrequests"
Authorize = Callable[[AuthzAttributes], bool]


def is_authorized_for_signer_name(authorize: Authorize, user: UserInfo, verb: str, signer: str) -> bool:
    """IsAuthorizedForSignerName: the verb on the signer by name, else on its domain's `/*`
    (the authorizer lets system:masters through)."""
    return any(authorize(AuthzAttributes(user, verb, GROUP, "signers", "", "", name))
               for name in (signer, signer.split("/")[0] + "/*"))


def _signer(obj: Any) -> str:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return str(spec.get("signerName") or "") if isinstance(spec, dict) else ""


def _is(attrs: Attributes, subresource: str, operation: str) -> bool:
    return (attrs.group, attrs.resource, attrs.subresource, attrs.operation) == \
        (GROUP, CSRS, subresource, operation)


def _refuse(attrs: Attributes, verb: str, signer: str) -> None:
    raise admission_forbidden(attrs, f'user not permitted to {verb} requests with signerName "{signer}"')


class _Plugin(AdmissionPlugin):
    def __init__(self, authorize: Authorize) -> None:
        self.authorize = authorize


class CertificateApproval(_Plugin):
    name = "CertificateApproval"

    def validate(self, attrs: Attributes) -> None:
        if not _is(attrs, "approval", UPDATE):
            return
        signer = _signer(attrs.old_object)  # the old object's: the body may not move it
        if not is_authorized_for_signer_name(self.authorize, attrs.user, "approve", signer):
            _refuse(attrs, "approve", signer)


class CertificateSigning(_Plugin):
    name = "CertificateSigning"

    def validate(self, attrs: Attributes) -> None:
        if not _is(attrs, "status", UPDATE):
            return
        old, new = (o.get("status") or {} if isinstance(o, dict) else {}
                    for o in (attrs.old_object, attrs.object))
        if (old.get("certificate"), old.get("conditions")) == (new.get("certificate"), new.get("conditions")):
            return
        signer = _signer(attrs.old_object)
        if not is_authorized_for_signer_name(self.authorize, attrs.user, "sign", signer):
            _refuse(attrs, "sign", signer)


class CertificateSubjectRestriction(AdmissionPlugin):
    name = "CertificateSubjectRestriction"

    def validate(self, attrs: Attributes) -> None:
        if not _is(attrs, "", CREATE):
            return
        if _signer(attrs.object) != KUBE_APISERVER_CLIENT_SIGNER:
            return
        try:
            req = parse_csr(((attrs.object or {}).get("spec") or {}).get("request"))
        except ValueError as err:
            raise admission_forbidden(attrs, f"failed to parse CSR: {err}") from None
        groups = req.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        if any(a.value == MASTERS for a in groups):
            raise admission_forbidden(attrs, f"use of {KUBE_APISERVER_CLIENT_SIGNER} signer with "
                                             "system:masters group is not allowed")
