"""ResourceQuota: evaluators (pkg/quota/v1/evaluator/core), the admission plugin's table cases
(plugin/pkg/admission/resourcequota/admission_test.go), ValidateResourceQuota, the controller's
recalculation and replenishment, and the classic story: a Deployment stuck below its replicas."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError, conflict
from kubelab.api.quantity import parse_quantity
from kubelab.api.quota.core import PersistentVolumeClaimEvaluator, PodEvaluator, ServiceEvaluator
from kubelab.api.quota.generic import calculate_usage
from kubelab.api.quota.resources import parse_resource_list, to_json
from kubelab.apiserver.admission.chain import CREATE, DELETE, UPDATE, Attributes
from kubelab.apiserver.admission.resourcequota import ResourceQuota
from kubelab.apiserver.apis.validation.resourcequota import (
    validate_resource_quota,
    validate_resource_quota_update,
)


def pod(name: str = "web", requests: dict[str, str] | None = None,
        limits: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "test"},
            "spec": {"containers": [{"name": name, "image": "nginx", "resources": resources}],
                     **spec}}


def quota(name: str, hard: dict[str, str], used: dict[str, str] | None = None,
          **spec: Any) -> dict[str, Any]:
    status = {"hard": hard, "used": used} if used is not None else {}
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": name, "namespace": "test", "resourceVersion": "1"},
            "spec": {"hard": hard, **spec}, "status": status}


class _Lister:
    def __init__(self, quotas: list[dict[str, Any]]) -> None:
        self.quotas, self.written = quotas, []  # type: ignore[var-annotated]

    def get(self, *_: Any) -> None:
        return None

    def namespace_phase(self, _name: str) -> str:
        return "Active"

    def list_objects(self, resource: str, group: str = "", namespace: str = "") -> list[Any]:
        return self.quotas if resource == "resourcequotas" else []

    def update_status(self, _resource: str, _group: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.written.append(obj)
        return obj


class _Racing(_Lister):
    """A quota written by someone else meanwhile: the first status update answers 409."""

    def __init__(self, quotas: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> None:
        super().__init__(quotas)
        self.fresh, self.conflicts = fresh, 0

    def update_status(self, resource: str, group: str, obj: dict[str, Any]) -> dict[str, Any]:
        if not self.conflicts:
            self.conflicts, self.quotas = 1, self.fresh
            raise conflict("resourcequotas", obj["metadata"]["name"])
        return super().update_status(resource, group, obj)


def admit(obj: dict[str, Any], quotas: list[dict[str, Any]], *, op: str = CREATE,
          resource: str = "pods", old: dict[str, Any] | None = None, sub: str = "",
          lister: _Lister | None = None) -> tuple[str, _Lister]:
    lister = lister or _Lister(quotas)
    attrs = Attributes(op, resource, "", "v1", obj.get("kind", ""), sub, "test",
                       obj["metadata"]["name"], obj, old, None, lister)  # type: ignore[arg-type]
    try:
        ResourceQuota().validate(attrs)
    except ApiError as err:
        assert err.code == 403
        return err.message.partition("is forbidden: ")[2], lister
    return "allowed", lister


def used(lister: _Lister) -> dict[str, str]:
    assert len(lister.written) == 1
    return dict(lister.written[0]["status"]["used"])


# ------------------------------------------------------------------ admission

def test_admit_below_quota_limit_charges_used() -> None:
    q = quota("quota", {"cpu": "3", "memory": "100Gi", "pods": "5"},
              {"cpu": "1", "memory": "50Gi", "pods": "3"})
    said, lister = admit(pod(requests={"cpu": "100m", "memory": "2Gi"},
                             limits={"cpu": "100m", "memory": "2Gi"}), [q])
    assert said == "allowed"
    assert used(lister) == {"cpu": "1100m", "memory": "52Gi", "pods": "4"}


def test_admit_exceed_quota_limit_in_upstreams_words() -> None:
    q = quota("quota", {"pods": "2"}, {"pods": "2"})
    said, lister = admit(pod(), [q])
    assert said == "exceeded quota: quota, requested: pods=1, used: pods=2, limited: pods=2"
    assert not lister.written
    q = quota("compute", {"cpu": "3", "memory": "100Gi", "pods": "5"},
              {"cpu": "1", "memory": "50Gi", "pods": "3"})
    said, _ = admit(pod(requests={"cpu": "3", "memory": "60Gi"}, limits={"cpu": "3", "memory": "60Gi"}), [q])
    assert said == ("exceeded quota: compute, requested: cpu=3,memory=60Gi, used: cpu=1,memory=50Gi, "
                    "limited: cpu=3,memory=100Gi")


def test_admit_enforce_quota_constraints() -> None:
    """TestAdmitEnforceQuotaConstraints: a quota on limits makes every container state them."""
    q = quota("quota", {"cpu": "3", "memory": "100Gi", "limits.memory": "200Gi", "pods": "5"},
              {"cpu": "1", "memory": "50Gi", "limits.memory": "100Gi", "pods": "3"})
    said, _ = admit(pod(requests={"cpu": "100m", "memory": "2Gi"}), [q])
    assert said == "failed quota: quota: must specify limits.memory for: web"
    q = quota("quota", {"limits.cpu": "1", "requests.memory": "1Gi"},
              {"limits.cpu": "0", "requests.memory": "0"})
    two = pod("a")
    two["spec"]["containers"].append({"name": "b", "image": "nginx"})
    said, _ = admit(two, [q])
    assert said == ("failed quota: quota: must specify limits.cpu for: a,b; "
                    "must specify requests.memory for: a,b")


def test_a_conflicting_quota_write_is_checked_again_on_the_fresh_quota() -> None:
    """checkQuotas' retry: the 409 re-reads the quotas; the request is judged on what they say."""
    stale = [quota("quota", {"pods": "2"}, {"pods": "0"})]
    said, lister = admit(pod(), [], lister=_Racing(stale, [quota("quota", {"pods": "2"}, {"pods": "1"})]))
    assert said == "allowed" and used(lister) == {"pods": "2"}
    said, lister = admit(pod(), [], lister=_Racing(stale, [quota("quota", {"pods": "2"}, {"pods": "2"})]))
    assert said == "exceeded quota: quota, requested: pods=1, used: pods=2, limited: pods=2"
    assert not lister.written


