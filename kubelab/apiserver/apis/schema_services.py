"""The light schema of core/v1 Service and discovery.k8s.io/v1 EndpointSlice (notebook 09).

Go's type names, as in k8s.io/api core/v1 types.go (ServiceSpec, ServicePort, ServiceStatus)
and discovery/v1 types.go (EndpointSlice, Endpoint, EndpointConditions, EndpointPort), and the
deprecated core/v1 Endpoints (EndpointSubset, EndpointAddress, EndpointPort); the
fields the course does not use (topology hints' insides, sessionAffinityConfig) are ANY.
kubelab.apiserver.registry.service adds these to schema.SCHEMAS when it is imported.
"""

from __future__ import annotations

from kubelab.apiserver.apis.schema import (
    ANY,
    BOOL,
    INT32,
    INT_OR_STRING,
    OBJECT_REFERENCE,
    STRING,
    STRING_MAP,
    STRINGS,
    ListOf,
    Struct,
    kind,
    struct,
)

__all__ = ["SERVICE_SCHEMAS"]

SERVICE_PORT = struct("ServicePort", name=STRING, protocol=STRING, appProtocol=STRING, port=INT32,
                      targetPort=INT_OR_STRING, nodePort=INT32)
LOAD_BALANCER_INGRESS = struct(
    "LoadBalancerIngress", ip=STRING, hostname=STRING, ipMode=STRING,
    ports=ListOf(struct("PortStatus", port=INT32, protocol=STRING, error=STRING)))
SERVICE = kind(
    "Service",
    spec=struct(
        "ServiceSpec", ports=ListOf(SERVICE_PORT), selector=STRING_MAP, clusterIP=STRING,
        clusterIPs=STRINGS, type=STRING, externalIPs=STRINGS, sessionAffinity=STRING,
        loadBalancerIP=STRING, loadBalancerSourceRanges=STRINGS, externalName=STRING,
        externalTrafficPolicy=STRING, healthCheckNodePort=INT32, publishNotReadyAddresses=BOOL,
        sessionAffinityConfig=ANY, ipFamilies=STRINGS, ipFamilyPolicy=STRING,
        allocateLoadBalancerNodePorts=BOOL, loadBalancerClass=STRING,
        internalTrafficPolicy=STRING, trafficDistribution=STRING),
    status=struct("ServiceStatus",
                  loadBalancer=struct("LoadBalancerStatus", ingress=ListOf(LOAD_BALANCER_INGRESS)),
                  conditions=ANY))
ENDPOINT = struct(
    "Endpoint", "v1", addresses=STRINGS,
    conditions=struct("EndpointConditions", ready=BOOL, serving=BOOL, terminating=BOOL),
    hostname=STRING, targetRef=OBJECT_REFERENCE, deprecatedTopology=STRING_MAP, nodeName=STRING,
    zone=STRING, hints=ANY)
ENDPOINT_SLICE = kind(
    "EndpointSlice", addressType=STRING, endpoints=ListOf(ENDPOINT),
    ports=ListOf(struct("EndpointPort", name=STRING, protocol=STRING, port=INT32,
                        appProtocol=STRING)))

# --- endpoints --- core/v1 Endpoints (types.go: EndpointSubset, EndpointAddress, EndpointPort)
ENDPOINT_ADDRESS = struct("EndpointAddress", ip=STRING, hostname=STRING, nodeName=STRING,
                          targetRef=OBJECT_REFERENCE)
ENDPOINTS = kind(
    "Endpoints",
    subsets=ListOf(struct("EndpointSubset", addresses=ListOf(ENDPOINT_ADDRESS),
                          notReadyAddresses=ListOf(ENDPOINT_ADDRESS),
                          ports=ListOf(struct("EndpointPort", name=STRING, port=INT32,
                                              protocol=STRING, appProtocol=STRING)))))

SERVICE_SCHEMAS: dict[str, Struct] = {s.name: s for s in (SERVICE, ENDPOINT_SLICE, ENDPOINTS)}
