"""Read a kubeconfig into what a REST client needs: client-go's rest.Config, from clientcmd.

A kubeconfig names clusters (a server URL and how to trust it), users (a bearer token or a
client certificate) and contexts that pair one of each with a default namespace. Follows
k8s.io/client-go tools/clientcmd (loader.go, client_config.go): the current-context unless a
context is named; certificate-authority-data (base64 PEM) or certificate-authority (a file,
relative to the kubeconfig's folder); client-certificate(-data) and client-key(-data);
insecure-skip-tls-verify; an exec credential plugin (run once: a token that expires is not
renewed); the user's impersonation (`as`, `as-uid`, `as-groups`, `as-user-extra`: clientcmd's
AuthInfo.Impersonate*, which client_config.go copies into rest.Config.Impersonate, and which
kubectl's --as, --as-uid and --as-group override). Errors are clientcmd's own words.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from kubelab.api.request import Impersonation

__all__ = ["ConfigError", "RestConfig", "load_rest_config"]


class ConfigError(ValueError):
    """A kubeconfig that cannot be used, in clientcmd's words."""


@dataclass
class RestConfig:
    server: str                   # https://127.0.0.1:6443
    namespace: str = "default"    # the context's namespace
    token: str = ""
    ca_pem: bytes | None = None   # None: the system's trust store
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    insecure: bool = False
    context: str = ""
    # rest.Config.Impersonate (ImpersonationConfig: UserName, UID, Groups, Extra): who every
    # request acts as, sent as Impersonate-* headers (transport.py impersonation_headers).
    impersonate: Impersonation = field(default_factory=Impersonation)

    @property
    def host(self) -> str:
        """host:port, as kubectl names the server in its connection errors."""
        return self.server.split("://", 1)[-1].split("/", 1)[0]

    @property
    def address(self) -> tuple[str, int]:
        url = urlsplit(self.server)
        return url.hostname or "localhost", url.port or (443 if url.scheme == "https" else 80)

    @property
    def scheme(self) -> str:
        return urlsplit(self.server).scheme or "https"

    def ssl_context(self) -> ssl.SSLContext:
        """TLS as the kubeconfig says: its CA (or the system's), its client certificate."""
        context = ssl.create_default_context(cadata=self.ca_pem.decode() if self.ca_pem else None)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_pem and self.key_pem:
            _load_client_cert(context, self.cert_pem, self.key_pem)
        return context


