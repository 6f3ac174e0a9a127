"""The controller-manager component: registry, choice of controllers, cache sync, public names."""

from __future__ import annotations

import pytest

import kubelab.controllers as controllers
import kubelab.viz as viz
from kubelab.cluster import COMPONENTS, Cluster
from kubelab.controllers import CONTROLLERS, ControllerManager
from tests.controllers_helpers import active_pods, deployment, pod, replica_set


def test_public_names() -> None:
    assert set(controllers.__all__) == {"CONTROLLERS", "ControllerManager", "DeploymentController",
                                        "GarbageCollector", "NamespaceController", "ReplicaSetController"}
    assert all(hasattr(controllers, name) for name in controllers.__all__)
    assert {"object_graph", "to_dot", "render_svg", "GraphView", "GraphvizMissing",
            "mark_pods_ready", "keep_pods_ready"} <= set(viz.__all__)
    assert all(hasattr(viz, name) for name in viz.__all__)
    descriptor = COMPONENTS["controller-manager"]
    assert (descriptor.constructor, descriptor.user) == (controllers.ControllerManager,
                                                         "system:kube-controller-manager")


def test_the_manager_runs_the_registered_controllers() -> None:
    c = Cluster(nodes=1, components=["controller-manager"])
    cm = c.components["controller-manager"]
    # Every registered controller but those kubelab disables by default (the anatomy's).
    assert set(cm.controllers) == {n for n, d in CONTROLLERS.items()
                                   if not d.disabled_by_default} >= {
        "replicaset-controller", "deployment-controller", "garbage-collector-controller",
        "namespace-controller"}
    assert "endpoints-controller" in CONTROLLERS and "endpoints-controller" not in cm.controllers
    assert "waiting for caches" in repr(cm)
    c.run(1)
    assert cm.running and [r.verb for r in c.trace.filter(component="controller-manager",
                                                          verb="caches-synced")] == ["caches-synced"]


def test_a_chosen_subset_through_the_replace_seam() -> None:
    c = Cluster(nodes=1, components=["controller-manager"], replace={
        "controller-manager": lambda ctx: ControllerManager(ctx, controllers=["replicaset-controller"])})
    c.apply(deployment(replicas=2))
    c.client.create(replica_set("plain", 2))
    c.run(3)
    assert c.get("replicasets", label_selector="app=web") == []  # no Deployment controller
    assert len(active_pods(c, "app=plain")) == 2
    # (kubelab runs no bootstrap-signer: an upstream name it does not know)
    with pytest.raises(ValueError, match=r"unknown controller\(s\) \['bootstrapsigner'\]"):
        Cluster(nodes=0, components=["controller-manager"], replace={
            "controller-manager": lambda ctx: ControllerManager(ctx, controllers=["bootstrapsigner"])})


def test_a_manager_started_late_adopts_what_exists_instead_of_creating_more() -> None:
    c = Cluster(nodes=1, components=[])
    rs = c.client.create(replica_set("web", 3))
    for i in range(3):
        c.client.create(pod(f"early-{i}", {"app": "web"}))
    c.faults.restart("controller-manager")  # never started: starts now, lists, waits for sync
    c.run(3)
    pods = active_pods(c, "app=web")
    assert sorted(p["metadata"]["name"] for p in pods) == ["early-0", "early-1", "early-2"]
    assert {p["metadata"]["ownerReferences"][0]["uid"] for p in pods} == {rs["metadata"]["uid"]}


# --- sa --- IsControllerEnabled's cases (cmd/kube-controller-manager/app/controllermanager_test.go
# TestIsControllerEnabled), with kubelab's two controllers that are disabled by default.
@pytest.mark.parametrize(("flags", "name", "enabled"), [
    (["*"], "replicaset-controller", True),
    (["*"], "serviceaccount-controller", False),  # disabled by default
    (["*", "serviceaccount-controller"], "serviceaccount-controller", True),
    (["*", "serviceaccount"], "serviceaccount-controller", True),  # by its alias
    (["*", "-replicaset"], "replicaset-controller", False),
    (["-replicaset", "*"], "replicaset-controller", False),
    (["*", "-serviceaccount-controller"], "serviceaccount-controller", False),
    (["replicaset", "-replicaset", "*"], "replicaset-controller", True),  # the first one decides
    (["-replicaset-controller"], "deployment-controller", False),  # no star: nothing else
])
def test_which_controllers_the_flag_enables(flags: list[str], name: str, enabled: bool) -> None:
    from kubelab.controllers.manager import enabled_controllers

    assert (name in enabled_controllers(flags)) is enabled


def test_an_unknown_controller_in_the_flag_is_refused() -> None:
    from kubelab.controllers.manager import enabled_controllers

    with pytest.raises(ValueError, match="unknown controller"):
        enabled_controllers(["*", "-nope"])


# --- endpoints ---
def test_controllers_flag_star_minus_and_disabled_by_default() -> None:
    """IsControllerEnabled: a name (or alias) wins, then -name, then "*" for the rest of the
    controllers not disabled by default."""
    from kubelab.controllers.manager import enabled_controllers
    star = enabled_controllers(["*"])
    assert "endpoints-controller" not in star and "deployment-controller" in star
    fewer = enabled_controllers(["*", "-replicaset"])
    assert fewer == [n for n in star if n != "replicaset-controller"]
    assert enabled_controllers(["*", "endpoint"]) == [
        n for n in CONTROLLERS if n in star or n == "endpoints-controller"]
    assert enabled_controllers(["endpoint"]) == ["endpoints-controller"]  # no "*": just those named
    with pytest.raises(ValueError, match=r"unknown controller\(s\) \['nope'\]"):
        enabled_controllers(["*", "-nope"])
