"""The PersistentVolumeClaimResize admission plugin (plugin/pkg/admission/storage/
persistentvolume/resize/admission.go): a claim grows only when bound and its class allows it."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.admission.chain import UPDATE, Attributes
from kubelab.apiserver.admission.resize import PersistentVolumeClaimResize
from kubelab.cluster.anatomy import STANDARD_STORAGE_CLASS

REFUSED = "only dynamically provisioned pvc can be resized and the storageclass that " \
    "provisions the pvc must support resize"


def objects(expandable: bool | None) -> str:
    allow = "" if expandable is None else f"allowVolumeExpansion: {str(expandable).lower()}\n"
    return f"""apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: lab}}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
{allow}---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv1}}
spec:
  capacity: {{storage: 5Gi}}
  accessModes: [ReadWriteOnce]
  storageClassName: lab
  hostPath: {{path: /data}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: lab
  resources: {{requests: {{storage: 1Gi}}}}
"""


def grow(c: Cluster, size: str) -> dict[str, Any]:
    return c.client.patch("persistentvolumeclaims", "data",
                          {"spec": {"resources": {"requests": {"storage": size}}}})


@pytest.mark.parametrize("expandable", [None, False])
def test_a_class_that_does_not_allow_expansion_refuses_a_larger_claim(expandable: bool | None) -> None:
    c = Cluster(nodes=1)
    c.apply(objects(expandable))
    c.clock.run(until=5)
    assert c.client.get("persistentvolumeclaims", "data")["status"]["phase"] == "Bound"
    with pytest.raises(ApiError) as err:
        grow(c, "2Gi")
    assert (err.value.code, err.value.reason, err.value.message) == \
        (403, "Forbidden", f'persistentvolumeclaims "data" is forbidden: {REFUSED}')
    assert c.client.get("persistentvolumeclaims", "data")["spec"]["resources"]["requests"] == \
        {"storage": "1Gi"}  # nothing was written


def test_a_bound_claim_of_an_expandable_class_may_grow() -> None:
    c = Cluster(nodes=1)
    c.apply(objects(True))
    c.clock.run(until=5)
    assert grow(c, "3Gi")["spec"]["resources"]["requests"] == {"storage": "3Gi"}
    grow(c, "3Gi")  # the same size is no expansion


def test_an_unbound_claim_may_not_grow() -> None:
    """Validation runs before the validating plugins: an unbound claim's spec is immutable
    first (the plugin's own "Only bound ..." is for what validation lets through, below)."""
    c = Cluster(nodes=1)
    c.apply(objects(True).replace("storageClassName: lab\n  hostPath",
                                  "storageClassName: other\n  hostPath"))
    c.clock.run(until=5)
    assert c.client.get("persistentvolumeclaims", "data")["status"]["phase"] == "Pending"
    with pytest.raises(ApiError) as err:
        grow(c, "2Gi")
    assert err.value.message == 'PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is ' \
        'immutable after creation except resources.requests and volumeAttributesClassName for bound claims'


class _Lister:
    def __init__(self, classes: dict[str, dict[str, Any]]) -> None:
        self.classes = classes

    def get(self, resource: str, namespace: str, name: str, group: str = "") -> dict[str, Any] | None:
        return self.classes.get(name) if resource == "storageclasses" else None

    def namespace_phase(self, name: str) -> str | None:
        return "Active"


def claim(size: str, cls: str | None, phase: str = "Bound", beta: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "data", **({"annotations": {
        "volume.beta.kubernetes.io/storage-class": beta}} if beta is not None else {})},
        "spec": {"resources": {"requests": {"storage": size}}}, "status": {"phase": phase}}
    if cls is not None:
        obj["spec"]["storageClassName"] = cls
    return obj


def admit(new: dict[str, Any], old: dict[str, Any], classes: dict[str, dict[str, Any]]) -> str:
    attrs = Attributes(UPDATE, "persistentvolumeclaims", "", "v1", "PersistentVolumeClaim", "",
                       "default", "data", new, old, None, _Lister(classes))  # type: ignore[arg-type]
    try:
        PersistentVolumeClaimResize().validate(attrs)
    except ApiError as err:
        return err.message.partition("is forbidden: ")[2]
    return "allowed"


EXPANDABLE = {"metadata": {"name": "fast"}, "allowVolumeExpansion": True}
# (new claim, old claim, the answer): allowResize's cases
RESIZE_CASES = [
    (claim("2Gi", "standard"), claim("1Gi", "standard"), REFUSED),   # kind's default class
    (claim("2Gi", "fast"), claim("1Gi", "fast"), "allowed"),
    (claim("1Gi", "standard"), claim("2Gi", "standard"), "allowed"),  # a shrink is validation's
    (claim("2Gi", None), claim("1Gi", None), REFUSED),                # no class
    (claim("2Gi", "gone"), claim("1Gi", "gone"), REFUSED),            # the class is missing
    (claim("2Gi", "standard", beta="fast"), claim("1Gi", "standard", beta="fast"), "allowed"),
    (claim("2Gi", "fast"), claim("1Gi", "fast", phase="Pending"),
     "Only bound persistent volume claims can be expanded"),
]


@pytest.mark.parametrize(("new", "old", "answer"), RESIZE_CASES)
def test_allow_resize_cases(new: dict[str, Any], old: dict[str, Any], answer: str) -> None:
    classes = {"standard": STANDARD_STORAGE_CLASS, "fast": EXPANDABLE}
    assert "allowVolumeExpansion" not in STANDARD_STORAGE_CLASS  # kind ships it so
    assert admit(new, old, classes) == answer
