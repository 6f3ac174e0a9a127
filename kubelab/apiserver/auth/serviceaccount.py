"""Service account tokens: the JWTs the API server signs for TokenRequest and accepts as
bearer tokens (kubernetes pkg/serviceaccount/jwt.go, claims.go; k8s.io/apiserver
pkg/authentication/serviceaccount/util.go for the user names).

A token is header.claims.signature, each part base64url without padding. The claims are
claims.go's: iss (the --service-account-issuer, kubeadm's https://kubernetes.default.svc.cluster.local),
sub system:serviceaccount:<namespace>:<name>, aud, exp, iat, nbf, jti, and the private claims
under kubernetes.io: namespace, serviceaccount {name, uid}, and the pod, secret or node the
token is bound to. Validation (jwt.go Validator, claims.go Validate) checks the signature,
the issuer, the audience, nbf and exp against the cluster's clock, and that the service
account (and the pod, secret or node the token is bound to) still exists with the uid in the
claims and was not deleted more than a minute ago (jwt.DefaultLeeway: a pod's
deletionTimestamp is the end of its grace period, so a terminating pod's token works until a
minute after it, or until the pod is gone); a token that fails any check is 401 Unauthorized,
as upstream, which says why only in its log.
The user is system:serviceaccount:<ns>:<name>, uid the account's, groups
system:serviceaccounts, system:serviceaccounts:<ns> and system:authenticated, with the extra
authentication.kubernetes.io/credential-id JTI=<jti> (and pod-name, pod-uid, node-name).

The signing key (--service-account-signing-key-file): `kubelab serve` generates an RSA key when
it starts and signs RS256 (RSAKey, with the kid of keyIDFromPublicKey: base64url of the
SHA-256 of the public key's DER). A cluster that is never served signs HS256 with a fixed key
(HMACKey): a departure, so that tokens, and traces that carry them, are the same on every run
and the simulation makes no key at start; nothing outside the process ever sees them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubelab.api import Object
from kubelab.api.meta import epoch, parse_time
from kubelab.apiserver.auth.authn import ALL_AUTHENTICATED, UserInfo

__all__ = ["DEFAULT_AUDIENCE", "ISSUER", "HMACKey", "RSAKey", "SigningKey", "TokenValidator",
           "claims", "make_username"]

ISSUER = "https://kubernetes.default.svc.cluster.local"  # kubeadm's --service-account-issuer
DEFAULT_AUDIENCE = ISSUER  # --api-audiences defaults to the issuer
SERVICE_ACCOUNT_USERNAME_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"


def make_username(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}:{name}"


def make_group_names(namespace: str) -> tuple[str, ...]:
    return (ALL_SERVICE_ACCOUNTS_GROUP, f"{ALL_SERVICE_ACCOUNTS_GROUP}:{namespace}")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SigningKey(Protocol):
    alg: str
    kid: str

    def sign(self, data: bytes) -> bytes: ...

    def verify(self, data: bytes, signature: bytes) -> bool: ...


@dataclass
class HMACKey:
    """HS256 with a fixed secret: the in-process cluster's key (see the docstring)."""

    secret: bytes = b"kubelab-service-account-key"
    alg: str = "HS256"
    kid: str = "kubelab"

    def sign(self, data: bytes) -> bytes:
        return hmac.new(self.secret, data, hashlib.sha256).digest()

    def verify(self, data: bytes, signature: bytes) -> bool:
        return hmac.compare_digest(self.sign(data), signature)


