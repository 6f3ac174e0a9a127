"""Authorization: RBAC roles and bindings, the bootstrap policy, NodeRestriction."""

from __future__ import annotations

from typing import Any

import pytest
from test_apiserver_support import Env, config_map, node, pod

from kubelab.api.request import Request
from kubelab.apiserver.auth.rbac import AuthzAttributes

RBAC = "rbac.authorization.k8s.io"


def role(name: str, rules: list[dict[str, Any]], namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace}, "rules": rules}


def binding(name: str, role_kind: str, role_name: str, subjects: list[dict[str, str]],
            namespace: str = "default") -> dict[str, Any]:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role_name},
            "subjects": subjects}


@pytest.fixture(scope="module")
def policy() -> Env:
    """bob may read pods in default; devs may edit in team; carol views cluster-wide; a
    service account may get the config map `settings` only; kubelets and components as built."""
    env = Env()
    s = env.server
    s.add_token("t-bob", "bob")
    s.add_token("t-alice", "alice", ["devs"])
    s.add_token("t-carol", "carol")
    s.add_token("t-sa", "system:serviceaccount:default:app")
    env.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": "team"}}, namespace="")
    env.create("roles", role("pod-reader", [{"apiGroups": [""], "resources": ["pods"],
                                             "verbs": ["get", "list", "watch"]}]))
    env.create("rolebindings", binding("bob-reads", "Role", "pod-reader",
                                       [{"kind": "User", "name": "bob"}]))
    env.create("rolebindings", binding("devs-edit", "ClusterRole", "edit",
                                       [{"kind": "Group", "name": "devs"}], "team"),
               namespace="team")
    env.create("clusterrolebindings", binding("carol-views", "ClusterRole", "view",
                                              [{"kind": "User", "name": "carol"}], ""))
    env.create("roles", role("settings", [{"apiGroups": [""], "resources": ["configmaps"],
                                           "resourceNames": ["settings"], "verbs": ["get"]}]))
    env.create("rolebindings", binding("app-settings", "Role", "settings", [
        {"kind": "ServiceAccount", "name": "app", "namespace": "default"}]))
    return env


TABLE = [
    # token, verb, resource, namespace, name, subresource, allowed
    ("t-bob", "get", "pods", "default", "web", "", True),
    ("t-bob", "list", "pods", "default", "", "", True),
    ("t-bob", "watch", "pods", "default", "", "", True),
    ("t-bob", "create", "pods", "default", "", "", False),
    ("t-bob", "delete", "pods", "default", "web", "", False),
    ("t-bob", "get", "pods", "team", "web", "", False),
    ("t-bob", "list", "pods", "", "", "", False),          # all namespaces needs a cluster role
    ("t-bob", "get", "pods", "default", "web", "status", False),  # "pods" is not "pods/status"
    ("t-bob", "get", "configmaps", "default", "cm", "", False),
    ("t-alice", "create", "pods", "team", "", "", True),
    ("t-alice", "create", "deployments", "team", "", "", True),
    ("t-alice", "update", "deployments", "team", "web", "scale", True),
    ("t-alice", "get", "secrets", "team", "s", "", True),
    ("t-alice", "create", "pods", "default", "", "", False),
    ("t-alice", "update", "pods", "team", "web", "status", False),
    ("t-alice", "create", "roles", "team", "", "", False),  # edit does not grant RBAC
    ("t-carol", "list", "pods", "", "", "", True),
    ("t-carol", "get", "deployments", "team", "web", "", True),
    ("t-carol", "get", "secrets", "team", "s", "", False),  # view does not read secrets
    ("t-carol", "delete", "pods", "team", "web", "", False),
    ("t-sa", "get", "configmaps", "default", "settings", "", True),
    ("t-sa", "get", "configmaps", "default", "other", "", False),
    ("t-sa", "list", "configmaps", "default", "", "", False),  # resourceNames never allow lists
    ("", "list", "nodes", "", "", "", False),
    ("token-admin", "delete", "nodes", "", "node-1", "", True),
    ("token-system:kube-scheduler", "create", "pods", "default", "web", "binding", True),
    ("token-system:kube-scheduler", "list", "nodes", "", "", "", True),
    ("token-system:kube-scheduler", "update", "pods", "default", "web", "", False),
    ("token-system:kube-scheduler", "delete", "nodes", "", "node-1", "", False),
    ("token-system:kube-controller-manager", "create", "pods", "default", "", "", True),
    ("token-system:kube-controller-manager", "create", "replicasets", "default", "", "", True),
    ("token-system:kube-controller-manager", "delete", "pods", "team", "x", "", True),
    ("token-system:kube-controller-manager", "update", "deployments", "team", "x", "status",
     True),
    ("token-system:kube-controller-manager", "create", "clusterroles", "", "", "", False),
    ("token-system:node:node-1", "list", "pods", "", "", "", True),
    ("token-system:node:node-1", "update", "pods", "default", "web", "status", True),
    ("token-system:node:node-1", "update", "deployments", "default", "web", "", False),
    ("token-system:node:node-1", "create", "pods", "default", "web", "binding", False),
]


