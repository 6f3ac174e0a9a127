"""The anatomy by default (kubelab/cluster/cluster.py `anatomy`, control_plane.py): off only for
upstream's harnesses, kind's one-node cluster untainted, kind's preloaded images, and a dead
control-plane node taking its control plane with it."""

from __future__ import annotations

import pytest

from kubelab import Cluster
from kubelab.api.errors import ConnectionFailed
from kubelab.cluster.anatomy import ADDON_IMAGES


@pytest.mark.parametrize(("kwargs", "anatomy"), [
    ({}, True), ({"components": ["scheduler"]}, False), ({"hollow": True}, False),
    ({"anatomy": False}, False), ({"components": ["scheduler"], "anatomy": True}, True)])
def test_the_default_is_off_only_for_upstreams_harnesses(kwargs: dict[str, object],
                                                        anatomy: bool) -> None:
    c = Cluster(nodes=1, **kwargs)  # type: ignore[arg-type]
    assert c.anatomy is anatomy
    assert ("control-plane" in c.node_names) is anatomy


def test_a_one_node_cluster_is_untainted_and_a_bigger_one_keeps_the_taint() -> None:
    alone, bigger = Cluster(nodes=0), Cluster(nodes=1)
    assert "taints" not in alone.client.get("nodes", "control-plane")["spec"]
    assert bigger.client.get("nodes", "control-plane")["spec"]["taints"] == [
        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]


def test_the_add_on_images_are_already_on_every_node() -> None:
    c = Cluster(nodes=1, seed=1)
    c.run(20)
    pulled = [e for e in c.events("kube-system") if e["reason"] in ("Pulling", "Pulled")]
    assert pulled and all(e["reason"] == "Pulled" and "already present on machine" in e["message"]
                          for e in pulled)
    assert all(c.runtimes["node-1"].image_status(image) is not None for image in ADDON_IMAGES.values())


def test_a_dead_control_plane_node_takes_the_api_server_and_revives_with_it() -> None:
    c = Cluster(nodes=1, seed=2)
    c.run(20)
    c.faults.kill_node("control-plane")
    assert not c.apiserver.running and "scheduler" not in c.components
    with pytest.raises(ConnectionFailed):
        c.client.list("pods", "")
    c.faults.revive_node("control-plane")
    c.run(60)
    assert c.apiserver.running and "scheduler" in c.components
    phases = {p["metadata"]["name"]: p["status"]["phase"]
              for p in c.get("pods", namespace="kube-system")}
    assert phases["kube-scheduler-control-plane"] == "Running"
