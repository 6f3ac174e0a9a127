"""`kubectl auth whoami` and `kubectl auth can-i` (kubelab/kubectl/auth.py) against the
self reviews (kubelab/apiserver/auth/reviews.py), judged by the real kubectl: over one served
cluster, kubelab's kubectl and the real one print the same thing for the same commands."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from serve_helpers import Served, serving

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.client import Client
from kubelab.kubectl import kubectl
from kubelab.kubectl.auth import _breakdown, _compact, _go_string


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("auth"), "--nodes", "1", "--no-anatomy")


COMMANDS = [
    "auth whoami",
    "auth whoami --as=viewer --as-group=devs",
    "auth can-i create pods",
    "auth can-i --list",
    "auth can-i --list --as=viewer",
    "auth can-i --list --no-headers -n kube-system",
    "auth can-i get pods --as=viewer",
    "auth can-i delete pods --as=viewer",
    "auth can-i get /healthz --as=viewer",
    "auth can-i create deployments.apps -n kube-system --as=viewer",
    "auth can-i list secrets --subresource=status",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_kubelabs_kubectl_prints_what_the_real_one_prints(served: Served, command: str) -> None:
    real = served.kubectl(*command.split(), check=False)
    ours = kubectl(Client.from_kubeconfig(str(served.kubeconfig)), command)
    assert (str(ours), ours.exit_code) == ((real.stderr + real.stdout).rstrip("\n"), real.returncode)


def test_a_rules_review_needs_a_namespace_and_lists_rbacs_rules() -> None:
    c = Cluster(nodes=1)
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {}}
    with pytest.raises(ApiError, match="no namespace on request") as err:
        c.client.create(review)
    assert err.value.code == 400
    c.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    c.client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                     "metadata": {"name": "reader", "namespace": "team"},
                     "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"],
                                "resourceNames": ["web"]}]})
    c.client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                     "metadata": {"name": "reader", "namespace": "team"},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                     "subjects": [{"kind": "User", "name": "ann"}]})
    ann = c.client_for("ann")
    rules = ann.create({**review, "spec": {"namespace": "team"}})["status"]
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"],
            "resourceNames": ["web"]} in rules["resourceRules"] and rules["incomplete"] is False
    elsewhere = ann.create({**review, "spec": {"namespace": "default"}})["status"]["resourceRules"]
    assert all("pods" not in r["resources"] for r in elsewhere)
    listing = c.kubectl("auth can-i --list -n team --as=ann").splitlines()
    assert [line.split() for line in listing if line.startswith("pods")] == [
        ["pods", "[]", "[web]", "[get", "list]"]]
    assert c.kubectl("auth whoami --as=ann").splitlines()[1].split() == ["Username", "ann"]


def test_breakdown_compact_and_sort_as_kubectl() -> None:
    rules = _breakdown((("get", "list"), ("", "apps"), ("pods",), (), ())) + \
        _breakdown((("watch",), ("",), ("pods",), (), ())) + \
        _breakdown((("get",), (), (), (), ("/a", "/b")))
    compact = sorted(_compact(rules), key=_go_string)
    # Go's strings compare byte by byte: "[get list" then " " (0x20) sorts before "]" (0x5d)
    assert compact == [
        (("get", "list", "watch"), ("",), ("pods",), (), ()),
        (("get", "list"), ("apps",), ("pods",), (), ()),
        (("get",), (), (), (), ("/a",)), (("get",), (), (), (), ("/b",))]
