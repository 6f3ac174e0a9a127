"""StorageClass, PersistentVolume and PersistentVolumeClaim as the API serves them: defaults,
the DefaultStorageClass admission plugin, validation in upstream's words (pkg/apis/core/
validation ValidatePersistentVolume*, pkg/apis/storage/validation), the Tables of printers.go."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.apis.validation.storage import (
    IMMUTABLE_SPEC,
    validate_persistent_volume,
    validate_persistent_volume_claim,
    validate_persistent_volume_claim_update,
    validate_storage_class,
    validate_storage_class_update,
)
from kubelab.apiserver.printers.storage import access_modes_as_string
from kubelab.cluster.anatomy import STANDARD_STORAGE_CLASS


def pvc(name: str = "data", size: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                     **spec}}


def pv(name: str = "pv1", size: str = "2Gi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": "/data"}, **spec}}


def _errors(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


@pytest.mark.parametrize(("modes", "expected"), [
    (["ReadWriteOnce"], "RWO"),
    (["ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany"], "RWO,ROX,RWX"),  # upstream's order
    (["ReadWriteOncePod"], "RWOP"),
    (["ReadWriteOnce", "ReadWriteOnce"], "RWO"),
    ([], ""),
])
def test_access_modes_print_as_upstream(modes: list[str], expected: str) -> None:
    assert access_modes_as_string(modes) == expected


@pytest.mark.parametrize(("obj", "expected"), [
    (pv(accessModes=[]), ["spec.accessModes: Required value"]),
    (pv(capacity={}), ["spec.capacity: Required value",
                       'spec.capacity: Unsupported value: {}: supported values: "storage"']),
    (pv(size="0"), ['spec.capacity[storage]: Invalid value: "0": must be greater than zero']),
    (pv(persistentVolumeReclaimPolicy="Keep"), [
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: '
        '"Delete", "Recycle", "Retain"']),
    (pv(accessModes=["ReadWriteOncePod", "ReadOnlyMany"]), [
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"]),
    (pv(hostPath=None), ["spec: Required value: must specify a volume type"]),
    (pv(local={"path": "/mnt/disk"}), [
        "spec.local: Forbidden: may not specify more than 1 volume type",
        "spec.nodeAffinity: Required value: Local volumes require node affinity"]),
])
def test_persistent_volume_validation(obj: dict[str, Any], expected: list[str]) -> None:
    assert _errors(validate_persistent_volume(obj)) == expected


def test_persistent_volume_claim_validation() -> None:
    bad = pvc(accessModes=[])
    del bad["spec"]["resources"]
    assert _errors(validate_persistent_volume_claim(bad)) == [
        "spec.accessModes: Required value: at least 1 access mode is required",
        "spec.resources[storage]: Required value"]
    assert validate_persistent_volume_claim(pvc()) == []
    assert _errors(validate_persistent_volume_claim(pvc(storageClassName="Fast_Disk"))) == [
        'spec.storageClassName: Invalid value: "Fast_Disk": a lowercase RFC 1123 subdomain must '
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]


def _with_status(obj: dict[str, Any], phase: str, capacity: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if capacity:
        status["capacity"] = {"storage": capacity}
    return {**obj, "status": status}


def test_a_claims_spec_is_immutable_but_for_what_upstream_lets_change() -> None:
    old = _with_status(pvc(storageClassName="standard"), "Pending")
    bigger = pvc("data", "2Gi", storageClassName="standard")
    # An unbound claim may not grow; a bound one may, but never below its capacity.
    assert _errors(validate_persistent_volume_claim_update(bigger, old)) == [
        f"spec: Forbidden: {IMMUTABLE_SPEC}"]
    bound = _with_status(pvc(storageClassName="standard", volumeName="pv1"), "Bound", "1Gi")
    assert validate_persistent_volume_claim_update(
        pvc("data", "2Gi", storageClassName="standard", volumeName="pv1"), bound) == []
    assert _errors(validate_persistent_volume_claim_update(
        pvc("data", "500Mi", storageClassName="standard", volumeName="pv1"), bound)) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
    # a claim bound to a bigger volume than it asked for keeps its request
    roomy = _with_status(pvc(storageClassName="", volumeName="pv1"), "Bound", "5Gi")
    assert validate_persistent_volume_claim_update(
        {**pvc(storageClassName="", volumeName="pv1"), "metadata": {"name": "data",
                                                                   "finalizers": []}}, roomy) == []
    # The binder fills volumeName in once; changing it later is refused.
    assert validate_persistent_volume_claim_update(
        pvc(storageClassName="standard", volumeName="pv1"), old) == []
    assert _errors(validate_persistent_volume_claim_update(
        pvc(storageClassName="standard", volumeName="pv2"), bound)) == [
        f"spec: Forbidden: {IMMUTABLE_SPEC}"]
    assert _errors(validate_persistent_volume_claim_update(
        pvc(storageClassName="other"), old)) == [f"spec: Forbidden: {IMMUTABLE_SPEC}"]


def test_storage_class_validation_and_immutable_fields() -> None:
    sc = {**STANDARD_STORAGE_CLASS}
    assert validate_storage_class(sc) == []
    assert _errors(validate_storage_class({**sc, "provisioner": "", "reclaimPolicy": "Recycle",
                                           "volumeBindingMode": "Later"})) == [
        "provisioner: Required value",
        'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
        '"WaitForFirstConsumer"']
    changed = {**sc, "provisioner": "example.com/nfs", "reclaimPolicy": "Retain",
               "volumeBindingMode": "Immediate", "parameters": {"x": "y"}}
    assert _errors(validate_storage_class_update(changed, sc)) == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "Immediate": field is immutable']


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    # kind's StorageClass `standard` comes with the anatomy (its add-ons).
    c = Cluster(nodes=1, seed=3)
    assert c.client.get("storageclasses", "standard")["provisioner"] == \
        STANDARD_STORAGE_CLASS["provisioner"]
    return c


def test_defaults_and_the_default_storage_class(cluster: Cluster) -> None:
    client = cluster.client
    claim = client.create(pvc("defaulted"))
    assert claim["spec"]["storageClassName"] == "standard"      # DefaultStorageClass
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["status"] == {"phase": "Pending"}
    # "" asks for no class: the plugin keeps it.
    assert client.create(pvc("classless", storageClassName=""))["spec"]["storageClassName"] == ""
    volume = client.create(pv("pv-defaults"))
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    sc = client.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                        "metadata": {"name": "plain"}, "provisioner": "example.com/disk"})
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")


def test_invalid_objects_are_refused_in_upstreams_words(cluster: Cluster) -> None:
    with pytest.raises(ApiError) as err:
        cluster.client.create(pvc("bad", "0", accessModes=["ReadWriteSometimes"]))
    assert err.value.code == 422
    assert err.value.message == (
        'PersistentVolumeClaim "bad" is invalid: [spec.accessModes: Unsupported value: '
        '"ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
        '"ReadWriteOncePod", spec.resources[storage]: Invalid value: "0": must be greater than zero]')


def test_tables_have_upstreams_columns(cluster: Cluster) -> None:
    out = cluster.kubectl("get sc,pv,pvc")
    lines = [" ".join(line.split()) for line in str(out).splitlines()]
    assert "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE" in lines
    assert any(line.startswith("storageclass.storage.k8s.io/standard (default) rancher.io/local-path "
                               "Delete WaitForFirstConsumer false") for line in lines)
    assert ("NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS "
            "VOLUMEATTRIBUTESCLASS REASON AGE") in lines
    assert "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE" in lines
    wide = cluster.kubectl("get pvc classless -o wide")
    assert "VOLUMEMODE" in str(wide) and "Filesystem" in str(wide)
