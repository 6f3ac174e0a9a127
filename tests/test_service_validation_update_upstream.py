# ruff: noqa: E501  (upstream's table rows, one case a line, as in validation_test.go)
"""Upstream's TestValidateServiceUpdate, ported as data (pkg/apis/core/validation/validation_test.go).

Each case: a name, the tweak of the old Service's spec, the tweaks of the new one's metadata
and spec (keys set, or removed with None; both start as makeValidService), and upstream's
error count for ValidateServiceUpdate(new, old). As upstream, the registry strategy does not
run here: "not removing these fields is a validation error" (test_service_strategy.py has
what the strategy drops)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.apiserver.apis.validation import validate_update
from tests.service_validation_helpers import HEADLESS, LB, NP, PDS, RDS, SERVICES, SS, ips, port, tweaked

OLD_LB = {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": True}
EXT = {"type": "ExternalName"}
V4, V6, V46, V64 = ["IPv4"], ["IPv6"], ["IPv4", "IPv6"], ["IPv6", "IPv4"]
CLS = "test.com/test-load-balancer-class"
A = port("a", 443, target=3000)

# (name, old spec changes, new metadata changes, new spec changes, upstream numErrs)
UPDATE: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], int]] = [
    ("no change", {}, {}, {}, 0),
    ("change name", {}, {"name": "valid2"}, {}, 1),
    ("change namespace", {}, {"namespace": "valid2"}, {}, 1),
    ("change label valid", {}, {"labels": {"key": "other-value"}}, {}, 0),
    ("add label", {}, {"labels": {"key2": "value2"}}, {}, 0),
    ("change cluster IP", ips("1.2.3.4"), {}, ips("8.6.7.5"), 1),
    ("remove cluster IP", ips("1.2.3.4"), {}, ips(), 1),
    ("change affinity", {}, {}, {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90}}}, 0),
    ("remove affinity", {}, {}, {"sessionAffinity": ""}, 1),
    ("change type", {}, {}, LB, 0),
    ("remove type", {}, {}, {"type": ""}, 1),
    ("change type -> nodeport", {}, {}, NP, 0),
    ("add loadBalancerSourceRanges", OLD_LB, {}, {**LB, "loadBalancerSourceRanges": ["10.0.0.0/8"]}, 0),
    ("update loadBalancerSourceRanges", {**OLD_LB, "loadBalancerSourceRanges": ["10.0.0.0/8"]}, {},
     {**LB, "loadBalancerSourceRanges": ["10.100.0.0/16"]}, 0),
    ("LoadBalancer type cannot have None ClusterIP", {}, {}, {**HEADLESS, **LB}, 1),
    ("`None` ClusterIP can NOT be changed", HEADLESS, {}, ips("1.2.3.4"), 1),
    ("`None` ClusterIP can NOT be removed", HEADLESS, {}, ips(), 1),
    ("ClusterIP can NOT be changed to None", ips("1.2.3.4"), {}, HEADLESS, 1),
    ("Service with ClusterIP type cannot change its set ClusterIP", ips("1.2.3.4"), {}, ips("1.2.3.5"), 1),
    ("Service with ClusterIP type can change its empty ClusterIP", ips(), {}, ips("1.2.3.5"), 0),
    ("Service with ClusterIP type cannot change its set ClusterIP when changing type to NodePort", ips("1.2.3.4"), {}, {**NP, **ips("1.2.3.5")}, 1),
    ("Service with ClusterIP type can change its empty ClusterIP when changing type to NodePort", ips(), {}, {**NP, **ips("1.2.3.5")}, 0),
    ("Service with ClusterIP type cannot change its ClusterIP when changing type to LoadBalancer", ips("1.2.3.4"), {}, {**LB, **ips("1.2.3.5")}, 1),
    ("Service with ClusterIP type can change its empty ClusterIP when changing type to LoadBalancer", ips(), {}, {**LB, **ips("1.2.3.5")}, 0),
    ("Service with LoadBalancer type can change its AllocateLoadBalancerNodePorts from true to false", OLD_LB, {}, {**LB, "allocateLoadBalancerNodePorts": False}, 0),
    ("Service with LoadBalancer type can change its AllocateLoadBalancerNodePorts from false to true", {**OLD_LB, "allocateLoadBalancerNodePorts": False}, {}, LB, 0),
    ("Service with NodePort type cannot change its set ClusterIP", {"type": "NodePort", **ips("1.2.3.4")}, {}, {**NP, **ips("1.2.3.5")}, 1),
    ("Service with NodePort type can change its empty ClusterIP", {"type": "NodePort", **ips()}, {}, {**NP, **ips("1.2.3.5")}, 0),
    ("Service with NodePort type cannot change its set ClusterIP when changing type to ClusterIP", {"type": "NodePort", **ips("1.2.3.4")}, {}, ips("1.2.3.5"), 1),
    ("Service with NodePort type can change its empty ClusterIP when changing type to ClusterIP", {"type": "NodePort", **ips()}, {}, ips("1.2.3.5"), 0),
    ("Service with NodePort type cannot change its set ClusterIP when changing type to LoadBalancer", {"type": "NodePort", **ips("1.2.3.4")}, {}, {**LB, **ips("1.2.3.5")}, 1),
    ("Service with NodePort type can change its empty ClusterIP when changing type to LoadBalancer", {"type": "NodePort", **ips()}, {}, {**LB, **ips("1.2.3.5")}, 0),
    ("Service with LoadBalancer type cannot change its set ClusterIP", {**OLD_LB, **ips("1.2.3.4")}, {}, {**LB, **ips("1.2.3.5")}, 1),
    ("Service with LoadBalancer type can change its empty ClusterIP", {**OLD_LB, **ips()}, {}, {**LB, **ips("1.2.3.5")}, 0),
    ("Service with LoadBalancer type cannot change its set ClusterIP when changing type to ClusterIP", {**OLD_LB, **ips("1.2.3.4")}, {}, ips("1.2.3.5"), 1),
    ("Service with LoadBalancer type can change its empty ClusterIP when changing type to ClusterIP", {**OLD_LB, **ips()}, {}, ips("1.2.3.5"), 0),
    ("Service with LoadBalancer type cannot change its set ClusterIP when changing type to NodePort", {**OLD_LB, **ips("1.2.3.4")}, {}, {**NP, **ips("1.2.3.5")}, 1),
    ("Service with LoadBalancer type can change its empty ClusterIP when changing type to NodePort", {**OLD_LB, **ips()}, {}, {**NP, **ips("1.2.3.5")}, 0),
    ("Service with ExternalName type can change its empty ClusterIP when changing type to ClusterIP", {**EXT, **ips()}, {}, ips("1.2.3.5"), 0),
    ("Service with ExternalName type can change its set ClusterIP when changing type to ClusterIP", {**EXT, **ips("1.2.3.4")}, {}, ips("1.2.3.5"), 0),
    ("invalid node port with clusterIP None", {"type": "NodePort", "ports": [port("p", 8675), port("q", 1, node_port=1)], **ips()}, {},
     {**NP, "ports": [port("p", 8675), port("q", 1, node_port=1)], **HEADLESS}, 1),
    # Service IP Family
    ("convert from ExternalName", EXT, {}, {}, 0),
    ("invalid: convert to ExternalName", ips("10.0.0.10", policy=SS, families=V4), {},
     {**EXT, "externalName": "foo", **ips("10.0.0.10", policy=SS, families=V4)}, 3),
    ("valid: convert to ExternalName", ips("10.0.0.10", policy=SS, families=V4), {}, {**EXT, "externalName": "foo"}, 0),
    ("same ServiceIPFamily", {"ipFamilies": V4}, {}, {"ipFamilies": V4}, 0),
    ("same ServiceIPFamily, change IPFamilyPolicy to singleStack", {"ipFamilies": V4}, {}, {"ipFamilyPolicy": SS, "ipFamilies": V4}, 0),
    ("same ServiceIPFamily, change IPFamilyPolicy singleStack => requireDualStack", {"ipFamilyPolicy": SS, "ipFamilies": V4}, {},
     {"ipFamilyPolicy": RDS, "ipFamilies": V4}, 0),
    ("add a new ServiceIPFamily", {"ipFamilyPolicy": RDS, "ipFamilies": V4}, {}, {"ipFamilyPolicy": RDS, "ipFamilies": V46}, 0),
    ("ExternalName while changing Service IPFamily", {**EXT, "externalName": "somename"}, {}, {**EXT, "externalName": "somename"}, 0),
    ("setting ipfamily from nil to v4", {"ipFamilies": None}, {}, {"externalName": "somename", "ipFamilies": V4}, 0),
    ("setting ipfamily from nil to v6", {"ipFamilies": None}, {}, {"externalName": "somename", "ipFamilies": V6}, 0),
    ("change primary ServiceIPFamily", ips("1.2.3.4", families=V4), {}, ips("1.2.3.4", families=V6), 2),
    # upgrade + downgrade from/to dualstack (upstream's first case sets the old policy twice)
    ("valid: upgrade to dual stack with requiredDualStack", ips("1.2.3.4", policy=RDS, families=V4), {}, ips("1.2.3.4", families=V4), 0),
    ("valid: upgrade to dual stack with preferDualStack", ips("1.2.3.4", policy=SS, families=V4), {}, ips("1.2.3.4", policy=PDS, families=V4), 0),
    ("valid: upgrade to dual stack, no specific secondary ip", ips("1.2.3.4", policy=SS, families=V4), {}, ips("1.2.3.4", policy=RDS, families=V46), 0),
    ("valid: upgrade to dual stack, with specific secondary ip", ips("1.2.3.4", policy=SS, families=V4), {},
     ips("1.2.3.4", "2001::1", policy=RDS, families=V46), 0),
    ("valid: downgrade from dual to single", ips("1.2.3.4", "2001::1", policy=RDS, families=V46), {}, ips("1.2.3.4", policy=SS, families=V4), 0),
    ("valid: change families for a headless service", ips("None", policy=RDS, families=V46), {}, ips("None", policy=RDS, families=V64), 0),
    ("valid: upgrade a headless service", ips("None", policy=SS, families=V4), {}, ips("None", policy=RDS, families=V64), 0),
    ("valid: downgrade a headless service", ips("None", policy=RDS, families=V46), {}, ips("None", policy=SS, families=V6), 0),
    ("invalid flip families", {**ips("1.2.3.4", "2001::1", policy=RDS, families=V46), "clusterIP": "1.2.3.40"}, {},
     ips("2001::1", "1.2.3.5", policy=RDS, families=V64), 4),
    ("invalid change first ip, in dualstack service", ips("1.2.3.4", "2001::1", policy=RDS, families=V46), {},
     ips("1.2.3.5", "2001::1", policy=RDS, families=V46), 1),
    ("invalid, change second ip in dualstack service", ips("1.2.3.4", "2001::1", policy=RDS, families=V46), {},
     ips("1.2.3.4", "2002::1", policy=RDS, families=V46), 1),
    ("downgrade keeping the families", ips("1.2.3.4", "2001::1", policy=RDS, families=V46), {}, ips("1.2.3.4", policy=SS, families=V46), 0),
    ("invalid, downgrade without changing to singleStack", ips("1.2.3.4", "2001::1", policy=RDS, families=V46), {},
     ips("1.2.3.4", policy=RDS, families=V4), 2),
    ("invalid, downgrade and change primary ip", ips("1.2.3.4", "2001::1", policy=RDS, families=V46), {}, ips("1.2.3.5", policy=SS, families=V4), 1),
    ("invalid: upgrade to dual stack and change primary", ips("1.2.3.4", policy=SS, families=V4), {}, ips("1.2.3.5", policy=RDS, families=V46), 1),
    ("update to valid app protocol", {"ports": [A]}, {}, {"ports": [{**A, "appProtocol": "https"}]}, 0),
    ("update to invalid app protocol", {"ports": [A]}, {}, {"ports": [{**A, "appProtocol": "~https"}]}, 1),
    ("Set AllocateLoadBalancerNodePorts when type is not LoadBalancer", {}, {}, {"allocateLoadBalancerNodePorts": True}, 1),
    ("update LoadBalancer type of service without change LoadBalancerClass", {**OLD_LB, "loadBalancerClass": "test.com/test-old"}, {},
     {**LB, "loadBalancerClass": "test.com/test-old"}, 0),
    ("invalid: change LoadBalancerClass when update service", {**OLD_LB, "loadBalancerClass": "test.com/test-old"}, {},
     {**LB, "loadBalancerClass": "test.com/test-new"}, 1),
    ("invalid: unset LoadBalancerClass when update service", {**OLD_LB, "loadBalancerClass": "test.com/test-old"}, {}, LB, 1),
    ("invalid: set LoadBalancerClass when update service", OLD_LB, {}, {**LB, "loadBalancerClass": "test.com/test-new"}, 1),
    ("update to LoadBalancer type of service with valid LoadBalancerClass", {}, {}, {**LB, "loadBalancerClass": CLS}, 0),
    ("update to LoadBalancer type of service without LoadBalancerClass", {}, {}, LB, 0),
    ("invalid: set invalid LoadBalancerClass when update service to LoadBalancer", {}, {}, {**LB, "loadBalancerClass": "Bad/LoadBalancerclass"}, 2),
    # upstream names the next six alike; the type they go to is added here
    ("invalid: set LoadBalancerClass when update service to non LoadBalancer type of service (ClusterIP)", {}, {}, {"loadBalancerClass": CLS}, 2),
    ("invalid: set LoadBalancerClass when update service to non LoadBalancer type of service (ExternalName)", EXT, {}, {**EXT, "loadBalancerClass": CLS}, 3),
    ("invalid: set LoadBalancerClass when update service to non LoadBalancer type of service (NodePort)", {"type": "NodePort"}, {}, {**NP, "loadBalancerClass": CLS}, 2),
    ("invalid: set LoadBalancerClass when update from LoadBalancer service to non LoadBalancer type of service (ClusterIP)",
     {**OLD_LB, "loadBalancerClass": CLS}, {}, {"loadBalancerClass": CLS}, 2),
    ("invalid: set LoadBalancerClass when update from LoadBalancer service to non LoadBalancer type of service (ExternalName)",
     {**OLD_LB, "loadBalancerClass": CLS}, {}, {**EXT, "loadBalancerClass": CLS}, 3),
    ("invalid: set LoadBalancerClass when update from LoadBalancer service to non LoadBalancer type of service (NodePort)",
     {**OLD_LB, "loadBalancerClass": CLS}, {}, {**NP, "loadBalancerClass": CLS}, 2),
    ("update internalTrafficPolicy from Cluster to Local", {"internalTrafficPolicy": "Cluster"}, {}, {"internalTrafficPolicy": "Local"}, 0),
    ("update internalTrafficPolicy from Local to Cluster", {"internalTrafficPolicy": "Local"}, {}, {"internalTrafficPolicy": "Cluster"}, 0),
    ("topology annotations are mismatched", {}, {"annotations": {"service.kubernetes.io/topology-aware-hints": "original",
                                                                 "service.kubernetes.io/topology-mode": "different"}}, {}, 1),
]


@pytest.mark.parametrize(("old_spec", "meta", "spec", "want"), [c[1:] for c in UPDATE], ids=[c[0] for c in UPDATE])
def test_validate_service_update(old_spec: dict[str, Any], meta: dict[str, Any], spec: dict[str, Any],
                                 want: int) -> None:
    old, new = tweaked({}, old_spec), tweaked(meta, spec)
    errs = validate_update(new, old, SERVICES, builtin=True)
    assert len(errs) == want, [str(e) for e in errs]


def test_the_table_is_upstreams_length() -> None:
    assert len(UPDATE) == 86 and len({c[0] for c in UPDATE}) == len(UPDATE)