@pytest.mark.parametrize(("token", "verb", "resource", "namespace", "name", "subresource",
                          "allowed"), TABLE)
def test_rbac_decisions(policy: Env, token: str, verb: str, resource: str, namespace: str,
                        name: str, subresource: str, allowed: bool) -> None:
    if token.startswith("token-system:node:"):
        policy.server.token_for(token.removeprefix("token-"))
    group = {"deployments": "apps", "replicasets": "apps", "roles": RBAC,
             "clusterroles": RBAC}.get(resource, "")
    attrs = (verb, group, resource, subresource, namespace, name)
    user = policy.server.authn.authenticate(token)
    assert policy.server.authorizer.authorize(AuthzAttributes(user, *attrs)) is allowed


def test_forbidden_messages_are_upstreams(policy: Env) -> None:
    err = policy.error("get", "pods", "default", "web", token="t-alice")
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == ('pods "web" is forbidden: User "alice" cannot get resource "pods" in '
                           'API group "" in the namespace "default"')
    err = policy.error("create", "pods", "team", "web", subresource="binding", token="t-alice",
                       body={})
    assert err.message == ('pods "web" is forbidden: User "alice" cannot create resource '
                           '"pods/binding" in API group "" in the namespace "team"')
    err = policy.error("list", "deployments", "", token="t-bob")
    assert err.message == ('deployments.apps is forbidden: User "bob" cannot list resource '
                           '"deployments" in API group "apps" at the cluster scope')


def test_a_new_binding_takes_effect_at_once_and_its_deletion_too() -> None:
    env = Env()
    env.server.add_token("t-dan", "dan")
    assert env.error("list", "configmaps", token="t-dan").code == 403
    env.create("rolebindings", binding("dan-views", "ClusterRole", "view",
                                       [{"kind": "User", "name": "dan"}]))
    assert env.req("list", "configmaps", token="t-dan")["items"] == []
    env.delete("rolebindings", "dan-views")
    assert env.error("list", "configmaps", token="t-dan").code == 403


def test_aggregated_roles_pick_up_new_labelled_cluster_roles() -> None:
    env = Env()
    env.server.add_token("t-erin", "erin")
    env.create("clusterrolebindings", binding("erin-views", "ClusterRole", "view",
                                              [{"kind": "User", "name": "erin"}], ""))
    assert env.error("list", "leases", group="coordination.k8s.io", token="t-erin").code == 403
    env.create("clusterroles", {
        "apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
        "metadata": {"name": "lease-viewer",
                     "labels": {f"{RBAC}/aggregate-to-view": "true"}},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                   "verbs": ["list"]}]}, namespace="")
    env.req("list", "leases", group="coordination.k8s.io", token="t-erin")


def test_bootstrap_policy_is_stored_as_objects() -> None:
    env = Env()
    roles = {r["metadata"]["name"]: r for r in env.req("list", "clusterroles")["items"]}
    assert {"cluster-admin", "admin", "edit", "view", "system:kube-scheduler",
            "system:kube-controller-manager", "system:node"} <= set(roles)
    assert roles["cluster-admin"]["metadata"]["labels"] == {
        "kubernetes.io/bootstrapping": "rbac-defaults"}
    bindings = {b["metadata"]["name"]: b for b in env.req("list", "clusterrolebindings")["items"]}
    assert bindings["cluster-admin"]["subjects"] == [
        {"apiGroup": RBAC, "kind": "Group", "name": "system:masters"}]


