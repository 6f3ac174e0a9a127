"""A certificate authority and a serving certificate, made fresh each time a server starts.

kubeadm does the same at `kubeadm init` (a cluster CA, then an apiserver certificate for the
addresses clients use: cmd/kubeadm/app/phases/certs). Here the CA lives only as long as the
server: its certificate goes into the kubeconfig (certificate-authority-data), so kubectl and
the Python client verify the server as they would a real one. Made with `cryptography`.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["ServingCerts", "make_serving_certs"]


@dataclass
class ServingCerts:
    ca_pem: bytes        # what clients trust
    cert_pem: bytes      # the server's certificate, signed by the CA
    key_pem: bytes       # the server's private key
    ca_key_pem: bytes = b""  # the CA's private key: the cluster's CSR signer signs with it

    def ssl_context(self) -> ssl.SSLContext:
        """A server-side TLS context; the key touches the disk only in a private temp folder."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory(prefix="kubelab-tls-") as tmp:
            cert, key = Path(tmp, "apiserver.crt"), Path(tmp, "apiserver.key")
            cert.write_bytes(self.cert_pem)
            key.touch(mode=0o600)
            key.write_bytes(self.key_pem)
            ctx.load_cert_chain(cert, key)
        return ctx


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_serving_certs(hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1"),
                       days: int = 365) -> ServingCerts:
    now = datetime.datetime.now(datetime.UTC)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("kubelab-ca")).issuer_name(_name("kubelab-ca"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(valid[0]).not_valid_after(valid[1])
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (x509.CertificateBuilder().subject_name(_name("kube-apiserver")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(valid[0]).not_valid_after(valid[1])
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    pkcs8, none = serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    return ServingCerts(ca.public_bytes(pem), cert.public_bytes(pem), key.private_bytes(pem, pkcs8, none),
                        ca_key.private_bytes(pem, pkcs8, none))
