"""Helpers for the API server tests: a server on a fresh store, and manifests."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.sim import Clock, Trace
from kubelab.store import Store

Object = dict[str, Any]


class Env:
    """A server, its store and clock, and an admin token; shortcuts for requests."""

    def __init__(self, seed: int = 0) -> None:
        self.clock = Clock()
        self.trace = Trace(lambda: self.clock.now)
        self.store = Store(self.clock, trace=self.trace)
        self.server = APIServer(self.store, self.clock, random.Random(seed), trace=self.trace)
        self.admin = self.server.token_for("admin")

    def req(self, verb: str, resource: str, namespace: str = "default", name: str = "",
            token: str | None = None, **kwargs: Any) -> Object:
        group = kwargs.pop("group", "apps" if resource in ("deployments", "replicasets") else "")
        if resource in ("roles", "rolebindings", "clusterroles", "clusterrolebindings"):
            group = "rbac.authorization.k8s.io"
        if resource in ("nodes", "namespaces", "clusterroles", "clusterrolebindings"):
            namespace = ""
        return self.server.handle(Request(verb, resource, namespace=namespace, name=name,
                                          group=group, token=self.admin if token is None
                                          else token, **kwargs))

    def create(self, resource: str, body: Object, namespace: str = "default",
               **kwargs: Any) -> Object:
        return self.req("create", resource, namespace, body=copy.deepcopy(body), **kwargs)

    def get(self, resource: str, name: str, namespace: str = "default", **kwargs: Any) -> Object:
        return self.req("get", resource, namespace, name, **kwargs)

    def update(self, resource: str, body: Object, **kwargs: Any) -> Object:
        meta = body["metadata"]
        return self.req("update", resource, meta.get("namespace", "default"), meta["name"],
                        body=copy.deepcopy(body), **kwargs)

    def delete(self, resource: str, name: str, namespace: str = "default",
               **options: Any) -> Object:
        return self.req("delete", resource, namespace, name, options=options)

    def error(self, verb: str, resource: str, namespace: str = "default", name: str = "",
              **kwargs: Any) -> ApiError:
        with pytest.raises(ApiError) as info:
            self.req(verb, resource, namespace, name, **kwargs)
        return info.value

    def settle(self) -> None:
        self.clock.run_until_idle()


def pod(name: str = "web", namespace: str = "default", **spec: Any) -> Object:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}], **spec}}


def deployment(name: str = "web", replicas: int = 2, **spec: Any) -> Object:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
                     **spec}}


def config_map(name: str = "cm", namespace: str = "default", **data: str) -> Object:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": data or {"k": "v"}}


def node(name: str = "node-1") -> Object:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