@pytest.fixture
def kubelet() -> tuple[Env, str]:
    env = Env()
    env.create("nodes", node("node-1"), namespace="")
    env.create("nodes", node("node-2"), namespace="")
    for name, target in (("mine", "node-1"), ("theirs", "node-2")):
        env.create("pods", pod(name))
        env.req("create", "pods", name=name, subresource="binding", body={
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": target}})
    return env, env.server.token_for("system:node:node-1")


def test_a_kubelet_may_update_its_own_node_and_pods(kubelet: tuple[Env, str]) -> None:
    env, token = kubelet
    n = env.get("nodes", "node-1", namespace="")
    n["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    env.req("update", "nodes", name="node-1", subresource="status", body=n, token=token)
    p = env.get("pods", "mine")
    p["status"]["phase"] = "Running"
    env.req("update", "pods", name="mine", subresource="status", body=p, token=token)
    assert env.get("pods", "mine")["status"]["phase"] == "Running"


@pytest.mark.parametrize(("action", "message"), [
    ("other-node", 'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node '
                   '"node-2"'),
    ("other-pod", 'pods "theirs" is forbidden: node "node-1" can only update pod status for '
                  "pods with spec.nodeName set to itself"),
    ("taints", 'nodes "node-1" is forbidden: node "node-1" is not allowed to modify taints'),
    ("create-pod", 'pods "extra" is forbidden: pod does not have "kubernetes.io/config.mirror" '
                   'annotation, node "node-1" can only create mirror pods'),
    ("lease", 'leases.coordination.k8s.io "node-2" is forbidden: can only access node lease '
              "with the same name as the requesting node"),
])
def test_node_restriction(kubelet: tuple[Env, str], action: str, message: str) -> None:
    env, token = kubelet
    if action == "other-node":
        body = env.get("nodes", "node-2", namespace="")
        err = env.error("update", "nodes", name="node-2", subresource="status", body=body,
                        token=token)
    elif action == "other-pod":
        body = env.get("pods", "theirs")
        err = env.error("update", "pods", name="theirs", subresource="status", body=body,
                        token=token)
    elif action == "taints":
        body = env.get("nodes", "node-1", namespace="")
        body["spec"] = {"taints": [{"key": "x", "effect": "NoSchedule"}]}
        err = env.error("update", "nodes", name="node-1", body=body, token=token)
    elif action == "create-pod":
        err = env.error("create", "pods", body=pod("extra", nodeName="node-1"), token=token)
    else:
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": "node-2", "namespace": "kube-node-lease"}}
        err = env.error("create", "leases", "kube-node-lease", group="coordination.k8s.io",
                        body=lease, token=token)
    assert (err.code, err.message) == (403, message)
    assert env.server.audit[-1].plugin == "NodeRestriction"


def test_a_kubelet_may_create_its_own_lease(kubelet: tuple[Env, str]) -> None:
    env, token = kubelet
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "node-1", "namespace": "kube-node-lease"},
             "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40}}
    env.create("leases", lease, namespace="kube-node-lease", group="coordination.k8s.io",
               token=token)


def test_decisions_are_cached_until_rbac_changes(policy: Env) -> None:
    authz = policy.server.authorizer
    calls = 0
    original = authz._decide

    def counting(a: Any) -> bool:
        nonlocal calls
        calls += 1
        return original(a)

    authz._decide = counting  # type: ignore[method-assign]
    try:
        for _ in range(5):
            policy.server.handle(Request("list", "pods", namespace="default", token="t-bob"))
        assert calls <= 1
        policy.create("configmaps", config_map("x"))  # not an RBAC object: the cache stays
        policy.server.handle(Request("list", "pods", namespace="default", token="t-bob"))
        assert calls <= 1
        authz.invalidate()
        policy.server.handle(Request("list", "pods", namespace="default", token="t-bob"))
        assert calls <= 2
    finally:
        del authz._decide