def test_status_unknown_until_the_controller_counted() -> None:
    q = quota("quota", {"pods": "5"}, {})
    said, _ = admit(pod(), [q])
    assert said == "status unknown for quota: quota, resources: pods"
    # Before the controller wrote status.hard, the quota limits nothing (Matches reads status).
    assert admit(pod(), [quota("fresh", {"pods": "0"})])[0] == "allowed"


def test_ignores_delete_subresources_and_namespaces_without_quota() -> None:
    full = quota("quota", {"pods": "0"}, {"pods": "0"})
    assert admit(pod(), [full], op=DELETE)[0] == "allowed"
    assert admit(pod(), [full], sub="status", op=UPDATE, old=pod())[0] == "allowed"
    assert admit(pod(), [])[0] == "allowed"
    event = {"kind": "Event", "metadata": {"name": "e", "namespace": "test"}}
    assert admit(event, [quota("q", {"count/events": "0"}, {"count/events": "0"})],
                 resource="events")[0] == "allowed"  # DefaultIgnoredResources
    # An update of a pod changes no usage (Handles: create only).
    assert admit(pod(), [full], op=UPDATE, old=pod())[0] == "allowed"


def test_unrelated_resource_over_quota_does_not_block() -> None:
    """TestAdmitWhenUnrelatedResourceExceedsQuota."""
    q = quota("quota", {"services": "3", "pods": "4"}, {"services": "4", "pods": "1"})
    said, lister = admit(pod(), [q])
    assert said == "allowed" and used(lister) == {"pods": "2", "services": "4"}


def test_scopes_best_effort_and_terminating() -> None:
    best_effort = quota("be", {"pods": "1"}, {"pods": "1"}, scopes=["BestEffort"])
    # A burstable pod is not in the BestEffort quota's scope.
    assert admit(pod(requests={"cpu": "100m"}), [best_effort])[0] == "allowed"
    assert admit(pod(), [best_effort])[0].startswith("exceeded quota: be,")
    terminating = quota("t", {"pods": "1"}, {"pods": "1"}, scopes=["Terminating"])
    assert admit(pod(), [terminating])[0] == "allowed"
    assert admit(pod(activeDeadlineSeconds=60), [terminating])[0].startswith("exceeded quota: t,")
    gold = quota("gold", {"pods": "0"}, {"pods": "0"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["gold"]}]})
    assert admit(pod(priorityClassName="silver"), [gold])[0] == "allowed"
    assert admit(pod(priorityClassName="gold"), [gold])[0].startswith("exceeded quota: gold,")


