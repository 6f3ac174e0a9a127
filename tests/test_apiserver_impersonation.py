"""Impersonation (Impersonate-User and friends) in the API server's filter chain."""

from __future__ import annotations

from typing import Any

import pytest
from test_apiserver_support import Env, config_map

from kubelab.api.request import Impersonation

RBAC = "rbac.authorization.k8s.io"


def _cluster_binding(name: str, role: str, user: str) -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": user}]}


@pytest.fixture
def env() -> Env:
    """alice may impersonate the user viewer, the group readers and service accounts in
    default; viewer and the group readers may view; root is in system:masters; bob nothing."""
    env = Env()
    env.server.add_token("t-alice", "alice")
    env.server.add_token("t-bob", "bob")
    env.server.add_token("t-root", "root", ["system:masters"])
    env.create("clusterroles", {
        "apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "impersonator"},
        "rules": [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"],
                   "resourceNames": ["viewer"]},
                  {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"],
                   "resourceNames": ["readers"]}]}, namespace="")
    env.create("clusterrolebindings", _cluster_binding("alice-impersonates", "impersonator", "alice"),
               namespace="")
    env.create("rolebindings", {
        "apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
        "metadata": {"name": "alice-sa", "namespace": "default"},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "sa-impersonator"},
        "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "alice"}]})
    env.create("clusterroles", {
        "apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "sa-impersonator"},
        "rules": [{"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}]},
        namespace="")
    env.create("clusterrolebindings", _cluster_binding("viewer-views", "view", "viewer"),
               namespace="")
    env.create("clusterrolebindings", {
        **_cluster_binding("readers-view", "view", ""),
        "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": "readers"}]}, namespace="")
    env.create("configmaps", config_map("cm"))
    return env


def test_the_request_acts_as_the_impersonated_user(env: Env) -> None:
    as_viewer = Impersonation("viewer")
    assert env.req("get", "configmaps", name="cm", token="t-alice", impersonate=as_viewer)
    err = env.error("delete", "configmaps", name="cm", token="t-root", impersonate=as_viewer)
    assert (err.code, err.message) == (403, 'configmaps "cm" is forbidden: User "viewer" cannot '
                                       'delete resource "configmaps" in API group "" in the '
                                       'namespace "default"')
    record = env.server.audit[-1]
    assert (record.user, record.impersonated_user) == ("root", "viewer")
    assert record.impersonated_groups == ("system:authenticated",)
    assert record.stages[2:4] == ["authentication", "impersonation"]


def test_impersonating_needs_the_impersonate_verb(env: Env) -> None:
    err = env.error("get", "configmaps", name="cm", token="t-bob", impersonate=Impersonation("viewer"))
    assert (err.code, err.message) == (403, 'users "viewer" is forbidden: User "bob" cannot '
                                       'impersonate resource "users" in API group "" at the '
                                       'cluster scope')
    assert env.server.audit[-1].stage == "impersonation"
    err = env.error("get", "configmaps", name="cm", token="t-alice",
                    impersonate=Impersonation("viewer", groups=("admins",)))
    assert err.message == ('groups "admins" is forbidden: User "alice" cannot impersonate '
                           'resource "groups" in API group "" at the cluster scope')
    err = env.error("get", "configmaps", name="cm", token="t-alice",
                    impersonate=Impersonation("viewer", uid="1234"))
    assert err.message == ('uids.authentication.k8s.io "1234" is forbidden: User "alice" '
                           'cannot impersonate resource "uids" in API group '
                           '"authentication.k8s.io" at the cluster scope')
    err = env.error("get", "configmaps", name="cm", token="t-alice",
                    impersonate=Impersonation("viewer", extra=(("scopes", ("view",)),)))
    assert err.message == ('userextras.authentication.k8s.io "view" is forbidden: User "alice" '
                           'cannot impersonate resource "userextras/scopes" in API group '
                           '"authentication.k8s.io" at the cluster scope')


def test_groups_without_a_user_are_refused(env: Env) -> None:
    err = env.error("get", "configmaps", name="cm", token="t-root",
                    impersonate=Impersonation(groups=("readers",)))
    assert (err.code, err.message) == (500, "requested [{Group  readers    }] without "
                                       "impersonating a user")


def test_impersonated_groups_are_the_authority(env: Env) -> None:
    # nobody has no binding; as a member of readers it may view.
    wanted = Impersonation("nobody", groups=("readers",))
    err = env.error("get", "configmaps", name="cm", token="t-root", impersonate=Impersonation("nobody"))
    assert err.code == 403
    assert env.req("get", "configmaps", name="cm", token="t-root", impersonate=wanted)
    assert env.server.audit[-1].impersonated_groups == ("readers", "system:authenticated")
    env.req("get", "configmaps", name="cm", token="t-root",
            impersonate=Impersonation("system:anonymous", groups=("readers",)))
    assert env.server.audit[-1].impersonated_groups == ("readers", "system:unauthenticated")


def test_a_service_account_user_brings_its_groups(env: Env) -> None:
    env.create("rolebindings", {
        "apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
        "metadata": {"name": "sas-view", "namespace": "default"},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": "system:serviceaccounts:default"}]})
    sa = Impersonation("system:serviceaccount:default:app")
    assert env.req("get", "configmaps", name="cm", token="t-alice", impersonate=sa)
    assert env.server.audit[-1].impersonated_groups == (
        "system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated")
    err = env.error("get", "configmaps", name="cm", namespace="default", token="t-alice",
                    impersonate=Impersonation("system:serviceaccount:kube-system:app"))
    assert err.message == ('serviceaccounts "app" is forbidden: User "alice" cannot impersonate '
                           'resource "serviceaccounts" in API group "" in the namespace '
                           '"kube-system"')


def test_a_review_answers_for_the_impersonated_user(env: Env) -> None:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}
    answer = env.req("create", "selfsubjectaccessreviews", namespace="", group="authorization.k8s.io",
                     body=review, token="t-root")
    assert answer["status"]["allowed"] is True
    answer = env.req("create", "selfsubjectaccessreviews", namespace="", group="authorization.k8s.io",
                     body=review, token="t-root", impersonate=Impersonation("viewer"))
    assert answer["status"]["allowed"] is False
