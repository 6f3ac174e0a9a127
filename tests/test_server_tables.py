"""Server-side Tables: the API server answers a get or list asked `as=Table`, and kubectl
only prints the Table it receives (pkg/endpoints/handlers/response.go, pkg/printers,
kubectl's pkg/printers/tableprinter.go)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from kubelab import Cluster
from kubelab.api.request import Request, WatchEvent, WatchHandle
from kubelab.api.resources import BUILTIN_RESOURCES, ResourceInfo, ResourceTable
from kubelab.apiserver import APIServer
from kubelab.client.client import Client
from kubelab.kubectl import kubectl
from kubelab.sim import Clock
from kubelab.store import Store

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}


def definitions(table: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return [(c["name"], c["type"], c["format"], c["priority"]) for c in table["columnDefinitions"]]


def test_the_pods_table_has_the_columns_and_cells_real_kubectl_shows() -> None:
    c = Cluster(nodes=1)
    c.apply(POD)
    c.run(30)
    table = c.client.list("pods", "default", as_table=True)
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    # printers.go podColumnDefinitions: the wide columns have priority 1.
    assert definitions(table) == [
        ("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
        ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
        ("Node", "string", "", 1), ("Nominated Node", "string", "", 1),
        ("Readiness Gates", "string", "", 1)]
    pod = c.client.get("pods", "web")
    [row] = table["rows"]
    assert row["cells"] == ["web", "1/1", "Running", "0", "30s", pod["status"]["podIP"],
                            pod["spec"]["nodeName"], "<none>", "<none>"]
    # includeObject: Metadata (the default) sends PartialObjectMetadata, None nothing, Object all.
    assert row["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": pod["metadata"]}
    assert "object" not in c.client.list("pods", "default", as_table=True,
                                         include_object="None")["rows"][0]
    assert c.client.get("pods", "web", as_table=True, include_object="Object")["rows"][0]["object"] == pod
    assert table["metadata"]["resourceVersion"] == c.client.list("pods", "default")["metadata"][
        "resourceVersion"]
    # A watch asked for Tables gets each event's object as a one-row Table.
    events: list[WatchEvent] = []
    c.client.api.watch(Request("watch", "pods", namespace="default", as_table=True,
                               token=c.client.token), events.append)
    c.run(1)
    assert events[0]["object"]["kind"] == "Table" and events[0]["object"]["rows"][0]["cells"][0] == "web"


class TableAPI:
    """A server that answers every get and list with one hand-built Table."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table
        self.requests: list[Request] = []

    def handle(self, request: Request) -> dict[str, Any]:
        self.requests.append(request)
        assert request.as_table
        return self.table

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        raise AssertionError("kubectl get does not watch")


