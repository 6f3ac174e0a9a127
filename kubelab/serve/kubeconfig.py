"""The kubeconfig a served cluster hands its users (what `kind get kubeconfig` prints).

One cluster entry (the server's URL and the CA that signed its certificate), two users with
bearer tokens: kubernetes-admin (group system:masters, so cluster-admin) and viewer (bound to
the built-in `view` ClusterRole), and a context for each; `kubelab` is the current one.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import yaml

__all__ = ["DEFAULT_PATH", "build_kubeconfig", "write_kubeconfig"]

DEFAULT_PATH = Path("~/.kube/kubelab.yaml")


def build_kubeconfig(server: str, ca_pem: bytes, tokens: dict[str, str]) -> dict[str, Any]:
    """tokens: user name -> bearer token; the first user is the current context's."""
    ca = base64.b64encode(ca_pem).decode()
    users = list(tokens)
    contexts = [{"name": "kubelab" if i == 0 else f"kubelab-{user}",
                 "context": {"cluster": "kubelab", "user": user, "namespace": "default"}}
                for i, user in enumerate(users)]
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": "kubelab", "cluster": {"server": server,
                                                     "certificate-authority-data": ca}}],
        "users": [{"name": user, "user": {"token": token}} for user, token in tokens.items()],
        "contexts": contexts,
        "current-context": "kubelab",
    }


def write_kubeconfig(config: dict[str, Any], path: str | Path = DEFAULT_PATH) -> Path:
    """Write it readable by its owner only (it holds tokens), creating ~/.kube if needed."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    tmp.replace(target)
    return target