class RSAKey:
    """RS256 with an RSA private key (`cryptography`), as kube-apiserver signs."""

    alg = "RS256"

    def __init__(self, private_key: Any = None) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        self._key = private_key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
        der = self._key.public_key().public_bytes(serialization.Encoding.DER,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo)
        self.kid = _b64(hashlib.sha256(der).digest())  # keyIDFromPublicKey

    def sign(self, data: bytes) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        return bytes(self._key.sign(data, padding.PKCS1v15(), hashes.SHA256()))

    def verify(self, data: bytes, signature: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        try:
            self._key.public_key().verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            return False
        return True


def claims(sa: Object, audiences: list[str], now: int, expiration_seconds: int, jti: str,
           bound: Object | None = None, node: Object | None = None,
           warn_after: int = 0) -> dict[str, Any]:
    """claims.go Claims: the public and private claims of one token (warnafter: the seconds
    after which an extended pod token counts as stale)."""
    meta = sa["metadata"]
    private: dict[str, Any] = {"namespace": meta["namespace"],
                               "serviceaccount": {"name": meta["name"], "uid": meta.get("uid", "")}}
    if bound is not None:
        kind = bound.get("kind", "")
        ref = {"name": bound["metadata"]["name"], "uid": bound["metadata"].get("uid", "")}
        private[{"Pod": "pod", "Secret": "secret", "Node": "node"}.get(kind, kind.lower())] = ref
    if node is not None:
        private["node"] = {"name": node["metadata"]["name"], "uid": node["metadata"].get("uid", "")}
    if warn_after:
        private["warnafter"] = now + warn_after
    return {"aud": list(audiences), "exp": now + expiration_seconds, "iat": now, "iss": ISSUER,
            "jti": jti, "kubernetes.io": private, "nbf": now,
            "sub": make_username(meta["namespace"], meta["name"])}


def generate_token(key: SigningKey, token_claims: dict[str, Any]) -> str:
    """jwtTokenGenerator.GenerateToken: the compact serialization, signed with the key."""
    header = _b64(json.dumps({"alg": key.alg, "kid": key.kid}, separators=(",", ":")).encode())
    body = _b64(json.dumps(token_claims, separators=(",", ":")).encode())
    signature = key.sign(f"{header}.{body}".encode())
    return f"{header}.{body}.{_b64(signature)}"


LEEWAY = 60  # jwt.DefaultLeeway: what was deleted more than a minute ago is gone


def _deleted_before(obj: Object, before: int) -> bool:
    """Its deletionTimestamp (for a pod: when its grace period ends) is before `before`."""
    when = obj["metadata"].get("deletionTimestamp")
    return bool(when) and epoch().timestamp() + parse_time(str(when)) < before


# Reads one object: (resource, namespace, name) -> the object, or None.
Getter = Callable[[str, str, str], Object | None]


class TokenValidator:
    """jwt.go Validator with claims.go's checks: a JWT becomes the service account's user, or
    None when it is not a valid service account token."""

    def __init__(self, key: Callable[[], SigningKey], get: Getter, now: Callable[[], int],
                 audiences: tuple[str, ...] = (DEFAULT_AUDIENCE,)) -> None:
        self.key, self.get, self.now, self.audiences = key, get, now, audiences

    def authenticate(self, token: str) -> UserInfo | None:
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header = json.loads(_unb64(parts[0]))
            body = json.loads(_unb64(parts[1]))
            signature = _unb64(parts[2])
        except (ValueError, UnicodeDecodeError):
            return None
        key = self.key()
        if not isinstance(header, dict) or header.get("alg") != key.alg or not isinstance(body, dict):
            return None
        if not key.verify(f"{parts[0]}.{parts[1]}".encode(), signature):
            return None
        return self.validate(body)

    def validate(self, c: dict[str, Any]) -> UserInfo | None:
        if c.get("iss") != ISSUER or not set(c.get("aud") or []) & set(self.audiences):
            return None
        now = self.now()
        if not isinstance(c.get("exp"), int) or now >= c["exp"] or now < int(c.get("nbf") or 0):
            return None  # "service account token has expired" / "is not yet valid"
        private = c.get("kubernetes.io") or {}
        namespace = str(private.get("namespace") or "")
        account = private.get("serviceaccount") or {}
        invalid_if_deleted_before = now - LEEWAY
        sa = self.get("serviceaccounts", namespace, str(account.get("name") or ""))
        if sa is None or sa["metadata"].get("uid") != account.get("uid") or \
                _deleted_before(sa, invalid_if_deleted_before):
            return None  # the service account was deleted or recreated
        extra: list[tuple[str, tuple[str, ...]]] = []
        for kind, resource, ns in (("pod", "pods", namespace), ("secret", "secrets", namespace),
                                   ("node", "nodes", "")):
            ref = private.get(kind)
            if not ref:
                continue
            bound = self.get(resource, ns, str(ref.get("name") or ""))
            info_only = kind == "node" and "pod" in private  # a node claim beside a pod
            if not info_only and (bound is None or bound["metadata"].get("uid") != ref.get("uid")
                                  or _deleted_before(bound, invalid_if_deleted_before)):
                return None  # "service account token has been invalidated"
            if kind in ("pod", "node"):
                extra += [(f"authentication.kubernetes.io/{kind}-name", (str(ref.get("name")),)),
                          (f"authentication.kubernetes.io/{kind}-uid", (str(ref.get("uid")),))]
        if c.get("jti"):
            extra.append((CREDENTIAL_ID_KEY, (f"JTI={c['jti']}",)))
        return UserInfo(make_username(namespace, sa["metadata"]["name"]),
                        (*make_group_names(namespace), ALL_AUTHENTICATED),
                        uid=str(sa["metadata"].get("uid") or ""), extra=tuple(sorted(extra)))
