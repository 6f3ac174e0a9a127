"""Content negotiation for Tables: does a request's Accept header ask for a meta.k8s.io/v1 Table?

Real kubectl sends `Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json`
for `kubectl get` (kubectl pkg/cmd/get/get.go transformRequests). Only this is read here
(k8s.io/apiserver pkg/endpoints/handlers/negotiation); the Table itself is the API server's
(kubelab/apiserver/endpoints/response.py), built by the resource's TableConvertor.
"""

from __future__ import annotations

__all__ = ["TABLE_V1", "wants_table"]

TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"


def wants_table(accept: str) -> bool:
    """Does an acceptable media type ask for a meta.k8s.io/v1 Table?"""
    for part in accept.split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") == "v1":
            return True
    return False
