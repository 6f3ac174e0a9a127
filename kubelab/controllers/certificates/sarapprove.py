"""The CSR approver: kube-controller-manager's csrapproving controller (kubernetes
pkg/controller/certificates/approver/sarapprove.go).

It approves the kubelets' client certificates, and nothing else. A request is recognized as
a node client certificate (isNodeClientCert) when its signer is
kubernetes.io/kube-apiserver-client-kubelet and the request is a kubelet's
(ValidateKubeletClientCSR: O=system:nodes, CN=system:node:<name>, no SANs, the client usages),
and as a self node client certificate (isSelfNodeClientCert) when, besides, its requestor is
the node it names: a kubelet renewing its own certificate. For each recognizer that matches,
self first, the approver asks a SubjectAccessReview for the requestor (spec.username, uid,
groups, extra) whether it may `create` certificatesigningrequests/selfnodeclient (or
/nodeclient); kubeadm binds /nodeclient to its bootstrap tokens' group and /selfnodeclient to
system:nodes. Allowed: the Approved condition, reason AutoApproved, upstream's message,
written through /approval. Recognized but not allowed: an (ignorable) error, so the request is
looked at again later; a learner approves it by hand (`kubectl certificate approve`).

A request already approved, denied or issued is left alone.
"""

from __future__ import annotations

from cryptography.x509.oid import NameOID

from kubelab.api import Object
from kubelab.api.certificates import (
    APPROVED,
    DENIED,
    KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
    has_true_condition,
    parse_csr,
    validate_kubelet_client_csr,
)
from kubelab.client.component import ComponentContext
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.controllers.certificates.certificate_controller import CertificateController

__all__ = ["RECOGNIZERS", "SARApprover", "is_node_client_cert", "is_self_node_client_cert"]


def is_node_client_cert(csr: Object) -> bool:
    spec = csr.get("spec") or {}
    if spec.get("signerName") != KUBE_APISERVER_CLIENT_KUBELET_SIGNER:
        return False
    return not validate_kubelet_client_csr(parse_csr(spec.get("request")), set(spec.get("usages") or []))


def is_self_node_client_cert(csr: Object) -> bool:
    req = parse_csr((csr.get("spec") or {}).get("request"))
    names = req.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if (csr.get("spec") or {}).get("username") != (str(names[0].value) if names else ""):
        return False
    return is_node_client_cert(csr)


# recognizers(): (recognize, the subresource it asks to create, the approval's message)
RECOGNIZERS = (
    (is_self_node_client_cert, "selfnodeclient",
     "Auto approving self kubelet client certificate after SubjectAccessReview."),
    (is_node_client_cert, "nodeclient",
     "Auto approving kubelet client certificate after SubjectAccessReview."),
)


class NotApprovedError(Exception):
    """certificates.IgnorableError: recognized, but the review said no (retried, not logged)."""


class SARApprover:
    NAME = "certificatesigningrequest-approving-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.client = ctx.client
        self.certificate_controller = CertificateController(ctx, "csrapproving", informers, self.handle)

    def run(self) -> None:
        self.certificate_controller.run()

    def stop(self) -> None:
        self.certificate_controller.stop()

    def handle(self, csr: Object) -> None:
        if (csr.get("status") or {}).get("certificate"):
            return
        if has_true_condition(csr, APPROVED) or has_true_condition(csr, DENIED):
            return
        parse_csr((csr.get("spec") or {}).get("request"))  # unable to parse csr: an error
        tried = []
        for recognize, subresource, message in RECOGNIZERS:
            if not recognize(csr):
                continue
            tried.append(subresource)
            if self.authorize(csr, subresource):
                status = csr.setdefault("status", {})
                status["conditions"] = [*(status.get("conditions") or []), {
                    "type": APPROVED, "status": "True", "reason": "AutoApproved",
                    "message": message}]
                self.client.update(csr, subresource="approval")
                return
        if tried:
            raise NotApprovedError(f"recognized csr {csr['metadata']['name']!r} as {tried} but "
                                   "subject access review was not approved")

    def authorize(self, csr: Object, subresource: str) -> bool:
        """A SubjectAccessReview for the requestor: may it create this CSR subresource?"""
        spec = csr.get("spec") or {}
        review_spec: Object = {
            "user": spec.get("username", ""), "groups": list(spec.get("groups") or []),
            "resourceAttributes": {"group": "certificates.k8s.io", "resource": "certificatesigningrequests",
                                   "verb": "create", "subresource": subresource, "version": "*"}}
        if spec.get("uid"):
            review_spec["uid"] = spec["uid"]
        if spec.get("extra"):
            review_spec["extra"] = spec["extra"]
        review = self.client.create({"apiVersion": "authorization.k8s.io/v1",
                                     "kind": "SubjectAccessReview", "spec": review_spec})
        return bool((review.get("status") or {}).get("allowed"))
