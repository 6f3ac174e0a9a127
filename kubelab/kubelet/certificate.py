"""The kubelet's client certificate: TLS bootstrap and the first rotation, as kubeadm's nodes
do it (kubernetes pkg/kubelet/certificate/bootstrap/bootstrap.go LoadClientCert and
requestNodeCertificate, pkg/kubelet/certificate/kubelet.go NewKubeletClientCertificateManager,
client-go util/certificate/certificate_manager.go and csr/csr.go RequestCertificate).

The certificate store is /var/lib/kubelet/pki/kubelet-client-current.pem on the node (here the
node's host_paths, which outlive a kubelet crash). With a certificate there, nothing happens.
Without one there are two ways, as kubeadm sets the kubelet up:

- a worker (and a control-plane node that joined) has only the bootstrap kubeconfig, which
  holds kubeadm's bootstrap token: the kubelet makes a key and a request for
  CN=system:node:<node>, O=system:nodes, named node-csr-<digest of key, subject and usages>
  (digestedName), sent with the token, so the requestor is system:bootstrap:<token id>;
- the node kubeadm init ran on has a kubelet.conf with a certificate kubeadm signed, but none
  in the store: the certificate manager rotates at once (forceRotation), asking with the
  node's own identity (system:node:<node>) for a request named by the server (generateName
  "csr-").

Both ask the signer kubernetes.io/kube-apiserver-client-kubelet for [digital signature, client
auth] (no key encipherment: the key is not RSA), then wait for the certificate
(WaitForCertificate) and store it with the key. Denied or Failed: the wait ends with upstream's
error, and the kubelet's next start asks again.

Departures: upstream's kubelet blocks at bootstrap until the certificate comes and then talks
to the API server with it; kubelab's kubelet starts at once with its token identity and waits
on the side, polling the request every second. The key is Ed25519, made from the kubelet's
seeded rand (ECDSA P-256 upstream), so the same seed makes the same requests.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kubelab.api import Object
from kubelab.api.certificates import (
    DENIED,
    FAILED,
    KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
    has_true_condition,
    make_csr,
)
from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.client.component import ComponentContext
from kubelab.sim.clock import Timer

__all__ = ["PKI_DIR", "ClientCertificate", "digested_name"]

PKI_DIR = "/var/lib/kubelet/pki"
CURRENT = "kubelet-client-current.pem"
USAGES = ("digital signature", "client auth")
POLL = 1.0


def _raw_url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def digested_name(public_key_der: bytes, common_name: str, organizations: tuple[str, ...],
                  usages: tuple[str, ...]) -> str:
    """digestedName: node-csr- and the SHA-512/256 of the key, subject and usages, each base64
    (raw URL alphabet) and '|'-delimited, so a kubelet restarted with the same key asks again
    under the same name."""
    digest = hashlib.new("sha512_256")
    for data in (public_key_der, common_name.encode(), *(o.encode() for o in organizations),
                 *(u.encode() for u in usages)):
        digest.update(_raw_url(data).encode() + b"|")
    return f"node-csr-{_raw_url(digest.digest())}"


class ClientCertificate:
    """One kubelet's client certificate. bootstrap_token: the bootstrap kubeconfig's token, or
    "" for the kubeadm init node (rotate with the node's own identity)."""

    def __init__(self, ctx: ComponentContext, node_name: str, host_paths: dict[str, dict[str, bytes]],
                 bootstrap_token: str) -> None:
        self.ctx, self.node_name, self.host_paths = ctx, node_name, host_paths
        self.client = Client(ctx.client.api, bootstrap_token, user_agent=f"{ctx.name}/bootstrap",
                             trace=ctx.trace) if bootstrap_token else ctx.client
        self.bootstrap = bool(bootstrap_token)
        self.name = ""        # the request's name once created
        self.error = ""       # why the wait ended without a certificate
        self._timer: Timer | None = None

    @property
    def certificate(self) -> bytes:
        return self.host_paths.get(PKI_DIR, {}).get(CURRENT, b"")

    def start(self) -> None:
        if self.certificate:
            return  # a current certificate in the store: nothing to ask
        seed = self.ctx.rand.getrandbits(256).to_bytes(32, "big")
        self.key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed).digest())
        common_name, organizations = f"system:node:{self.node_name}", ("system:nodes",)
        meta: Object = {"generateName": "csr-"}
        if self.bootstrap:
            der = self.key.public_key().public_bytes(serialization.Encoding.DER,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo)
            meta = {"name": digested_name(der, common_name, organizations, USAGES)}
        csr = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
               "metadata": meta,
               "spec": {"request": base64.b64encode(make_csr(self.key, common_name, organizations)).decode(),
                        "signerName": KUBE_APISERVER_CLIENT_KUBELET_SIGNER, "usages": list(USAGES)}}
        try:
            self.name = self.client.create(csr)["metadata"]["name"]
        except ApiError as err:
            if err.code != 409:  # RequestCertificate: AlreadyExists reuses the request
                self.error = err.message
                return
            self.name = meta["name"]
        self._timer = self.ctx.clock.call_later(POLL, self._wait, background=True)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _wait(self) -> None:
        """WaitForCertificate: issued, stored; denied or failed, an error; else look again."""
        self._timer = None
        try:
            csr = self.client.get("certificatesigningrequests", self.name, "")
        except ApiError:
            csr = None
        if csr is not None:
            if has_true_condition(csr, DENIED):
                self.error = "certificate request was denied"
                return
            if has_true_condition(csr, FAILED):
                self.error = "certificate request failed"
                return
            certificate = (csr.get("status") or {}).get("certificate")
            if certificate:
                key = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption())
                self.host_paths.setdefault(PKI_DIR, {})[CURRENT] = base64.b64decode(certificate) + key
                return
        self._timer = self.ctx.clock.call_later(POLL, self._wait, background=True)
