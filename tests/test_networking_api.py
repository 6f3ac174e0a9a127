"""networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy as the API serves them:
validation in upstream's words (pkg/apis/networking/validation), NetworkPolicy's defaults, and
printers.go's columns. kind installs no ingress controller, and kubelab runs none: an Ingress
is stored and printed, with no ADDRESS, and routes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.apis.validation.networking import (
    validate_ingress,
    validate_ingress_class,
    validate_network_policy,
)

NET = "networking.k8s.io/v1"


def ingress(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": NET, "kind": "Ingress", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def rule(host: str = "", path: str = "/", path_type: str | None = "Prefix",
         backend: dict[str, Any] | None = None) -> dict[str, Any]:
    p: dict[str, Any] = {"path": path, "backend": backend if backend is not None else
                         {"service": {"name": "web", "port": {"number": 80}}}}
    if path_type is not None:
        p["pathType"] = path_type
    r: dict[str, Any] = {"http": {"paths": [p]}}
    if host:
        r["host"] = host
    return r


def _errors(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


@pytest.mark.parametrize(("spec", "expected"), [
    ({}, ["spec.rules: Invalid value: []: either `defaultBackend` or `rules` must be specified"]),
    ({"rules": [rule(path_type=None)]}, [
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]),
    ({"rules": [rule(path="api", path_type="Prefix")]}, [
        'spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path']),
    ({"rules": [rule(host="10.0.0.1")]}, [
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']),
    ({"rules": [rule(backend={})]}, [
        'spec.rules[0].http.paths[0].backend: Invalid value: "": one backend type must be specified']),
    ({"rules": [rule(backend={"service": {"name": "web", "port": {"name": "http", "number": 80}}})]},
     ['spec.rules[0].http.paths[0].backend.service.port: Invalid value: "http": cannot set both '
      'port name & port number']),
    ({"rules": [rule(host="*.example.com", path_type="ImplementationSpecific")]}, []),
])
def test_ingress_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert _errors(validate_ingress(ingress(**spec))) == expected


def test_ingress_class_and_network_policy_validation() -> None:
    assert _errors(validate_ingress_class({"spec": {}})) == ["spec.controller: Required value"]
    assert validate_ingress_class({"spec": {"controller": "k8s.io/ingress-nginx"}}) == []
    bad = {"spec": {"podSelector": {}, "policyTypes": ["Sideways"], "ingress": [{
        "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}],
        "ports": [{"protocol": "ICMP"}, {"port": 8080, "endPort": 80}]}]}}
    assert _errors(validate_network_policy(bad)) == [
        'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", '
        '"TCP", "UDP"',
        "spec.ingress[0].ports[1].endPort: Invalid value: 80: must be greater than or equal to `port`",
        "spec.ingress[0].from[0]: Required value: must specify a peer",
        "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
        'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Egress", "Ingress"']


def test_served_with_defaults_and_upstreams_columns() -> None:
    c = Cluster(nodes=1, seed=9)
    c.client.create({"apiVersion": NET, "kind": "IngressClass", "metadata": {"name": "nginx"},
                     "spec": {"controller": "k8s.io/ingress-nginx"}})
    c.client.create(ingress(ingressClassName="nginx", rules=[rule("shop.example.com"), rule("")],
                            tls=[{"hosts": ["shop.example.com"], "secretName": "tls"}]))
    np = c.client.create({"apiVersion": NET, "kind": "NetworkPolicy",
                          "metadata": {"name": "db", "namespace": "default"},
                          "spec": {"podSelector": {"matchLabels": {"app": "db"}},
                                   "egress": [{"ports": [{"port": 53}]}]}})
    assert np["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert np["spec"]["egress"][0]["ports"][0]["protocol"] == "TCP"
    c.client.create({"apiVersion": NET, "kind": "NetworkPolicy",
                     "metadata": {"name": "deny-all", "namespace": "default"}, "spec": {"podSelector": {}}})
    rows = [line.split() for line in str(c.kubectl("get ingressclass,ingress,netpol")).splitlines()
            if line.strip()]
    assert rows[0] == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert rows[1][:3] == ["ingressclass.networking.k8s.io/nginx", "k8s.io/ingress-nginx", "<none>"]
    assert rows[2] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert rows[3][:5] == ["ingress.networking.k8s.io/web", "nginx", "shop.example.com,*", "80,", "443"]
    assert rows[4] == ["NAME", "POD-SELECTOR", "AGE"]
    assert [r[:2] for r in rows[5:]] == [["networkpolicy.networking.k8s.io/db", "app=db"],
                                         ["networkpolicy.networking.k8s.io/deny-all", "<none>"]]
    with pytest.raises(ApiError) as err:
        c.client.create(ingress("empty"))
    assert err.value.code == 422 and "either `defaultBackend` or `rules` must be specified" in \
        err.value.message
