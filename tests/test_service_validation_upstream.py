# ruff: noqa: E501  (upstream's table rows, one case a line, as in validation_test.go)
"""Upstream's tables, ported as data: pkg/apis/core/validation/validation_test.go
(TestValidateServiceCreate, TestValidateServiceExternalTrafficPolicy), the offsets of
ipallocator and portallocator (TestCalculateRangeOffset) and
pkg/apis/coordination/validation/validation_test.go (TestValidateLeaseSpec...).

Each case: a name, a tweak of makeValidService's Service (keys set, or removed with None),
and upstream's error count."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.apiserver.apis.validation import validate_create
from kubelab.apiserver.apis.validation.coordination import validate_lease
from kubelab.apiserver.apis.validation.services import validate_external_traffic_policy
from kubelab.apiserver.registry.service.allocators import ip_range_offset, port_range_offset
from tests.service_validation_helpers import (
    HEADLESS,
    LB,
    NP,
    P0,
    PDS,
    RANGES,
    RDS,
    SERVICES,
    SS,
    ips,
    port,
    tweaked,
)

# (name, metadata changes, spec changes, upstream numErrs)
CREATE: list[tuple[str, dict[str, Any], dict[str, Any], int]] = [
    ("missing namespace", {"namespace": ""}, {}, 1),
    ("invalid namespace", {"namespace": "-123"}, {}, 1),
    ("missing name", {"name": ""}, {}, 1),
    ("invalid name", {"name": "-123"}, {}, 1),
    ("too long name", {"name": "a" * 64}, {}, 1),
    ("invalid generateName", {"generateName": "-123"}, {}, 1),
    ("too long generateName", {"generateName": "a" * 64}, {}, 1),
    ("invalid label", {"labels": {"NoUppercaseOrSpecialCharsLike=Equals": "bar"}}, {}, 1),
    ("invalid annotation", {"annotations": {"NoSpecialCharsLike=Equals": "bar"}}, {}, 1),
    ("nil selector", {}, {"selector": None}, 0),
    ("invalid selector", {}, {"selector": {"key": "val", "NoSpecialCharsLike=Equals": "bar"}}, 1),
    ("missing session affinity", {}, {"sessionAffinity": ""}, 1),
    ("missing type", {}, {"type": ""}, 1),
    ("missing ports", {}, {"ports": None}, 1),
    ("missing ports but headless", {}, {"ports": None, **HEADLESS}, 0),
    ("empty port[0] name", {}, {"ports": [port("", 8675)]}, 0),
    ("empty port[1] name", {}, {"ports": [P0, port("", 12345)]}, 1),
    ("empty multi-port port[0] name", {}, {"ports": [port("", 8675), port("p", 12345)]}, 1),
    ("invalid port name", {}, {"ports": [port("INVALID", 8675)]}, 1),
    ("missing protocol", {}, {"ports": [port("p", 8675, "")]}, 1),
    ("invalid protocol", {}, {"ports": [port("p", 8675, "INVALID")]}, 1),
    ("invalid cluster ip", {}, ips("invalid"), 1),
    ("missing port", {}, {"ports": [port("p", 0, target=8675)]}, 1),
    ("invalid port", {}, {"ports": [port("p", 65536, target=8675)]}, 1),
    ("invalid TargetPort int", {}, {"ports": [port("p", 8675, target=65536)]}, 1),
    ("valid port headless", {}, {"ports": [port("p", 11722)], **HEADLESS}, 0),
    ("invalid port headless 1", {}, {"ports": [port("p", 11722, target=11721)], **HEADLESS}, 0),
    ("invalid port headless 2", {}, {"ports": [port("p", 11722, target="target")], **HEADLESS}, 0),
    ("invalid publicIPs localhost", {}, {"externalTrafficPolicy": "Cluster", "externalIPs": ["127.0.0.1"]}, 1),
    ("invalid publicIPs unspecified", {}, {"externalTrafficPolicy": "Cluster", "externalIPs": ["0.0.0.0"]}, 1),
    ("invalid publicIPs loopback", {}, {"externalTrafficPolicy": "Cluster", "externalIPs": ["127.0.0.1"]}, 1),
    ("invalid publicIPs host", {}, {"externalTrafficPolicy": "Cluster", "externalIPs": ["myhost.mydomain"]}, 1),
    ("valid publicIPs", {}, {"externalTrafficPolicy": "Cluster", "externalIPs": ["1.2.3.4"]}, 0),
    ("dup port name", {}, {"ports": [P0, port("p", 12345)]}, 1),
    ("valid load balancer protocol UDP 1", {}, {**LB, "ports": [port("p", 8675, "UDP")]}, 0),
    ("valid load balancer protocol UDP 2", {}, {**LB, "ports": [port("q", 12345, "UDP")]}, 0),
    ("load balancer with mix protocol", {}, {**LB, "ports": [P0, port("q", 12345, "UDP")]}, 0),
    ("valid 1", {}, {}, 0),
    ("valid 2", {}, {"ports": [port("p", 8675, "UDP", target=12345)]}, 0),
    ("valid 3", {}, {"ports": [port("p", 8675, target="http")]}, 0),
    ("valid cluster ip - none ", {}, HEADLESS, 0),
    ("valid cluster ip - empty", {}, {"clusterIPs": None, "ports": [port("p", 8675, target="http")]}, 0),
    ("valid type - clusterIP", {}, {"type": "ClusterIP"}, 0),
    ("valid type - loadbalancer", {}, LB, 0),
    ("valid type - loadbalancer with allocateLoadBalancerNodePorts=false", {},
     {**LB, "allocateLoadBalancerNodePorts": False}, 0),
    ("invalid type - missing AllocateLoadBalancerNodePorts for loadbalancer type", {},
     {**LB, "allocateLoadBalancerNodePorts": None}, 1),
    ("valid type loadbalancer 2 ports", {}, {**LB, "ports": [P0, port("q", 12345)]}, 0),
    ("valid external load balancer 2 ports", {}, {**LB, "ports": [P0, port("q", 12345)]}, 0),
    ("duplicate nodeports", {}, {**NP, "ports": [P0, port("q", 1, node_port=1), port("r", 2, node_port=1)]}, 1),
    ("duplicate nodeports (different protocols)", {}, {**NP, "ports": [
        P0, port("q", 1, node_port=1), port("r", 2, "UDP", 1), port("s", 3, "SCTP", 1)]}, 0),
    ("invalid duplicate ports (with same protocol)", {}, {"ports": [
        P0, port("q", 12345, target=8080), port("r", 12345, target=80)]}, 1),
    ("valid duplicate ports (with different protocols)", {}, {"ports": [
        P0, port("q", 12345, target=8080), port("r", 12345, "UDP", target=80),
        port("s", 12345, "SCTP", target=8088)]}, 0),
    ("valid type - cluster", {}, {"type": "ClusterIP"}, 0),
    ("valid type - nodeport", {}, NP, 0),
    ("valid type - loadbalancer with allocateLoadBalancerNodePorts=true", {}, LB, 0),
    ("valid type loadbalancer 2 ports (again)", {}, {**LB, "ports": [P0, port("q", 12345)]}, 0),
    ("valid type loadbalancer with NodePort", {}, {**LB, "ports": [P0, port("q", 12345, node_port=12345)]}, 0),
    ("valid type=NodePort service with NodePort", {}, {**NP, "ports": [P0, port("q", 12345, node_port=12345)]}, 0),
    ("valid type=NodePort service without NodePort", {}, {**NP, "ports": [P0, port("q", 12345)]}, 0),
    ("valid cluster service without NodePort", {}, {"ports": [P0, port("q", 12345)]}, 0),
    ("invalid cluster service with NodePort", {}, {"ports": [P0, port("q", 12345, node_port=12345)]}, 1),
    ("invalid public service with duplicate NodePort", {}, {**NP, "ports": [
        P0, port("p1", 1, node_port=1), port("p2", 2, node_port=1)]}, 1),
    ("valid type=LoadBalancer", {}, {**LB, "ports": [P0, port("q", 12345)]}, 0),
    ("valid port type=LoadBalancer", {}, {**LB, "ports": [P0, port("kubelet", 10250, target=12345)]}, 0),
    ("valid LoadBalancer source range annotation", {"annotations": {RANGES: "1.2.3.0/24,  5.6.0.0/16"}}, LB, 0),
    ("valid empty LoadBalancer source range annotation", {"annotations": {RANGES: ""}}, LB, 0),
    ("valid whitespace-only LoadBalancer source range annotation", {"annotations": {RANGES: "  "}}, LB, 0),
    ("invalid LoadBalancer source range annotation (hostname)", {"annotations": {RANGES: "foo.bar"}}, LB, 1),
    ("invalid LoadBalancer source range annotation (invalid CIDR)", {"annotations": {RANGES: "1.2.3.4/33"}}, LB, 1),
    ("invalid LoadBalancer source range annotation for non LoadBalancer type service",
     {"annotations": {RANGES: "1.2.3.0/24"}}, {}, 1),
    ("invalid empty-but-set LoadBalancer source range annotation for non LoadBalancer type service",
     {"annotations": {RANGES: ""}}, {}, 1),
    ("valid LoadBalancer source range", {}, {**LB, "loadBalancerSourceRanges": ["1.2.3.0/24", "5.6.0.0/16"]}, 0),
    ("valid LoadBalancer source range with whitespace", {},
     {**LB, "loadBalancerSourceRanges": ["1.2.3.0/24  ", " 5.6.0.0/16"]}, 0),
    ("invalid empty LoadBalancer source range", {}, {**LB, "loadBalancerSourceRanges": ["   "]}, 1),
    ("invalid LoadBalancer source range (hostname)", {}, {**LB, "loadBalancerSourceRanges": ["foo.bar"]}, 1),
    ("invalid LoadBalancer source range (invalid CIDR)", {}, {**LB, "loadBalancerSourceRanges": ["1.2.3.4/33"]}, 1),
    ("invalid source range for non LoadBalancer type service", {},
     {"loadBalancerSourceRanges": ["1.2.3.0/24", "5.6.0.0/16"]}, 1),
    ("invalid source range annotation ignored with valid source range field", {"annotations": {RANGES: "foo.bar"}},
     {**LB, "loadBalancerSourceRanges": ["1.2.3.0/24", "5.6.0.0/16"]}, 0),
    ("valid ExternalName", {}, {"type": "ExternalName", "externalName": "foo.bar.example.com"}, 0),
    ("valid ExternalName (trailing dot)", {}, {"type": "ExternalName", "externalName": "foo.bar.example.com."}, 0),
    ("invalid ExternalName clusterIP (valid IP)", {}, {"type": "ExternalName", **ips("1.2.3.4"),
                                                       "externalName": "foo.bar.example.com"}, 1),
    ("invalid ExternalName clusterIP (None)", {}, {"type": "ExternalName", **HEADLESS,
                                                   "externalName": "foo.bar.example.com"}, 1),
    ("invalid ExternalName (not a DNS name)", {}, {"type": "ExternalName", "externalName": "-123"}, 1),
    ("LoadBalancer type cannot have None ClusterIP", {}, {**HEADLESS, **LB}, 1),
    ("invalid node port with clusterIP None", {}, {**NP, "ports": [P0, port("q", 1, node_port=1)], **HEADLESS}, 1),
    ("invalid externalTraffic field", {}, {**LB, "externalTrafficPolicy": "invalid"}, 1),
    ("nil internalTraffic field when feature gate is on", {}, {"internalTrafficPolicy": None}, 1),
    ("internalTrafficPolicy field nil when type is ExternalName", {},
     {"internalTrafficPolicy": None, "type": "ExternalName", "externalName": "foo.bar.com"}, 0),
    ("internalTrafficPolicy field is set when type is ExternalName", {},
     {"type": "ExternalName", "externalName": "foo.bar.com"}, 0),
    ("invalid internalTraffic field", {}, {"internalTrafficPolicy": "invalid"}, 1),
    ("internalTrafficPolicy field set to Cluster", {}, {"internalTrafficPolicy": "Cluster"}, 0),
    ("internalTrafficPolicy field set to Local", {}, {"internalTrafficPolicy": "Local"}, 0),
    ("negative healthCheckNodePort field", {}, {**LB, "externalTrafficPolicy": "Local", "healthCheckNodePort": -1}, 1),
    ("negative healthCheckNodePort field (valid)", {},
     {**LB, "externalTrafficPolicy": "Local", "healthCheckNodePort": 31100}, 0),
    ("invalid timeoutSeconds field", {}, {"sessionAffinity": "ClientIP",
                                          "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": -1}}}, 1),
    ("sessionAffinityConfig can't be set when session affinity is None", {},
     {**LB, "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90}}}, 1),
    ("invalid, service with invalid ipFamilies", {}, {"ipFamilies": ["not-a-valid-ip-family"]}, 1),
    ("invalid, service with invalid ipFamilies (2nd)", {},
     {"ipFamilyPolicy": RDS, "ipFamilies": ["IPv4", "not-a-valid-ip-family"]}, 1),
    ("IPFamilyPolicy(singleStack) is set for two families", {}, {"ipFamilyPolicy": SS, "ipFamilies": ["IPv4", "IPv6"]}, 0),
    ("valid, IPFamilyPolicy(preferDualStack) is set for two families", {},
     {"ipFamilyPolicy": PDS, "ipFamilies": ["IPv4", "IPv6"]}, 0),
    ("invalid, service with 2+ ipFamilies", {}, {"ipFamilyPolicy": RDS, "ipFamilies": ["IPv4", "IPv6", "IPv4"]}, 1),
    ("invalid, service with same ip families", {}, {"ipFamilyPolicy": RDS, "ipFamilies": ["IPv6", "IPv6"]}, 1),
    ("valid, nil service ipFamilies", {}, {"ipFamilies": None}, 0),
    ("valid, service with valid ipFamilies (v4)", {}, {"ipFamilies": ["IPv4"]}, 0),
    ("valid, service with valid ipFamilies (v6)", {}, {"ipFamilies": ["IPv6"]}, 0),
    ("valid, service with valid ipFamilies(v4,v6)", {}, {"ipFamilyPolicy": RDS, "ipFamilies": ["IPv4", "IPv6"]}, 0),
    ("valid, service with valid ipFamilies(v6,v4)", {}, {"ipFamilyPolicy": RDS, "ipFamilies": ["IPv6", "IPv4"]}, 0),
    ("valid, service preferred dual stack with single family", {}, {"ipFamilyPolicy": PDS, "ipFamilies": ["IPv6"]}, 0),
    ("invalid, garbage single ip", {}, ips("garbage-ip"), 1),
    ("invalid, garbage ips", {}, ips("garbage-ip", "garbage-second-ip", policy=RDS), 2),
    ("invalid, garbage first ip", {}, ips("garbage-ip", "2001::1", policy=RDS), 1),
    ("invalid, garbage second ip", {}, ips("2001::1", "garbage-ip", policy=RDS), 1),
    ("invalid, NONE + IP", {}, ips("None", "2001::1", policy=RDS), 1),
    ("invalid, IP + NONE", {}, ips("2001::1", "None", policy=RDS), 1),
    ("invalid, EMPTY STRING + IP", {}, {**ips("", "2001::1", policy=RDS), "clusterIP": ""}, 2),
    ("invalid, IP + EMPTY STRING", {}, ips("2001::1", "", policy=RDS), 1),
    ("invalid, same ip family (v6)", {}, ips("2001::1", "2001::4", policy=RDS, families=["IPv4", "IPv6"]), 2),
    ("invalid, same ip family (v4)", {}, ips("10.0.0.1", "10.0.0.10", policy=RDS, families=["IPv4", "IPv6"]), 2),
    ("invalid, more than two ips", {}, ips("10.0.0.1", "2001::1", "10.0.0.10", policy=RDS,
                                           families=["IPv4", "IPv6"]), 1),
    (" multi ip, dualstack not set (request for downgrade)", {},
     ips("10.0.0.1", "2001::1", policy=SS, families=["IPv4", "IPv6"]), 0),
    ("valid, headless-no-selector + multi family + gate off", {},
     {**ips("None", policy=RDS, families=["IPv4", "IPv6"]), "selector": None}, 0),
    ("valid, multi ip, single ipfamilies preferDualStack", {}, ips("10.0.0.1", "2001::1", policy=PDS, families=["IPv4"]), 0),
    ("valid, multi ip, single ipfamilies (must match when provided) + requireDualStack", {},
     ips("10.0.0.1", "2001::1", policy=RDS, families=["IPv4"]), 0),
    ("invalid, families don't match (v4=>v6)", {}, ips("10.0.0.1", families=["IPv6"]), 1),
    ("invalid, families don't match (v6=>v4)", {}, ips("2001::1", families=["IPv4"]), 1),
    ("valid. no field set", {}, {}, 0),
    ("valid, single ip", {}, ips("10.0.0.1", policy=SS), 0),
    ("valid, single family", {}, {"ipFamilyPolicy": SS, "ipFamilies": ["IPv6"]}, 0),
    ("valid, single ip + single family", {}, ips("2001::1", policy=SS, families=["IPv6"]), 0),
    ("valid, single ip + single family (dual stack requested)", {}, ips("2001::1", policy=PDS, families=["IPv6"]), 0),
    ("valid, single ip, multi ipfamilies", {}, ips("10.0.0.1", policy=RDS, families=["IPv4", "IPv6"]), 0),
    ("valid, multi ips, multi ipfamilies (4,6)", {}, ips("10.0.0.1", "2001::1", policy=RDS, families=["IPv4", "IPv6"]), 0),
    ("valid, ips, multi ipfamilies (6,4)", {}, ips("2001::1", "10.0.0.1", policy=RDS, families=["IPv6", "IPv4"]), 0),
    ("valid, multi ips (6,4)", {}, ips("2001::1", "10.0.0.1", policy=RDS), 0),
    ("valid, multi ipfamilies (6,4)", {}, {"ipFamilyPolicy": RDS, "ipFamilies": ["IPv6", "IPv4"]}, 0),
    ("valid, multi ips (4,6)", {}, ips("10.0.0.1", "2001::1", policy=RDS), 0),
    ("valid,  multi ipfamilies (4,6)", {}, {"ipFamilyPolicy": RDS, "ipFamilies": ["IPv4", "IPv6"]}, 0),
    ("valid, dual stack", {}, {"ipFamilyPolicy": RDS}, 0),
    ("valid appProtocol", {}, {"ports": [{"port": 12345, "targetPort": 12345, "protocol": "TCP", "appProtocol": "HTTP"}]}, 0),
    ("valid custom appProtocol", {}, {"ports": [{"port": 12345, "targetPort": 12345, "protocol": "TCP",
                                                 "appProtocol": "example.com/protocol"}]}, 0),
    ("invalid appProtocol", {}, {"ports": [{"port": 12345, "targetPort": 12345, "protocol": "TCP",
                                            "appProtocol": "example.com/protocol_with{invalid}[characters]"}]}, 1),
    ("invalid cluster ip != clusterIP in multi ip service", {},
     {**ips("10.0.0.1", "2001::1", policy=RDS), "clusterIP": "10.0.0.10"}, 1),
    ("invalid cluster ip != clusterIP in single ip service", {}, {**ips("10.0.0.1"), "clusterIP": "10.0.0.10"}, 1),
    ("Use AllocateLoadBalancerNodePorts when type is not LoadBalancer", {}, {"allocateLoadBalancerNodePorts": True}, 1),
    ("valid LoadBalancerClass when type is LoadBalancer", {},
     {**LB, "loadBalancerClass": "test.com/test-load-balancer-class"}, 0),
    ("invalid LoadBalancerClass", {}, {**LB, "loadBalancerClass": "Bad/LoadBalancerClass"}, 1),
    ("invalid: set LoadBalancerClass when type is not LoadBalancer", {},
     {"loadBalancerClass": "test.com/test-load-balancer-class"}, 1),
    ("topology annotations are mismatched", {"annotations": {
        "service.kubernetes.io/topology-aware-hints": "original",
        "service.kubernetes.io/topology-mode": "different"}}, {}, 1),
    ("valid: trafficDistribution field set to PreferClose", {}, {"trafficDistribution": "PreferClose"}, 0),
    ("invalid: trafficDistribution field set to Random", {}, {"trafficDistribution": "Random"}, 1),
]


@pytest.mark.parametrize(("meta", "spec", "want"), [c[1:] for c in CREATE], ids=[c[0] for c in CREATE])
def test_validate_service_create(meta: dict[str, Any], spec: dict[str, Any], want: int) -> None:
    errs = validate_create(tweaked(meta, spec), SERVICES, builtin=True)
    assert len(errs) == want, [str(e) for e in errs]


ETP: list[tuple[str, dict[str, Any], int]] = [
    ("valid loadBalancer service with externalTrafficPolicy and healthCheckNodePort set",
     {**LB, "externalTrafficPolicy": "Local", "healthCheckNodePort": 34567}, 0),
    ("valid nodePort service with externalTrafficPolicy set", {**NP, "externalTrafficPolicy": "Local"}, 0),
    ("valid clusterIP service with none of externalTrafficPolicy and healthCheckNodePort set", {"type": "ClusterIP"}, 0),
    ("cannot set healthCheckNodePort field on loadBalancer service with externalTrafficPolicy!=Local",
     {**LB, "healthCheckNodePort": 34567}, 1),
    ("cannot set healthCheckNodePort field on nodePort service",
     {**NP, "externalTrafficPolicy": "Local", "healthCheckNodePort": 34567}, 1),
    ("cannot set externalTrafficPolicy or healthCheckNodePort fields on clusterIP service",
     {"externalTrafficPolicy": "Local", "healthCheckNodePort": 34567}, 2),
    ("cannot set externalTrafficPolicy field on ExternalName service",
     {"type": "ExternalName", "externalTrafficPolicy": "Local"}, 1),
    ("externalTrafficPolicy is required on NodePort service", {"type": "NodePort"}, 1),
    ("externalTrafficPolicy is required on LoadBalancer service", {"type": "LoadBalancer"}, 1),
    ("externalTrafficPolicy is required on ClusterIP service with externalIPs", {"externalIPs": ["1.2.3,4"]}, 1),
]


@pytest.mark.parametrize(("spec", "want"), [c[1:] for c in ETP], ids=[c[0] for c in ETP])
def test_validate_service_external_traffic_policy(spec: dict[str, Any], want: int) -> None:
    errs = validate_external_traffic_policy(tweaked({}, spec)["spec"])
    assert len(errs) == want, [str(e) for e in errs]


def test_service_name_is_a_dns1035_label() -> None:
    errs = validate_create(tweaked({"name": "1abc"}, {}), SERVICES, builtin=True)
    assert [str(e) for e in errs] == [
        'metadata.name: Invalid value: "1abc": a DNS-1035 label must consist of lower case '
        "alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')"]


# ipallocator TestCalculateRangeOffset: (cidr, offset); portallocator: (range size, offset).
IP_OFFSETS = [("192.168.1.0/32", 0), ("192.168.1.0/31", 0), ("192.168.1.0/30", 0),
              ("192.168.1.0/28", 0), ("192.168.1.0/27", 16), ("192.168.1.0/24", 16),
              ("192.168.1.0/22", 64), ("192.168.1.0/20", 256), ("192.168.1.0/16", 256),
              ("fd00:1:2:3::/128", 0), ("fd00:1:2:3::/124", 0), ("fd00:1:2:3::/120", 16),
              ("fd00:1:2:3::/112", 256)]
PORT_OFFSETS = [(0, 0), (1, 0), (16, 0), (17, 16), (100, 16), (1024, 32), (2768, 86), (4096, 128),
                (10000, 128)]


@pytest.mark.parametrize(("cidr", "want"), IP_OFFSETS)
def test_ip_range_offset(cidr: str, want: int) -> None:
    import ipaddress
    assert ip_range_offset(ipaddress.ip_network(cidr, strict=False).num_addresses) == want


@pytest.mark.parametrize(("size", "want"), PORT_OFFSETS)
def test_port_range_offset(size: int, want: int) -> None:
    assert port_range_offset(size) == want


# coordination TestValidateLeaseSpec...: (name, spec, numErrs)
LEASES: list[tuple[str, dict[str, Any], int]] = [
    ("valid", {"holderIdentity": "a", "leaseDurationSeconds": 10, "leaseTransitions": 0}, 0),
    ("zero duration", {"leaseDurationSeconds": 0}, 1),
    ("negative duration", {"leaseDurationSeconds": -1}, 1),
    ("negative transitions", {"leaseTransitions": -1}, 1),
    ("preferredHolder without strategy", {"preferredHolder": "someone"}, 1),
    ("known strategy", {"strategy": "OldestEmulationVersion", "preferredHolder": "someone"}, 0),
    ("unknown strategy", {"strategy": "foo"}, 1),
    ("qualified custom strategy", {"strategy": "foo/bar"}, 0),
    ("invalid custom strategy", {"strategy": "foo//bar"}, 1),
]


@pytest.mark.parametrize(("spec", "want"), [c[1:] for c in LEASES], ids=[c[0] for c in LEASES])
def test_validate_lease_spec(spec: dict[str, Any], want: int) -> None:
    assert len(validate_lease({"spec": spec})) == want
