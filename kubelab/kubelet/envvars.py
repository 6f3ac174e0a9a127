"""A container's environment, as the kubelet builds it before CreateContainer.

Follows pkg/kubelet/kubelet_pods.go (makeEnvironmentVariables, podFieldSelectorRuntimeValue),
pkg/api/v1/resource/helpers.go (ExtractContainerResourceValue) and
third_party/forked/golang/expansion (the $(VAR) syntax):
- envFrom first, source by source (configMapRef / secretRef, each key with the prefix), then
  env, which overrides; env values expand `$(NAME)` from what is defined so far (`$$(NAME)`
  escapes it, an undefined name stays as written). command and args expand the same way.
- valueFrom: configMapKeyRef / secretKeyRef (Secret data is base64 in the API), fieldRef
  (metadata.name, namespace, uid, labels['k'], annotations['k'], spec.nodeName,
  spec.serviceAccountName, status.hostIP(s), status.podIP(s)) and resourceFieldRef
  (limits/requests of cpu, memory, ephemeral-storage, with divisor; cpu rounds up; no limit
  means the node's allocatable).
- a missing ConfigMap, Secret or key that is not optional is an error the kubelet reports as
  CreateContainerConfigError, in its words: `couldn't find key x in ConfigMap ns/y`,
  `configmap "y" not found`.
Where kubelab departs: the Services' environment variables (enableServiceLinks:
WEB_SERVICE_HOST, KUBERNETES_PORT, ...) are not added.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable
from decimal import Decimal

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.quantity import parse_quantity

__all__ = ["ConfigError", "expand", "make_environment_variables"]

Getter = Callable[[str, str, str], Object | None]   # (resource, namespace, name) -> object
IMAGE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class ConfigError(Exception):
    """The container cannot be configured: the kubelet's CreateContainerConfigError."""


def expand(text: str, env: dict[str, str]) -> str:
    """expansion.Expand: $(NAME) from env, $$ is a literal $, unknown references stay."""
    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return _REF.sub(sub, text)


def make_environment_variables(pod: Object, container: Object, get: Getter, *, host_ip: str,
                               pod_ip: str, allocatable: dict[str, str] | None = None
                               ) -> dict[str, str]:
    """The container's variables in order: the image's, envFrom's, env's (later wins)."""
    ns = (pod.get("metadata") or {}).get("namespace", "default")
    env: dict[str, str] = {**IMAGE_ENV, "HOSTNAME": _hostname(pod), "HOME": "/root"}
    for source in container.get("envFrom") or ():
        prefix = str(source.get("prefix") or "")
        for kind in ("configMapRef", "secretRef"):
            ref = source.get(kind)
            if ref is None:
                continue
            data = _data(get, kind, ns, str(ref.get("name") or ""), bool(ref.get("optional")))
            for key, value in (data or {}).items():
                env[prefix + key] = value
    defined: dict[str, str] = {}
    for var in container.get("env") or ():
        name = str(var.get("name") or "")
        if "valueFrom" in var:
            found = _value_from(pod, container, var["valueFrom"] or {}, get, host_ip=host_ip,
                                pod_ip=pod_ip, allocatable=allocatable or {})
            if found is None:
                continue  # an optional reference that is not there
            value = found
        else:
            value = expand(str(var.get("value") or ""), {**env, **defined})
        defined[name] = value
        env[name] = value
    return env


def _hostname(pod: Object) -> str:
    spec = pod.get("spec") or {}
    return str(spec.get("hostname") or (pod.get("metadata") or {}).get("name", ""))[:63]


def _data(get: Getter, kind: str, ns: str, name: str, optional: bool) -> dict[str, str] | None:
    resource = "configmaps" if kind.startswith("configMap") else "secrets"
    try:
        obj = get(resource, ns, name)
    except ApiError as err:
        if optional and err.code == 404:
            return None
        raise ConfigError(err.message) from None
    if obj is None:
        if optional:
            return None
        raise ConfigError(f'{resource[:-1]} "{name}" not found')
    if resource == "secrets":
        return {k: base64.b64decode(v).decode(errors="replace")
                for k, v in (obj.get("data") or {}).items()} | dict(obj.get("stringData") or {})
    binary = {k: base64.b64decode(v).decode(errors="replace")
              for k, v in (obj.get("binaryData") or {}).items()}
    return {**binary, **{k: str(v) for k, v in (obj.get("data") or {}).items()}}


