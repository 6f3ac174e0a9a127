"""makeValidService and the tweaks the ported Service tables share
(tests/test_service_validation_upstream.py, tests/test_service_validation_update_upstream.py).

pkg/apis/core/validation/validation_test.go makeValidService; a tweak sets keys, or removes
them with None; labels and annotations are merged."""

from __future__ import annotations

import copy
from typing import Any

from kubelab.api.resources import BUILTIN_RESOURCES

SERVICES = next(r for r in BUILTIN_RESOURCES if r.resource == "services")


def make_valid_service() -> dict[str, Any]:
    return {"metadata": {"name": "valid", "namespace": "valid", "labels": {}, "annotations": {},
                         "resourceVersion": "1"},
            "spec": {"selector": {"key": "val"}, "sessionAffinity": "None", "type": "ClusterIP",
                     "ports": [{"name": "p", "protocol": "TCP", "port": 8675, "targetPort": 8675}],
                     "internalTrafficPolicy": "Cluster"}}


def port(name: str, number: int, protocol: str = "TCP", node_port: int = 0,
         target: Any = None) -> dict[str, Any]:
    p = {"name": name, "port": number, "protocol": protocol,
         "targetPort": number if target is None else target}
    if node_port:
        p["nodePort"] = node_port
    return p


LB = {"type": "LoadBalancer", "externalTrafficPolicy": "Cluster", "allocateLoadBalancerNodePorts": True}
NP = {"type": "NodePort", "externalTrafficPolicy": "Cluster"}
RANGES = "service.beta.kubernetes.io/load-balancer-source-ranges"
HEADLESS = {"clusterIP": "None", "clusterIPs": ["None"]}
P0 = port("p", 8675)


def ips(*values: str, policy: str | None = None, families: list[str] | None = None,
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterIP": values[0] if values else None,
                            "clusterIPs": list(values) or None}
    if policy:
        spec["ipFamilyPolicy"] = policy
    if families is not None:
        spec["ipFamilies"] = families
    return spec


RDS, SS, PDS = "RequireDualStack", "SingleStack", "PreferDualStack"


def tweaked(meta: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    svc = make_valid_service()
    for target, changes in ((svc["metadata"], meta), (svc["spec"], spec)):
        for key, value in copy.deepcopy(changes).items():
            if value is None:
                target.pop(key, None)
            elif isinstance(value, dict) and key in ("labels", "annotations"):
                target[key].update(value)
            else:
                target[key] = value
    return svc