def test_object_counts_and_services_update_delta() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "test"}}
    q = quota("objects", {"configmaps": "1", "count/configmaps": "1"},
              {"configmaps": "1", "count/configmaps": "1"})
    assert admit(cm, [q], resource="configmaps")[0] == ("exceeded quota: objects, requested: "
                                                        "configmaps=1,count/configmaps=1, used: "
                                                        "configmaps=1,count/configmaps=1, limited: "
                                                        "configmaps=1,count/configmaps=1")
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "test",
                                                               "resourceVersion": "3"},
           "spec": {"type": "ClusterIP", "ports": [{"port": 80}]}}
    node_port = {**svc, "spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 443}]}}
    q = quota("svc", {"services": "10", "services.nodeports": "1"},
              {"services": "1", "services.nodeports": "0"})
    said, _ = admit(node_port, [q], op=UPDATE, resource="services", old=svc)
    assert said == ("exceeded quota: svc, requested: services.nodeports=2, used: "
                    "services.nodeports=0, limited: services.nodeports=1")


# ------------------------------------------------------------------ evaluators

def test_pod_usage_counts_only_live_pods_and_takes_the_largest_init_container() -> None:
    ev = PodEvaluator()
    p = pod(requests={"cpu": "100m", "memory": "1Gi"}, limits={"cpu": "200m"})
    p["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "1"}}}]
    assert to_json(ev.usage(p)) == {"count/pods": "1", "cpu": "1", "limits.cpu": "200m",
                                    "memory": "1Gi", "pods": "1", "requests.cpu": "1",
                                    "requests.memory": "1Gi"}
    p["status"] = {"phase": "Succeeded"}
    assert to_json(ev.usage(p)) == {"count/pods": "1"}


def test_service_and_claim_usage() -> None:
    lb = {"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    assert to_json(ServiceEvaluator().usage(lb)) == {
        "count/services": "1", "services": "1", "services.loadbalancers": "1",
        "services.nodeports": "1"}
    lb["spec"]["allocateLoadBalancerNodePorts"] = False
    assert "services.nodeports" in ServiceEvaluator().usage(lb)
    assert str(ServiceEvaluator().usage(lb)["services.nodeports"]) == "0"
    claim = {"metadata": {"name": "c"}, "spec": {"storageClassName": "fast", "resources": {
        "requests": {"storage": "1Gi"}}}, "status": {"allocatedResources": {"storage": "2Gi"}}}
    assert to_json(PersistentVolumeClaimEvaluator().usage(claim)) == {
        "count/persistentvolumeclaims": "1", "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
        "fast.storageclass.storage.k8s.io/requests.storage": "2Gi", "persistentvolumeclaims": "1",
        "requests.storage": "2Gi"}


def test_calculate_usage_masks_to_the_hard_names_and_zeroes_what_is_absent() -> None:
    pods = [pod("a", requests={"cpu": "1"}), pod("b", requests={"cpu": "500m"})]
    ev = PodEvaluator(lambda _g, r, _ns: pods if r == "pods" else [])
    hard = parse_resource_list({"pods": "10", "requests.cpu": "4", "requests.memory": "1Gi"})
    assert to_json(calculate_usage("test", hard, [ev], [])) == {
        "pods": "2", "requests.cpu": "1500m", "requests.memory": "0"}
    assert to_json(calculate_usage("test", hard, [ev], [
        {"scopeName": "BestEffort", "operator": "Exists"}])) == {
        "pods": "0", "requests.cpu": "0", "requests.memory": "0"}
    assert parse_quantity("1500m") == parse_resource_list({"x": "1.5"})["x"]


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize(("spec", "errors"), [
    ({"hard": {"foo": "1"}}, ['spec.hard[foo]: Invalid value: "foo": must be a standard resource '
                              "type or fully qualified",
                              'spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota']),
    ({"hard": {"pods": "-1"}},
     ['spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0']),
    ({"hard": {"pods": "1500m"}}, ["spec.hard[pods]: Invalid value: 1500m: must be an integer"]),
    ({"hard": {"cpu": "1"}, "scopes": ["BestEffort"]},
     ['spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource']),
    ({"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating"]},
     ['spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes']),
    ({"hard": {"pods": "1"}, "scopes": ["Weekend"]},
     ['spec.scopes: Invalid value: ["Weekend"]: unsupported scope']),
    ({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "BestEffort", "operator": "In", "values": ["x"]}]}},
     ["spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when "
      "scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
      "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
      "ResourceQuotaScopeCrossNamespacePodAffinity"]),
    ({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In"}]}},
     ["spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when "
      "`operator` is 'In' or 'NotIn' for scope selector"]),
    ({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "BestEffort", "operator": "Exists"},
        {"scopeName": "NotBestEffort", "operator": "Exists"}]}},
     ["spec.scopeSelector.matchExpressions: Invalid value: []: conflicting scopes"]),
    ({"hard": {"count/deployments.apps": "2", "requests.nvidia.com/gpu": "1",
               "gold.storageclass.storage.k8s.io/requests.storage": "1Gi"}}, []),
])
def test_validate_resource_quota(spec: dict[str, Any], errors: list[str]) -> None:
    got = validate_resource_quota({"metadata": {"name": "q"}, "spec": spec})
    assert [str(e) for e in got] == errors