def _value_from(pod: Object, container: Object, source: Object, get: Getter, *, host_ip: str,
                pod_ip: str, allocatable: dict[str, str]) -> str | None:
    ns = (pod.get("metadata") or {}).get("namespace", "default")
    for kind, what in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
        ref = source.get(kind)
        if ref is None:
            continue
        name, key, optional = str(ref.get("name") or ""), str(ref.get("key") or ""), \
            bool(ref.get("optional"))
        data = _data(get, kind, ns, name, optional)
        if data is None:
            return None
        if key not in data:
            if optional:
                return None
            raise ConfigError(f"couldn't find key {key} in {what} {ns}/{name}")
        return data[key]
    if "fieldRef" in source:
        return _field(pod, str((source["fieldRef"] or {}).get("fieldPath") or ""), host_ip, pod_ip)
    if "resourceFieldRef" in source:
        return _resource(pod, container, source["resourceFieldRef"] or {}, allocatable)
    return ""


def _field(pod: Object, path: str, host_ip: str, pod_ip: str) -> str:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    m = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    values = {
        "metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "default"),
        "metadata.uid": meta.get("uid", ""),
        "metadata.labels": "\n".join(f'{k}="{v}"' for k, v in sorted((meta.get("labels") or {}).items())),
        "metadata.annotations": "\n".join(f'{k}="{v}"' for k, v in
                                          sorted((meta.get("annotations") or {}).items())),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.hostIP": host_ip, "status.hostIPs": host_ip,
        "status.podIP": pod_ip, "status.podIPs": pod_ip,
    }
    if path not in values:
        raise ConfigError(f'unsupported fieldPath: "{path}"')
    return str(values[path])


def _resource(pod: Object, container: Object, ref: Object, allocatable: dict[str, str]) -> str:
    name = str(ref.get("containerName") or container.get("name") or "")
    target = next((c for c in (pod.get("spec") or {}).get("containers") or ()
                   if c.get("name") == name), container)
    resource = str(ref.get("resource") or "")
    kind, _, what = resource.partition(".")
    resources = (target.get("resources") or {}).get(kind) or {}
    raw = resources.get(what)
    if raw is None and kind == "requests":
        raw = ((target.get("resources") or {}).get("limits") or {}).get(what)
    if raw is None:
        raw = allocatable.get(what, "0")
    divisor = parse_quantity(str(ref.get("divisor") or "1")).as_decimal()
    value = parse_quantity(str(raw)).as_decimal()
    return str(math.ceil(value / divisor)) if divisor != Decimal(0) else "0"


def resolv_conf(namespace: str, cluster_dns: str = "10.96.0.10",
                cluster_domain: str = "cluster.local") -> str:
    """The resolv.conf of a dnsPolicy ClusterFirst pod (pkg/kubelet/network/dns)."""
    search = f"{namespace}.svc.{cluster_domain} svc.{cluster_domain} {cluster_domain}"
    return f"search {search}\nnameserver {cluster_dns}\noptions ndots:5\n"


def container_files(hostname: str, pod_ip: str, resolv_conf: str, os_release: str
                    ) -> dict[str, bytes]:
    """The files the kubelet and the image put in every container: /etc/hostname, /etc/hosts
    (the kubelet's managed hosts file), /etc/resolv.conf (ClusterFirst DNS) and the image's
    /etc/os-release."""
    hosts = ("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost "
             "ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\n"
             f"fe00::2\tip6-allrouters\n{pod_ip}\t{hostname}\n")
    return {"/etc/hostname": f"{hostname}\n".encode(), "/etc/hosts": hosts.encode(),
            "/etc/resolv.conf": resolv_conf.encode(), "/etc/os-release": os_release.encode()}
