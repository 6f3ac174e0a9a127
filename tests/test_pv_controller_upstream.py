"""The PV controller against rows of upstream's own tables: pkg/controller/volume/
persistentvolume/binder_test.go (TestSync: the "1-x" rows of syncUnboundClaim, "2-x" of claims
pre-bound to a volume, "3-x" of bound claims, "4-x" of syncVolume) transcribed as data. Each
row starts a controller manager on the given volumes and claims and checks where they end:
the volume's phase and claim, the claim's phase and volume, and the event upstream expects."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster

CLASSLESS = ""


def volume(name: str, size: str, claim: str = "", claim_uid: str = "",
           policy: str = "Retain") -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                            "persistentVolumeReclaimPolicy": policy, "storageClassName": CLASSLESS,
                            "hostPath": {"path": f"/mnt/{name}"}}
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim,
                            "uid": claim_uid, "apiVersion": "v1"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def claim(name: str, size: str, volume_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "storageClassName": CLASSLESS,
                            "resources": {"requests": {"storage": size}}}
    if volume_name:
        spec["volumeName"] = volume_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


# (row, volumes, claims, {volume: (phase, claim name)}, {claim: (phase, volume name)}, event)
ROWS = [
    ("1-1 syncClaim with no volume: noop", [], [claim("claim1-1", "1Gi")],
     {}, {"claim1-1": ("Pending", "")}, "FailedBinding"),
    ("1-2 syncClaim binds to a matching unbound volume",
     [volume("volume1-2", "1Gi")], [claim("claim1-2", "1Gi")],
     {"volume1-2": ("Bound", "claim1-2")}, {"claim1-2": ("Bound", "volume1-2")}, ""),
    ("1-3 syncClaim does not do anything when there is no matching volume",
     [volume("volume1-3", "1Gi", "other", "other-uid")], [claim("claim1-3", "1Gi")],
     {"volume1-3": ("Released", "other")}, {"claim1-3": ("Pending", "")}, "FailedBinding"),
    ("1-4 syncClaim does not bind to a smaller volume",
     [volume("volume1-4", "1Gi")], [claim("claim1-4", "10Gi")],
     {"volume1-4": ("Available", "")}, {"claim1-4": ("Pending", "")}, "FailedBinding"),
    ("1-5 syncClaim binds to a volume that is pre-bound to it",
     [volume("volume1-5", "10Gi", "claim1-5")], [claim("claim1-5", "1Gi")],
     {"volume1-5": ("Bound", "claim1-5")}, {"claim1-5": ("Bound", "volume1-5")}, ""),
    ("1-6 syncClaim does not bind to a volume pre-bound to another claim",
     [volume("volume1-6", "10Gi", "claim1-6-other")], [claim("claim1-6", "1Gi")],
     {"volume1-6": ("Available", "claim1-6-other")}, {"claim1-6": ("Pending", "")}, "FailedBinding"),
    ("2-1 syncClaim with claim pre-bound to a volume that does not exist",
     [], [claim("claim2-1", "1Gi", "volume2-1")], {}, {"claim2-1": ("Pending", "volume2-1")}, ""),
    ("2-3 syncClaim binds a pre-bound claim to its Available volume",
     [volume("volume2-3", "1Gi")], [claim("claim2-3", "1Gi", "volume2-3")],
     {"volume2-3": ("Bound", "claim2-3")}, {"claim2-3": ("Bound", "volume2-3")}, ""),
    ("2-7 syncClaim pre-bound to a volume bound to another claim",
     [volume("volume2-7", "1Gi", "claim2-7-other", "other-uid")], [claim("claim2-7", "1Gi", "volume2-7")],
     {"volume2-7": ("Released", "claim2-7-other")}, {"claim2-7": ("Pending", "volume2-7")},
     "FailedBinding"),
    ("4-1 syncVolume with a volume bound to a claim that does not exist: Released",
     [volume("volume4-1", "1Gi", "claim4-1", "deleted-uid")], [],
     {"volume4-1": ("Released", "claim4-1")}, {}, ""),
    ("4-5 syncVolume Delete of a volume no plugin can delete: Failed",
     [volume("volume4-5", "1Gi", "claim4-5", "deleted-uid", policy="Delete")], [],
     {"volume4-5": ("Failed", "claim4-5")}, {}, "VolumeFailedDelete"),
]


@pytest.mark.parametrize(("row", "volumes", "claims", "want_volumes", "want_claims", "event"),
                         ROWS, ids=[r[0].split(" ")[0] for r in ROWS])
def test_sync(row: str, volumes: list[dict[str, Any]], claims: list[dict[str, Any]],
              want_volumes: dict[str, tuple[str, str]], want_claims: dict[str, tuple[str, str]],
              event: str) -> None:
    c = Cluster(nodes=0, components=["controller-manager"], seed=12)
    for obj in volumes + claims:
        c.client.create(obj)
    c.run(20)
    for name, (phase, claim_name) in want_volumes.items():
        got = c.client.get("persistentvolumes", name)
        assert (got["status"]["phase"], (got["spec"].get("claimRef") or {}).get("name", "")) == \
            (phase, claim_name), row
    for name, (phase, volume_name) in want_claims.items():
        got = c.client.get("persistentvolumeclaims", name, "default")
        assert (got["status"]["phase"], got["spec"].get("volumeName", "")) == (phase, volume_name), row
    if event:
        reasons = {e["reason"] for e in c.client.list("events", "default")["items"]}
        reasons |= {e["reason"] for e in c.client.list("events")["items"]}
        assert event in reasons, row