def test_scopes_are_immutable() -> None:
    old = {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"]}}
    new = {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}}
    assert [str(e) for e in validate_resource_quota_update(new, old)] == [
        "spec.scopes: Invalid value: []: field is immutable"]


# ------------------------------------------------------------------ the cluster

def test_a_deployment_stuck_below_its_replicas_and_the_controller_giving_back() -> None:
    c = Cluster(nodes=1, seed=3)
    c.run(2)
    assert c.kubectl("create quota pods-max --hard=pods=2,requests.cpu=1").strip() == \
        "resourcequota/pods-max created"
    c.run(1)
    assert c.client.get("resourcequotas", "pods-max")["status"] == {
        "hard": {"pods": "2", "requests.cpu": "1"}, "used": {"pods": "0", "requests.cpu": "0"}}
    # A pod without a cpu request is refused while requests.cpu is quota'd.
    assert "must specify requests.cpu for: web" in c.kubectl("run web --image=nginx")
    c.kubectl("apply -f -", stdin="""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: 100m}}}
""")
    c.run(10)
    assert c.client.get("deployments.apps", "web")["status"]["replicas"] == 2
    failed = [e for e in c.events() if e.get("reason") == "FailedCreate"]
    assert failed and failed[0]["involvedObject"]["kind"] == "ReplicaSet"
    assert failed[0]["message"].startswith("Error creating: pods \"web-")
    assert failed[0]["message"].endswith(" is forbidden: exceeded quota: pods-max, requested: "
                                         "pods=1, used: pods=2, limited: pods=2")
    lines = c.kubectl("get quota").splitlines()
    assert lines[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert lines[1].split(None, 2)[2].strip() == "pods: 2/2, requests.cpu: 200m/1"
    assert c.kubectl("describe quota pods-max").splitlines()[2:] == [
        "Resource      Used  Hard", "--------      ----  ----", "pods          2     2",
        "requests.cpu  200m  1"]
    assert c.kubectl("describe namespace default").splitlines()[4:] == [
        "", "Resource Quotas", "  Name:         pods-max", "  Resource      Used  Hard",
        "  --------      ---   ---", "  pods          2     2", "  requests.cpu  200m  1"]
    # The quota grows: the controller writes the new hard at once; the ReplicaSet's next retry
    # (its rate limiter's back-off after the failed syncs) fits.
    c.client.patch("resourcequotas", "pods-max", {"spec": {"hard": {"pods": "3"}}})
    c.run(1)
    assert c.client.get("resourcequotas", "pods-max")["status"]["hard"]["pods"] == "3"
    for _ in range(30):
        c.run(10)
        if c.client.get("deployments.apps", "web")["status"]["replicas"] == 3:
            break
    assert c.client.get("deployments.apps", "web")["status"]["replicas"] == 3
    assert c.client.get("deployments.apps", "web")["status"]["replicas"] == 3
    # Replenishment: a deleted pod gives its share back (the ReplicaSet makes a new one).
    c.kubectl("scale deployment web --replicas=1")
    c.run(40)
    assert c.client.get("resourcequotas", "pods-max")["status"]["used"] == {
        "pods": "1", "requests.cpu": "100m"}
