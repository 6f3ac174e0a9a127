"""The cluster CA of an in-process cluster (kubeadm's phases/certs: ca.crt, "kubernetes").

kubeadm init makes the cluster CA first (CN `kubernetes`, ten years), and every component is
told of it: kube-controller-manager's --root-ca-file is its certificate, which the root-CA
publisher copies into each namespace's kube-root-ca.crt. `kubelab serve` has a real CA, made
when it starts (kubelab/serve/certs.py), and hands it to the cluster (Cluster.set_root_ca). A
cluster that is never served has no HTTPS, so nothing verifies against its CA; it still gets
a real, parseable CA certificate, made deterministically from the cluster's seed so that traces
and objects are the same on every run: an Ed25519 key derived from the seed (Ed25519 signs
deterministically), a fixed serial and validity from kubelab's epoch. Its key (ca.key) is the
controller manager's --cluster-signing-key-file: the CSR signer signs the kubelets' client
certificates with it (kubelab/controllers/certificates/signer.py). Departure: kubeadm's CA is
RSA 2048 with a random key.
"""

from __future__ import annotations

import datetime
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID

__all__ = ["cluster_ca", "cluster_ca_pem"]

_EPOCH = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)  # kubelab's epoch (api/meta.py)
CA_VALIDITY = datetime.timedelta(days=3650)  # kubeadm's CertificateValidityPeriod for CAs


def cluster_ca_pem(seed: int) -> bytes:
    """The CA certificate of the cluster with this seed, as PEM."""
    return cluster_ca(seed)[0]


def cluster_ca(seed: int) -> tuple[bytes, bytes]:
    """The CA certificate (ca.crt) and its key (ca.key) of the cluster with this seed, as PEM."""
    key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"kubelab-ca/{seed}".encode()).digest())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(seed + 1)
            .not_valid_before(_EPOCH).not_valid_after(_EPOCH + CA_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         content_commitment=False, key_encipherment=True,
                                         data_encipherment=False, key_agreement=False,
                                         crl_sign=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(key, None))
    return cert.public_bytes(serialization.Encoding.PEM), key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