TABLE = {
    "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "7"},
    "columnDefinitions": [
        {"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0},
        {"name": "Flavour", "type": "string", "format": "", "description": "", "priority": 0},
        {"name": "Secret Sauce", "type": "string", "format": "", "description": "", "priority": 1},
        {"name": "Age", "type": "string", "format": "", "description": "", "priority": 0}],
    "rows": [
        {"cells": ["alpha", "vanilla", "caramel", "5m"],
         "object": {"kind": "PartialObjectMetadata", "metadata": {"name": "alpha", "namespace": "a"}}},
        {"cells": ["beta-long-name", "mint\nchip", None, "12s"],
         "object": {"kind": "PartialObjectMetadata", "metadata": {"name": "beta-long-name",
                                                                  "namespace": "b"}}}]}


def test_kubectl_prints_the_table_it_receives() -> None:
    api = TableAPI(TABLE)
    client = Client(api)
    assert kubectl(client, "get pods").splitlines() == [
        "NAME             FLAVOUR   AGE",
        "alpha            vanilla   5m",
        "beta-long-name   mint...   12s"]
    # The priority-1 column shows only with -o wide.
    assert kubectl(client, "get pods -o wide").splitlines() == [
        "NAME             FLAVOUR   SECRET SAUCE   AGE",
        "alpha            vanilla   caramel        5m",
        "beta-long-name   mint...                  12s"]
    # -A adds the namespace from each row's object; several kinds put the kind before the name.
    assert kubectl(client, "get pods -A --no-headers").splitlines() == [
        "a   alpha            vanilla   5m",
        "b   beta-long-name   mint...   12s"]
    assert kubectl(client, "get pods,deploy").split("\n\n")[1].splitlines()[1].startswith(
        "deployment.apps/alpha   ")
    assert {(r.verb, r.resource, r.as_table) for r in api.requests} == {
        ("list", "pods", True), ("list", "deployments", True)}


def test_a_crds_printer_columns_come_through_the_same_path() -> None:
    c = Cluster(nodes=1, components=[])
    c.apply({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
             "metadata": {"name": "pizzas.kubelab.dev"},
             "spec": {"group": "kubelab.dev", "scope": "Namespaced",
                      "names": {"plural": "pizzas", "singular": "pizza", "kind": "Pizza"},
                      "versions": [{"name": "v1", "served": True, "storage": True,
                                    "schema": {"openAPIV3Schema": {
                                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                                    "additionalPrinterColumns": [
                                        {"name": "Crust", "type": "string", "jsonPath": ".spec.crust"},
                                        {"name": "Slices", "type": "integer", "jsonPath": ".spec.slices",
                                         "priority": 1}]}]}})
    c.run(1)
    c.apply({"apiVersion": "kubelab.dev/v1", "kind": "Pizza", "metadata": {"name": "margherita"},
             "spec": {"crust": "thin", "slices": 8}})
    table = c.client.list("pizzas", "default", as_table=True)
    assert definitions(table) == [("Name", "string", "name", 0), ("Crust", "string", "", 0),
                                  ("Slices", "integer", "", 1)]
    assert table["rows"][0]["cells"] == ["margherita", "thin", "8"]
    assert c.kubectl("get pizzas").splitlines() == ["NAME         CRUST", "margherita   thin"]
    assert c.kubectl("get pizza margherita -o wide").splitlines()[1].split() == ["margherita", "thin", "8"]
    # The CRDs themselves: 1.34's CRD registry answers with rest.NewDefaultTableConvertor.
    crds = c.client.list("customresourcedefinitions", as_table=True)
    assert definitions(crds) == [("Name", "string", "name", 0), ("Created At", "date", "", 0)]
    created = c.client.get("customresourcedefinitions", "pizzas.kubelab.dev")["metadata"]["creationTimestamp"]
    assert crds["rows"][0]["cells"] == ["pizzas.kubelab.dev", created]
    assert c.kubectl("get crd").splitlines() == ["NAME                 CREATED AT",
                                                 f"pizzas.kubelab.dev   {created}"]


def test_a_kind_without_printers_gets_the_default_table_convertor() -> None:
    clock = Clock()
    extra = ResourceInfo("podtemplates", "PodTemplate")  # kubelab has no printer for it
    server = APIServer(Store(clock), clock, random.Random(0),
                       resources=ResourceTable((*BUILTIN_RESOURCES, extra)))
    client = Client(server, server.token_for("admin"), resources=ResourceTable((*BUILTIN_RESOURCES, extra)))
    made = client.create({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "tpl"}})
    table = client.list("podtemplates", "default", as_table=True)
    # pkg/registry/rest/table.go: Name, and Created At as the RFC 3339 timestamp.
    assert definitions(table) == [("Name", "string", "name", 0), ("Created At", "date", "", 0)]
    assert table["rows"][0]["cells"] == ["tpl", made["metadata"]["creationTimestamp"]]
    assert kubectl(client, "get podtemplates").splitlines() == [
        "NAME   CREATED AT", f"tpl    {made['metadata']['creationTimestamp']}"]
