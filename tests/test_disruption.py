"""PodDisruptionBudgets: the disruption controller's status (after disruption_test.go's cases:
minAvailable and maxUnavailable as numbers and percentages, scale from the pods' controller,
unmanaged pods) and the eviction subresource that honours it (eviction_test.go: 429 with the
budget's cause, the DisruptionTarget condition, unready pods, pods that can ignore the budget)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.controllers.disruption.disruption import get_scaled_value_from_int_or_percent

Object = dict[str, Any]
VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def pdb(name: str = "web", app: str = "web", **spec: Any) -> Object:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}


def evict(c: Cluster, name: str) -> Object:
    client = c.client
    return client._send(client._request(  # what client-go's EvictV1 sends
        "create", client.resource("pods"), "default", name, subresource="eviction",
        body={"apiVersion": "policy/v1", "kind": "Eviction",
              "metadata": {"name": name, "namespace": "default"}}))


def live_pods(c: Cluster, app: str = "web") -> list[str]:
    return sorted(p["metadata"]["name"] for p in c.get("pods", label_selector=f"app={app}")
                  if not p["metadata"].get("deletionTimestamp"))


@pytest.mark.parametrize(("value", "total", "up", "expected"), [
    (2, 10, True, 2), ("50%", 3, True, 2), ("50%", 3, False, 1), ("0%", 5, True, 0),
    ("100%", 7, True, 7), ("34%", 3, True, 2)])
def test_get_scaled_value_from_int_or_percent(value: int | str, total: int, up: bool,
                                              expected: int) -> None:
    assert get_scaled_value_from_int_or_percent(value, total, up) == expected


# spec, expected (expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed)
BUDGETS = [
    ({"minAvailable": 2}, (3, 2, 3, 1)),
    ({"minAvailable": 3}, (3, 3, 3, 0)),
    ({"minAvailable": "50%"}, (3, 2, 3, 1)),  # rounded up: 1.5 -> 2
    ({"minAvailable": "100%"}, (3, 3, 3, 0)),
    ({"maxUnavailable": 1}, (3, 2, 3, 1)),
    ({"maxUnavailable": "34%"}, (3, 1, 3, 2)),  # 1.02 -> 2 may be unavailable
    ({"maxUnavailable": 0}, (3, 3, 3, 0)),
    ({"maxUnavailable": "100%"}, (3, 0, 3, 3)),
]


def test_budget_status_for_a_deployment_of_three() -> None:
    """One Deployment and one budget per case: a pod's events wake only the first budget
    that selects it (getPdbForPod), so budgets must not share pods."""
    c = Cluster(nodes=2)
    for i, (spec, _) in enumerate(BUDGETS):
        c.kubectl(f"create deployment d{i} --image=nginx:1.27 --replicas=3")
        c.apply(pdb(f"d{i}", app=f"d{i}", **spec))
    c.run(30)
    for i, (spec, expected) in enumerate(BUDGETS):
        st = c.get("poddisruptionbudgets", f"d{i}")["status"]
        got = (st["expectedPods"], st["desiredHealthy"], st["currentHealthy"],
               st["disruptionsAllowed"])
        assert got == expected, spec
        (cond,) = st["conditions"]
        assert (cond["type"], cond["status"], cond["reason"]) == (
            ("DisruptionAllowed", "True", "SufficientPods") if expected[3] else
            ("DisruptionAllowed", "False", "InsufficientPods"))
        assert st["observedGeneration"] == 1
    out = str(c.kubectl("get pdb")).splitlines()
    assert out[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED",
                              "DISRUPTIONS", "AGE"]
    assert out[1].split() == ["d0", "2", "N/A", "1", "30s"]
    assert out[5].split() == ["d4", "N/A", "1", "1", "30s"]


def test_two_budgets_for_one_pod_are_warned_about() -> None:
    c = Cluster(nodes=1)
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=1")
    c.apply(pdb("a", minAvailable=1))
    c.apply(pdb("b", maxUnavailable=1))
    c.run(20)
    messages = {e["message"] for e in c.get("events") if e["reason"] == "MultiplePodDisruptionBudgets"}
    (pod,) = live_pods(c)
    assert messages == {f'Pod "default"/"{pod}" matches multiple PodDisruptionBudgets.  Chose "a" '
                        "arbitrarily."}
    with pytest.raises(ApiError) as err:
        evict(c, pod)
    assert (err.value.code, err.value.message) == (500, "This pod has more than one "
                                                   "PodDisruptionBudget, which the eviction "
                                                   "subresource does not support.")


def test_a_percentage_follows_the_deployments_scale_not_the_pods_seen() -> None:
    c = Cluster(nodes=2)
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=4")
    c.apply(pdb(minAvailable="50%"))
    c.run(30)
    c.kubectl("scale deployment web --replicas=6")
    c.run(0.5)  # the Deployment says 6 before its new pods exist
    st = c.get("poddisruptionbudgets", "web")["status"]
    assert (st["expectedPods"], st["desiredHealthy"]) == (6, 3)
    c.run(30)
    st = c.get("poddisruptionbudgets", "web")["status"]
    assert (st["currentHealthy"], st["disruptionsAllowed"]) == (6, 3)


def test_unmanaged_pods_with_a_percentage_are_warned_about() -> None:
    c = Cluster(nodes=1)
    c.kubectl("run lone --image=nginx:1.27 --labels=app=lone")
    c.apply(pdb("lone", app="lone", minAvailable="50%"))
    c.apply(pdb("nobody", app="nobody", minAvailable=1))
    c.run(20)
    reasons = {(e["involvedObject"]["name"], e["reason"]) for e in c.get("events")
               if e["involvedObject"]["kind"] == "PodDisruptionBudget"}
    assert ("lone", "UnmanagedPods") in reasons and ("nobody", "NoPods") in reasons
    st = c.get("poddisruptionbudgets", "lone")["status"]
    assert (st["expectedPods"], st["disruptionsAllowed"]) == (0, 0)  # nothing is expected


def test_eviction_spends_the_budget_then_answers_429() -> None:
    c = Cluster(nodes=2)
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=3")
    c.apply(pdb(minAvailable=2))
    c.run(30)
    first, second = live_pods(c)[:2]
    assert evict(c, first)["status"] == "Success"
    pod = c.get("pods", first)
    assert pod["metadata"]["deletionTimestamp"]
    (cond,) = [x for x in pod["status"]["conditions"] if x["type"] == "DisruptionTarget"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "EvictionByEvictionAPI", "Eviction API: evicting")
    st = c.get("poddisruptionbudgets", "web")["status"]
    assert st["disruptionsAllowed"] == 0 and list(st["disruptedPods"]) == [first]
    with pytest.raises(ApiError) as err:
        evict(c, second)
    assert (err.value.code, err.value.reason, err.value.message) == (429, "TooManyRequests", VIOLATES)
    assert err.value.details["causes"] == [{
        "reason": "DisruptionBudget",
        "message": "The disruption budget web needs 2 healthy pods and has 3 currently"}]
    assert not c.get("pods", second)["metadata"].get("deletionTimestamp")  # nothing lost
    c.run(60)  # the replacement is Ready: one disruption is allowed again
    st = c.get("poddisruptionbudgets", "web")["status"]
    assert (st["currentHealthy"], st["disruptionsAllowed"]) == (3, 1) and "disruptedPods" not in st
    assert evict(c, second)["status"] == "Success"


def test_a_budget_not_yet_observed_refuses_with_retry_after() -> None:
    c = Cluster(nodes=1, components=["scheduler", "kubelet"])  # nobody observes the budget
    c.kubectl("run web --image=nginx:1.27 --labels=app=web")
    c.run(20)
    c.apply(pdb(minAvailable=0))
    with pytest.raises(ApiError) as err:
        evict(c, "web")
    assert err.value.code == 429 and err.value.details["retryAfterSeconds"] == 10
    assert err.value.details["causes"][0]["message"] == \
        "The disruption budget web is still being processed by the server."


def test_unready_and_pending_pods() -> None:
    c = Cluster(nodes=1)
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=2")
    c.apply(pdb(minAvailable=2))
    c.apply(pdb("sick", app="sick", minAvailable=1, unhealthyPodEvictionPolicy="AlwaysAllow"))
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "sick", "labels": {"app": "sick"},
        "annotations": {"kubelab.dev/behavior": "unready=0"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                 "readinessProbe": {"httpGet": {"port": 80}}}]}})
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stuck", "labels": {"app": "web"}},
             "spec": {"nodeSelector": {"no": "such-node"},
                      "containers": [{"name": "c", "image": "nginx:1.27"}]}})
    c.run(40)
    assert c.get("pods", "sick")["status"]["phase"] == "Running"
    assert evict(c, "sick")["status"] == "Success"  # unready, and the policy says AlwaysAllow
    assert evict(c, "stuck")["status"] == "Success"  # Pending: it disrupts nothing
    with pytest.raises(ApiError) as err:
        evict(c, live_pods(c)[0])
    assert err.value.code == 429


def test_describe_pdb() -> None:
    c = Cluster(nodes=1)
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=2")
    c.apply(pdb(maxUnavailable="50%"))
    c.run(30)
    lines = str(c.kubectl("describe pdb web")).splitlines()
    assert [line.split() for line in lines[:9]] == [
        ["Name:", "web"], ["Namespace:", "default"], ["Max", "unavailable:", "50%"],
        ["Selector:", "app=web"], ["Status:"], ["Allowed", "disruptions:", "1"],
        ["Current:", "2"], ["Desired:", "1"], ["Total:", "2"]]


def test_kubelabs_drain_waits_for_the_budget_every_5_seconds() -> None:
    c = Cluster(nodes=2)
    c.kubectl("cordon node-2")  # both replicas on node-1
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=2")
    c.apply(pdb(minAvailable=1))
    c.run(30)
    c.kubectl("uncordon node-2")
    first, second = live_pods(c)
    start = c.clock.now
    out = str(c.kubectl("drain node-1 --ignore-daemonsets --timeout=2m"))
    # kind's add-ons: kindnet's and kube-proxy's pods are ignored, coredns' evicted beside web's
    lines = out.splitlines()
    assert lines[1].startswith("Warning: ignoring DaemonSet-managed Pods: kube-system/kindnet-")
    assert [line for line in lines[:1] + lines[2:] if "coredns-" not in line] == [
        "node/node-1 cordoned", f"evicting pod default/{first}", f"evicting pod default/{second}",
        f'error when evicting pods/"{second}" -n "default" (will retry after 5s): {VIOLATES}',
        f"pod/{first} evicted", f"pod/{second} evicted", "node/node-1 drained"]
    assert c.clock.now - start >= 5  # it waited on the cluster's clock
    assert {p["spec"]["nodeName"] for p in c.get("pods", label_selector="app=web")} == {"node-2"}


def test_drain_refuses_unmanaged_pods_and_gives_up_at_its_timeout() -> None:
    c = Cluster(nodes=1)
    c.kubectl("run lone --image=nginx:1.27 --labels=app=lone")
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=1")
    c.apply(pdb(minAvailable=1))
    c.run(30)
    out = str(c.kubectl("drain node-1 --ignore-daemonsets"))  # (kind's kindnet and kube-proxy)
    assert out.splitlines()[1:] == [
        'error: unable to drain node "node-1" due to error: cannot delete Pods that declare no '
        "controller (use --force to override): default/lone, continuing command...",
        "There are pending nodes to be drained:", " node-1",
        "cannot delete Pods that declare no controller (use --force to override): default/lone"]
    c.kubectl("delete pod lone")
    c.run(35)  # a terminating pod without a controller still stops a drain: let it go
    (web,) = live_pods(c)
    out = c.kubectl("drain node-1 --ignore-daemonsets --timeout=12s")
    retries = [line for line in out.splitlines() if "will retry after 5s" in line]
    assert len(retries) == 3  # at 0 s, 5 s and 10 s; the next would pass the timeout
    assert out.splitlines()[-1] == (f'error when evicting pods/"{web}" -n "default": global '
                                    "timeout reached: 12s")
    assert out.exit_code == 1


WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"scale": {"specReplicasPath": ".spec.replicas",
                                                      "statusReplicasPath": ".status.replicas"}},
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_a_percentage_reads_any_controllers_scale_subresource() -> None:
    """getScaleController: a custom controller's pods count against its scale, 4 here, though
    only 2 of its pods exist."""
    c = Cluster(nodes=1)
    c.apply(WIDGET_CRD)
    c.run(1)
    widget = c.client.create({"apiVersion": "example.com/v1", "kind": "Widget",
                              "metadata": {"name": "w"}, "spec": {"replicas": 4}})
    for i in range(2):
        c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"w-{i}", "labels": {"app": "w"}, "ownerReferences": [{
                "apiVersion": "example.com/v1", "kind": "Widget", "name": "w",
                "uid": widget["metadata"]["uid"], "controller": True}]},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    c.apply(pdb("w", app="w", minAvailable="50%"))
    c.run(30)
    st = c.get("poddisruptionbudgets", "w")["status"]
    assert (st["expectedPods"], st["desiredHealthy"], st["currentHealthy"],
            st["disruptionsAllowed"]) == (4, 2, 2, 0)


def test_a_budget_that_cannot_be_computed_fails_safe() -> None:
    """failSafe: the pod's controller has no scale (a ConfigMap, for the sake of it), so the
    budget cannot be computed and no disruption is allowed (SyncFailed)."""
    c = Cluster(nodes=1)
    owner = c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "g"}})
    c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "odd", "labels": {"app": "odd"}, "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "g",
            "uid": owner["metadata"]["uid"], "controller": True}]},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    c.apply(pdb("odd", app="odd", maxUnavailable="50%"))
    c.run(20)
    (cond,) = c.get("poddisruptionbudgets", "odd")["status"]["conditions"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False", "SyncFailed", 'found no controllers for pod "odd"')
    with pytest.raises(ApiError) as err:
        evict(c, "odd")
    assert err.value.code == 429
