"""A custom kind through kubectl: additionalPrinterColumns (kubelab's kubectl and the
server-side Table real kubectl reads) and the scale subresource."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.cluster import Cluster

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: websites.kubelab.dev}
spec:
  group: kubelab.dev
  scope: Namespaced
  names: {plural: websites, singular: website, kind: Website, shortNames: [ws]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas,
              labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Image, type: string, jsonPath: .spec.image, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              replicas: {type: integer, minimum: 0, default: 1}
              image: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties: {type: {type: string}, status: {type: string}}
"""

SITE = """\
apiVersion: kubelab.dev/v1
kind: Website
metadata: {name: %s, namespace: default}
spec: {image: nginx:1.27}
"""


@pytest.fixture
def c() -> Cluster:
    c = Cluster(nodes=1, components=[])
    for manifest in (CRD, SITE % "blog", SITE % "shop"):
        out = c.kubectl("apply -f -", stdin=manifest)
        assert out.exit_code == 0, out
    c.run(90)
    return c


def test_kubectl_get_prints_the_printer_columns(c: Cluster) -> None:
    status: dict[str, Any] = {"replicas": 1, "conditions": [{"type": "Ready", "status": "True"}]}
    site = c.client.get("websites", "blog")
    site["status"] = status
    c.client.update_status(site)
    assert c.kubectl("get websites").splitlines() == [
        "NAME   REPLICAS   READY    AGE",
        "blog   1          True     90s",
        "shop   1          <none>   90s"]
    assert c.kubectl("get ws shop -o wide").splitlines() == [
        "NAME   REPLICAS   READY    IMAGE        AGE",
        "shop   1          <none>   nginx:1.27   90s"]


def test_the_served_table_carries_the_same_columns(c: Cluster) -> None:
    table = c.client.list("websites", "default", as_table=True)
    assert [(d["name"], d["type"], d["priority"]) for d in table["columnDefinitions"]] == [
        ("Name", "string", 0), ("Replicas", "integer", 0), ("Ready", "string", 0),
        ("Image", "string", 1), ("Age", "date", 0)]
    assert table["rows"][0]["cells"] == ["blog", "1", "<none>", "nginx:1.27", "90s"]


def test_kubectl_scale_works_through_the_custom_scale_subresource(c: Cluster) -> None:
    assert c.kubectl("scale website blog --replicas=3") == "website.kubelab.dev/blog scaled"
    assert c.client.get("websites", "blog")["spec"]["replicas"] == 3
    scale = c.client.get_scale("websites", "blog")
    assert (scale["kind"], scale["spec"], scale["status"]) == ("Scale", {"replicas": 3},
                                                               {"replicas": 0})
    # The schema still applies to what scale writes.
    assert c.kubectl("scale website blog --replicas=0") == "website.kubelab.dev/blog scaled"
    assert c.client.get("websites", "blog")["spec"]["replicas"] == 0


def test_kubectl_explain_reads_the_crd_schema(c: Cluster) -> None:
    out = c.kubectl("explain website.spec")
    assert out.exit_code == 0
    assert out.splitlines() == [
        "GROUP:      kubelab.dev", "KIND:       Website", "VERSION:    v1", "",
        "FIELD: spec <Object>", "", "", "DESCRIPTION:", "    <empty>", "FIELDS:",
        "  image\t<string> -required-", "    <no description>", "",
        "  replicas\t<integer>", "    <no description>"]
    top = c.kubectl("explain ws")
    assert "  metadata\t<ObjectMeta>\n    Standard object's metadata." in top
    assert c.kubectl("explain website.spec.nope") == 'error: field "nope" does not exist'
    assert c.kubectl("explain pods").exit_code == 1
