"""The protobuf field tables of networking/v1.

Its kinds: Ingress.

Transcribed from k8s.io/api networking/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "HTTPIngressPath": {1: ("path", "str", ""), 2: ("backend", "IngressBackend", ""),
                        3: ("pathType", "str", "ptr")},
    "HTTPIngressRuleValue": {1: ("paths", "HTTPIngressPath", "rep")},
    "Ingress": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "IngressSpec", ""),
                3: ("status", "IngressStatus", "")},
    "IngressBackend": {3: ("resource", "TypedLocalObjectReference", "ptr"),
                       4: ("service", "IngressServiceBackend", "ptr")},
    "IngressLoadBalancerIngress": {1: ("ip", "str", ""), 2: ("hostname", "str", ""),
                                   4: ("ports", "IngressPortStatus", "rep")},
    "IngressLoadBalancerStatus": {1: ("ingress", "IngressLoadBalancerIngress", "rep")},
    "IngressPortStatus": {1: ("port", "int", ""), 2: ("protocol", "str", ""), 3: ("error", "str", "ptr")},
    "IngressRule": {1: ("host", "str", ""), 2: ("", "IngressRuleValue", "inline")},
    "IngressRuleValue": {1: ("http", "HTTPIngressRuleValue", "ptr")},
    "IngressServiceBackend": {1: ("name", "str", ""), 2: ("port", "ServiceBackendPort", "")},
    "IngressSpec": {1: ("defaultBackend", "IngressBackend", "ptr"), 2: ("tls", "IngressTLS", "rep"),
                    3: ("rules", "IngressRule", "rep"), 4: ("ingressClassName", "str", "ptr")},
    "IngressStatus": {1: ("loadBalancer", "IngressLoadBalancerStatus", "")},
    "IngressTLS": {1: ("hosts", "str", "rep"), 2: ("secretName", "str", "")},
    "ServiceBackendPort": {1: ("name", "str", ""), 2: ("number", "int", "")},
}