def _load_client_cert(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    # The ssl module reads certificates from files only: a private folder, removed at once.
    with tempfile.TemporaryDirectory() as folder:
        cert_path, key_path = Path(folder, "client.crt"), Path(folder, "client.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        context.load_cert_chain(cert_path, key_path)


def _named(config: dict[str, Any], section: str, name: str) -> dict[str, Any] | None:
    for entry in config.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(section[:-1])  # clusters -> cluster, users -> user
            return value if isinstance(value, dict) else {}
    return None


def _data_or_file(entry: dict[str, Any], key: str, label: str, owner: str, base: Path) -> bytes | None:
    """`key-data` (base64) or `key` (a file, relative to the kubeconfig's folder)."""
    data = entry.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except ValueError as err:
            raise ConfigError(f"illegal base64 data in {key}-data: {err}") from None
    path = entry.get(key)
    if path:
        file = Path(os.path.expanduser(str(path)))
        file = file if file.is_absolute() else base / file
        try:
            return file.read_bytes()
        except OSError as err:  # clientcmd validation.go: validateClusterInfo, validateAuthInfo
            why = (err.strerror or str(err)).lower()
            raise ConfigError(f"invalid configuration: unable to read {label} {file} for {owner} "
                              f"due to open {file}: {why}") from None
    return None


def _exec_credential(spec: dict[str, Any], user: str) -> dict[str, Any]:
    """Run a credential plugin (users[].user.exec: EKS, GKE, AKS, OIDC helpers) once and read
    the ExecCredential it prints (client-go plugin/pkg/client/auth/exec/exec.go)."""
    command = [str(spec.get("command", "")), *(str(a) for a in spec.get("args") or [])]
    env = dict(os.environ, **{str(e["name"]): str(e["value"]) for e in spec.get("env") or []})
    api_version = str(spec.get("apiVersion") or "client.authentication.k8s.io/v1")
    env["KUBERNETES_EXEC_INFO"] = json.dumps({"apiVersion": api_version, "kind": "ExecCredential",
                                              "spec": {"interactive": False}})
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ConfigError(f"getting credentials: exec: {err}") from None
    if done.returncode != 0:
        raise ConfigError(f"getting credentials: exec: executable {command[0]} failed with exit "
                          f"code {done.returncode}")
    try:
        status = json.loads(done.stdout).get("status") or {}
    except (ValueError, AttributeError):
        raise ConfigError(f"getting credentials: decoding stdout: the plugin of user {user} "
                          "did not print an ExecCredential") from None
    return dict(status)


def _impersonation(user: dict[str, Any]) -> Impersonation:
    """AuthInfo's as, as-uid, as-groups and as-user-extra (clientcmd/api/v1/types.go)."""
    extra = user.get("as-user-extra") or {}
    groups = user.get("as-groups") or []
    if not isinstance(extra, dict) or not isinstance(groups, list):
        raise ConfigError("invalid configuration: as-groups must be a list and as-user-extra a "
                          "map of lists")
    return Impersonation(
        str(user.get("as") or ""), tuple(str(g) for g in groups), str(user.get("as-uid") or ""),
        tuple((str(k), tuple(str(v) for v in (vs if isinstance(vs, list) else [vs])))
              for k, vs in extra.items()))


def load_rest_config(path: str | Path, context: str = "",
                     impersonate: Impersonation | None = None) -> RestConfig:
    """The RestConfig of `context` (default: the current-context) in the kubeconfig at path;
    impersonate, when given, replaces the user's own (kubectl --as and friends)."""
    file = Path(path).expanduser()
    try:
        config = yaml.safe_load(file.read_text()) or {}
    except OSError as err:
        raise ConfigError(f"stat {file}: {err.strerror.lower() if err.strerror else err}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"error loading config file \"{file}\": {err}") from None
    if not isinstance(config, dict):
        raise ConfigError(f'error loading config file "{file}": not a kubeconfig')
    name = context or str(config.get("current-context") or "")
    if not name:
        raise ConfigError("invalid configuration: no configuration has been provided, "
                          "try setting KUBERNETES_MASTER environment variable")
    ctx = _named(config, "contexts", name)
    if ctx is None:
        raise ConfigError(f'context "{name}" does not exist')
    cluster = _named(config, "clusters", str(ctx.get("cluster", "")))
    if cluster is None or not cluster.get("server"):
        raise ConfigError("invalid configuration: no server found for cluster "
                          f'"{ctx.get("cluster", "")}"')
    user_name, cluster_name = str(ctx.get("user", "")), str(ctx.get("cluster", ""))
    user = _named(config, "users", user_name) or {}
    base = file.parent
    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        token = (_data_or_file({"token": user["tokenFile"]}, "token", "tokenfile", user_name, base)
                 or b"").decode().strip()
    cert = _data_or_file(user, "client-certificate", "client-cert", user_name, base)
    key = _data_or_file(user, "client-key", "client-key", user_name, base)
    if isinstance(user.get("exec"), dict):
        status = _exec_credential(user["exec"], user_name)
        token = str(status.get("token") or token)
        cert = str(status["clientCertificateData"]).encode() if status.get("clientCertificateData") else cert
        key = str(status["clientKeyData"]).encode() if status.get("clientKeyData") else key
    wanted = impersonate if impersonate is not None else _impersonation(user)
    if not wanted.user and wanted:  # validation.go validateAuthInfo
        raise ConfigError(f"requesting uid, groups or user-extra for {user_name} without "
                          "impersonating a user")
    return RestConfig(
        server=str(cluster["server"]).rstrip("/"), namespace=str(ctx.get("namespace") or "default"),
        token=token, ca_pem=_data_or_file(cluster, "certificate-authority", "certificate-authority",
                                          cluster_name, base),
        cert_pem=cert, key_pem=key,
        insecure=bool(cluster.get("insecure-skip-tls-verify")), context=name,
        impersonate=wanted)
