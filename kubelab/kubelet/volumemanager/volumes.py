"""What each volume plugin's SetUp puts in a volume, as files: pkg/volume/configmap,
secret, downwardapi, projected (with pkg/volume/util/atomic_writer.go's payload: key -> file,
items with their paths), emptydir, and the serviceAccountToken projection (projected.go
collectData: a TokenRequest bound to the pod, through the kubelet's token manager,
kubelab/kubelet/token). A volume here is a mapping of relative path -> bytes.

Raise MountError with the plugin's own words; the caller prefixes
`MountVolume.SetUp failed for volume "<name>" : `.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.quantity import parse_quantity
from kubelab.kubelet.token import TokenError

__all__ = ["Getter", "MountError", "TokenGetter", "configmap_payload", "downward_api_payload",
           "projected_payload", "secret_payload", "service_account_token"]

# Reads one object: (resource, namespace, name) -> the object, or None when it does not exist.
Getter = Callable[[str, str, str], Object | None]


class MountError(Exception):
    """A SetUp that failed; its message is the plugin's."""


def _items(data: dict[str, bytes], items: Any, optional: bool, what: str) -> dict[str, bytes]:
    """The atomic writer's payload: every key as a file, or just the items, at their paths."""
    if not items:
        return dict(data)
    out: dict[str, bytes] = {}
    for item in items:
        key, path = item.get("key", ""), item.get("path") or item.get("key", "")
        if key not in data:
            if optional:
                continue
            raise MountError(f"configmap references non-existent config key: {key}"
                             if what == "configmap" else f"references non-existent secret key: {key}")
        out[path] = data[key]
    return out


def configmap_payload(source: Object, namespace: str, get: Getter) -> dict[str, bytes]:
    name, optional = str(source.get("name") or ""), bool(source.get("optional"))
    cm = get("configmaps", namespace, name)
    if cm is None:
        if optional:
            return {}
        raise MountError(f'configmap "{name}" not found')
    data = {k: str(v).encode() for k, v in (cm.get("data") or {}).items()}
    data.update({k: base64.b64decode(v) for k, v in (cm.get("binaryData") or {}).items()})
    return _items(data, source.get("items"), optional, "configmap")


def secret_payload(source: Object, namespace: str, get: Getter, name_key: str = "secretName"
                   ) -> dict[str, bytes]:
    name, optional = str(source.get(name_key) or ""), bool(source.get("optional"))
    secret = get("secrets", namespace, name)
    if secret is None:
        if optional:
            return {}
        raise MountError(f'secret "{name}" not found')
    data = {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}
    data.update({k: str(v).encode() for k, v in (secret.get("stringData") or {}).items()})
    return _items(data, source.get("items"), optional, "secret")


def _format_map(values: dict[str, str]) -> str:
    """fieldpath.FormatMap: key="value" lines, sorted, %q-quoted."""
    return "\n".join(f"{k}={json.dumps(v)}" for k, v in sorted(values.items()))


def _field(pod: Object, path: str) -> str:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    if path == "metadata.labels":
        return _format_map(meta.get("labels") or {})
    if path == "metadata.annotations":
        return _format_map(meta.get("annotations") or {})
    for prefix, values in (("metadata.labels['", meta.get("labels") or {}),
                           ("metadata.annotations['", meta.get("annotations") or {})):
        if path.startswith(prefix) and path.endswith("']"):
            return str(values.get(path[len(prefix):-2], ""))
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName")}
    if path not in simple:
        raise MountError(f"unsupported fieldPath: {path}")
    return str(simple[path] or "")


def _resource_field(pod: Object, ref: Object) -> str:
    """resourceFieldRef: a container's request or limit, in the divisor's units (default 1)."""
    container = next((c for c in (pod.get("spec") or {}).get("containers") or []
                      if c.get("name") == ref.get("containerName")), None)
    resource = str(ref.get("resource") or "")
    kind, _, name = resource.partition(".")
    value = (((container or {}).get("resources") or {}).get(kind) or {}).get(name)
    if value is None:
        return "0"
    divisor = parse_quantity(ref.get("divisor") or "1")
    amount = parse_quantity(value).as_decimal() / divisor.as_decimal()
    return str(int(-(-amount // 1)))  # rounded up, as ExtractContainerResourceValue does


def downward_api_payload(source: Object, pod: Object) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for item in source.get("items") or []:
        if item.get("fieldRef"):
            out[str(item.get("path"))] = _field(pod, str(item["fieldRef"].get("fieldPath"))).encode()
        elif item.get("resourceFieldRef"):
            out[str(item.get("path"))] = _resource_field(pod, item["resourceFieldRef"]).encode()
    return out


# The token manager's GetServiceAccountToken: (namespace, service account, TokenRequest) -> the
# TokenRequest answered, with status.token (kubelab/kubelet/token). Raises TokenError.
TokenGetter = Callable[[str, str, Object], Object]
DEFAULT_TOKEN_SECONDS = 3600  # SetDefaults_ServiceAccountTokenProjection


def service_account_token(source: Object, pod: Object, get_token: TokenGetter) -> bytes:
    """collectData's serviceAccountToken: a TokenRequest for the pod's service account with the
    projection's audience (none: the API server's) and lifetime, bound to the pod by name and
    uid; the token the API server signed is the file."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    audience = str(source.get("audience") or "")
    tr: Object = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {
        "audiences": [audience] if audience else [],
        "expirationSeconds": int(source.get("expirationSeconds") or DEFAULT_TOKEN_SECONDS),
        "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta.get("name", ""),
                           "uid": meta.get("uid", "")}}}
    # (a pod the ServiceAccount admission plugin did not see runs as "default", as it would)
    account = str(spec.get("serviceAccountName") or "default")
    try:
        answered = get_token(str(meta.get("namespace") or "default"), account, tr)
    except TokenError as err:
        raise MountError(str(err)) from err
    return str((answered.get("status") or {}).get("token") or "").encode()


def projected_payload(source: Object, pod: Object, get: Getter, get_token: TokenGetter
                      ) -> dict[str, bytes]:
    """projected: each source's payload, merged into one directory."""
    namespace = (pod.get("metadata") or {}).get("namespace", "default")
    out: dict[str, bytes] = {}
    for projection in source.get("sources") or []:
        if projection.get("configMap") is not None:
            out.update(configmap_payload(projection["configMap"], namespace, get))
        elif projection.get("secret") is not None:
            out.update(secret_payload(projection["secret"], namespace, get, name_key="name"))
        elif projection.get("downwardAPI") is not None:
            out.update(downward_api_payload(projection["downwardAPI"], pod))
        elif projection.get("serviceAccountToken") is not None:
            token = projection["serviceAccountToken"]
            out[str(token.get("path") or "token")] = service_account_token(token, pod, get_token)
    return out
