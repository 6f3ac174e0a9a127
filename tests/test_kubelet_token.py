"""The kubelet's token manager (pkg/kubelet/token/token_manager_test.go's tables) and the
projected service account token it fills: a TokenRequest bound to the pod, accepted by the API
server as the pod's account, dead once the pod is gone, and only for pods on the kubelet's own
node (NodeRestriction's admitServiceAccount)."""

from __future__ import annotations

import base64
import contextlib
import json
import random
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.client.client import Client
from kubelab.kubelet.token import Manager, TokenError, key_func
from kubelab.sim.clock import Clock

TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
START = 30 * 24 * 3600.0  # the upstream tests' clock: time.Time{} + 30 days
HOUR = 3600


def _request(seconds: int = 2000, name: str = "foo-pod", uid: str = "foo-uid",
             audiences: tuple[str, ...] = ("foo1", "foo2")) -> dict[str, Any]:
    """getTokenRequest()"""
    return {"spec": {"audiences": list(audiences), "expirationSeconds": seconds,
                     "boundObjectRef": {"kind": "pod", "name": name, "uid": uid}}}


def _answer(clock: Clock, lifetime: float, seconds: int | None = None, token: str = "foo",
            tr: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = dict((tr or {}).get("spec") or {})
    spec["expirationSeconds"] = int(lifetime) if seconds is None else seconds
    return {"spec": spec, "status": {"token": token,
                                     "expirationTimestamp": rfc3339(clock.now + lifetime)}}


class FakeTokenGetter:
    def __init__(self, answer: dict[str, Any] | None, err: Exception | None = None) -> None:
        self.count, self.answer, self.err = 0, answer, err

    def __call__(self, name: str, namespace: str, tr: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        if self.err is not None:
            raise self.err
        assert self.answer is not None
        return self.answer


def _manager(clock: Clock, getter: Any) -> Manager:
    return Manager(getter, clock, random.Random(1))


@pytest.mark.parametrize(("lifetime", "advance", "fails", "refreshed"), [
    (HOUR, 50 * 60, False, True),        # rotate hour token expires in the last 12 minutes
    (40 * HOUR, 25 * HOUR, False, True),  # rotate 24 hour token that expires in 40 hours
    (HOUR, 50 * 60, True, False),         # rotate hour token fails, old token is still valid
    (HOUR, 10 * 60, False, False),        # (young enough: the cache answers)
])
def test_token_caching_and_expiration(lifetime: int, advance: int, fails: bool,
                                      refreshed: bool) -> None:
    clock = Clock(START)
    getter = FakeTokenGetter(_answer(clock, lifetime))
    mgr = _manager(clock, getter)
    mgr.get_service_account_token("a", "b", _request())
    mgr.get_service_account_token("a", "b", _request())
    assert getter.count == 1  # served from the cache
    clock.run(until=START + advance)
    if fails:
        mgr.get_token = FakeTokenGetter(None, ApiError(500, "InternalError", "err"))
    tr = mgr.get_service_account_token("a", "b", _request())
    assert tr["status"]["token"] == "foo"
    assert getter.count == (2 if refreshed else 1)


def test_a_failed_refresh_of_an_expired_token_is_an_error() -> None:
    clock = Clock(START)
    mgr = _manager(clock, FakeTokenGetter(_answer(clock, HOUR)))
    mgr.get_service_account_token("a", "b", _request())
    clock.run(until=START + HOUR - 30)
    mgr.get_service_account_token("a", "b", _request())  # (cleans up: nothing has expired)
    clock.run(until=START + HOUR + 1)  # expired, and not yet cleaned up
    mgr.get_token = FakeTokenGetter(None, ApiError(403, "Forbidden", "no"))
    with pytest.raises(TokenError, match=r'^token "b"/"a"/.* expired and refresh failed: no$'):
        mgr.get_service_account_token("a", "b", _request())
    fresh = _manager(clock, FakeTokenGetter(None, ApiError(404, "NotFound", 'serviceaccounts "b" not found')))
    with pytest.raises(TokenError, match=r'^failed to fetch token: serviceaccounts "b" not found$'):
        fresh.get_service_account_token("a", "b", _request())


@pytest.mark.parametrize(("now", "exp", "seconds", "refresh"), [
    (10 * 60, 60 * 60, 3600, False),
    (50 * 60, 60 * 60, 3600, True),
    (25 * HOUR, 60 * HOUR, 60 * 3600, True),
    (70 * 60, 60 * 60, 3600, True),
    (0, 60 * 60, None, False),           # expirationSeconds nil: never refreshed
    (-10 * 60, 60 * 60, 3600, True),     # issued after now: the clock went back
])
def test_requires_refresh(now: int, exp: int, seconds: int | None, refresh: bool) -> None:
    clock = Clock(START + now)
    tr = {"spec": {"expirationSeconds": seconds},
          "status": {"expirationTimestamp": rfc3339(START + exp)}}
    assert _manager(clock, None).requires_refresh(tr) is refresh


REQUESTS = [("fake-name-1", "fake-uid-1", False), ("fake-name-2", "fake-uid-2", False),
            ("fake-name-3", "fake-uid-3", False), ("fake-name-4", "fake-uid-4", True),
            ("fake-name-4", "fake-uid-4", False)]  # the same as the last one, and it succeeds


@pytest.mark.parametrize(("indexes", "deleted", "left"), [
    ([0, 1, 2], [], [0, 1, 2]),
    ([0, 1, 2], ["fake-uid-1"], [1, 2]),
    ([0, 1, 2], ["fake-uid-1", "fake-uid-3"], [1]),
    ([0, 1, 2], ["fake-uid-1", "fake-uid-2", "fake-uid-3"], []),
    ([0, 1, 2, 3], [], [0, 1, 2]),
    ([0, 1, 2, 3], ["fake-uid-2"], [0, 2]),
    ([0, 1, 2, 3, 4], [], [0, 1, 2, 4]),
    ([0, 1, 2, 3, 4], ["fake-uid-4"], [0, 1, 2]),
    ([0, 1, 2, 3, 4], ["fake-uid-1"], [1, 2, 4]),
    ([0, 1, 2], ["fake-uid-100", "fake-uid-200"], [0, 1, 2]),
])
def test_delete_service_account_token(indexes: list[int], deleted: list[str],
                                      left: list[int]) -> None:
    clock = Clock(START)
    mgr = _manager(clock, None)

    def request(i: int) -> tuple[str, str, dict[str, Any]]:
        name, uid, _ = REQUESTS[i]
        return (f"fake-namespace-{name[-1]}", name,
                {"spec": {"boundObjectRef": {"uid": uid, "name": name}}})

    for i in indexes:
        namespace, name, tr = request(i)
        mgr.get_token = (FakeTokenGetter(None, ApiError(500, "InternalError", "fail tr"))
                         if REQUESTS[i][2] else FakeTokenGetter(_answer(clock, 10 * HOUR, tr=tr)))
        with contextlib.suppress(TokenError):
            mgr.get_service_account_token(namespace, name, tr)
    for uid in deleted:
        mgr.delete_service_account_token(uid)
    assert sorted(mgr.cache) == sorted(key_func(request(i)[1], request(i)[0], request(i)[2])
                                       for i in left)


@pytest.mark.parametrize(("relative_exp", "size"), [(-HOUR, 0), (HOUR, 1)])
def test_cleanup(relative_exp: int, size: int) -> None:
    clock = Clock(24 * 3600.0)
    mgr = _manager(clock, None)
    mgr.cache["key"] = {"status": {"expirationTimestamp": rfc3339(clock.now + relative_exp)}}
    mgr.cleanup()
    assert len(mgr.cache) == size


@pytest.mark.parametrize(("target", "hit"), [
    (_request(), True),
    (_request(seconds=2001), False),          # everything the same but expirationSeconds
    (_request(name="diff-pod"), False),       # ... but boundObjectRef.name
    (_request(audiences=("foo1",)), False),   # ... but the audiences
])
def test_key_func(target: dict[str, Any], hit: bool) -> None:
    cached = {key_func("foo-sa", "foo-ns", _request()),
              key_func("ame-sa", "ame-ns", _request(name="ame-pod", uid="ame-uid",
                                                    audiences=("ame1", "ame2")))}
    assert (key_func("foo-sa", "foo-ns", target) in cached) is hit


# ---------------------------------------------------------------------- in a cluster


def _claims(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))))


def _whoami(c: Cluster, token: str) -> dict[str, Any]:
    review = Client(c.endpoint("pod"), token).create({
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    return dict(review["status"]["userInfo"])


@pytest.fixture(scope="module")
def kind() -> Cluster:
    c = Cluster(nodes=2, anatomy=True, seed=4)
    c.kubectl("run web --image=busybox -- sleep 3600")
    c.run(15)
    return c


def test_the_pods_token_is_its_accounts_credential(kind: Cluster) -> None:
    pod = kind.client.get("pods", "web")
    token = kind.kubectl(f"exec web -- cat {TOKEN}").strip()
    claims = _claims(token)
    assert claims["kubernetes.io"]["pod"] == {"name": "web", "uid": pod["metadata"]["uid"]}
    assert claims["kubernetes.io"]["node"]["name"] == pod["spec"]["nodeName"]
    # the admission plugin's 3607 s: a year of validity, stale (warnafter) after 3607 s
    assert claims["exp"] - claims["iat"] == 365 * 24 * 3600
    assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607
    info = _whoami(kind, token)
    assert info["username"] == "system:serviceaccount:default:default"
    assert info["extra"]["authentication.kubernetes.io/pod-name"] == ["web"]
    assert info["extra"]["authentication.kubernetes.io/node-name"] == [pod["spec"]["nodeName"]]
    # the kubelet asked for it, as its node, and asked once
    asked = [a for a in kind.apiserver.audit if (a.verb, a.resource, a.subresource) ==
             ("create", "serviceaccounts", "token") and (a.namespace, a.name) == ("default", "default")]
    assert [(a.user, a.code) for a in asked] == [(f"system:node:{pod['spec']['nodeName']}", 201)]


def test_a_kubelet_gets_tokens_only_for_pods_on_its_node(kind: Cluster) -> None:
    pod = kind.client.get("pods", "web")
    other = next(n for n in ("node-1", "node-2") if n != pod["spec"]["nodeName"])
    kubelet = kind.client_for(f"system:node:{other}", ["system:nodes"])

    def ask(ref: dict[str, Any] | None) -> str:
        spec: dict[str, Any] = {"expirationSeconds": 3607}
        if ref is not None:
            spec["boundObjectRef"] = ref
        with pytest.raises(ApiError) as err:
            kubelet.create_token("default", "default", {
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
        assert err.value.code == 403
        return err.value.message

    ref = {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": pod["metadata"]["uid"]}
    assert ask(ref) == ('serviceaccounts "default" is forbidden: node requested token bound to '
                        'a pod scheduled on a different node')
    assert ask(None) == 'serviceaccounts "default" is forbidden: node requested token not bound to a pod'
    assert ask({**ref, "uid": ""}) == ('serviceaccounts "default" is forbidden: node requested '
                                       'token with a pod binding without a uid')
    assert ask({**ref, "uid": "x"}).endswith(
        "the UID in the bound object reference (x) does not match the UID in record. "
        "The object might have been deleted and then recreated")


def test_a_kubelet_asks_only_for_audiences_its_pod_uses(kind: Cluster) -> None:
    """ServiceAccountNodeAudienceRestriction (noderestriction's node_test.go cases)."""
    pod = kind.client.get("pods", "web")
    node = pod["spec"]["nodeName"]
    kubelet = kind.client_for(f"system:node:{node}", ["system:nodes"])
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": pod["metadata"]["uid"]}

    def ask(*audiences: str) -> dict[str, Any]:
        return kubelet.create_token("default", "default", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": list(audiences), "expirationSeconds": 3607, "boundObjectRef": ref}})

    assert ask()["status"]["token"]  # the projection's audience: the API server's
    for audiences, reason in ((("a", "b"), "node may only request 0 or 1 audiences"),
                              (("vault",), f'audience "vault" not found in pod spec volume, '
                                           f"system:node:{node} is not authorized to request "
                                           "tokens for this audience")):
        with pytest.raises(ApiError) as err:
            ask(*audiences)
        assert (err.value.code, err.value.message) == (
            403, f'serviceaccounts "default" is forbidden: {reason}')
    kind.client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                        "metadata": {"name": "vault-audience"}, "rules": [{
                            "apiGroups": [""], "resources": ["vault"],
                            "verbs": ["request-serviceaccounts-token-audience"]}]})
    kind.client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                        "metadata": {"name": "vault-audience"},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                    "name": "vault-audience"},
                        "subjects": [{"kind": "User", "name": f"system:node:{node}"}]})
    assert _claims(ask("vault")["status"]["token"])["aud"] == ["vault"]


def test_a_token_bound_to_a_pod_is_for_the_pods_account(kind: Cluster) -> None:
    kind.client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})
    with pytest.raises(ApiError) as err:
        kind.client.create_token("robot", "default", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "web"}}})
    assert (err.value.code, err.value.message) == (400, 'cannot bind token for serviceaccount '
                                                   '"robot" to pod running with different '
                                                   'serviceaccount name.')


def test_the_token_is_refreshed_and_dies_with_its_pod() -> None:
    c = Cluster(nodes=1, anatomy=True, seed=5)
    c.kubectl("run web --image=busybox -- sleep 36000")
    c.run(15)
    first = c.kubectl(f"exec web -- cat {TOKEN}").strip()
    # past 80 % of 3607 s (less the jitter), and the pod's next one-minute resync asks again
    # (with the anatomy's timing it comes at ~2941 s)
    c.run(3000)
    second = c.kubectl(f"exec web -- cat {TOKEN}").strip()
    assert second != first and _claims(second)["iat"] > _claims(first)["iat"]
    assert _whoami(c, first)["username"] == _whoami(c, second)["username"] == \
        "system:serviceaccount:default:default"
    c.kubectl("delete pod web")
    c.run(40)
    assert c.kubectl("get pods").strip() == "No resources found in default namespace."
    c.kubectl("run web --image=busybox -- sleep 36000")  # the same name, another uid
    for token in (first, second):
        with pytest.raises(ApiError) as err:
            _whoami(c, token)
        assert err.value.code == 401


def test_without_an_account_the_volume_does_not_mount() -> None:
    """A cluster without the anatomy has no serviceaccount controller: a projected token of
    an account that does not exist fails to mount, with the token manager's words."""
    c = Cluster(nodes=1, seed=2, anatomy=False)  # the anatomy would make the account
    c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                     "spec": {"containers": [{"name": "app", "image": "busybox",
                                              "volumeMounts": [{"name": "t", "mountPath": "/t"}]}],
                              "volumes": [{"name": "t", "projected": {"sources": [
                                  {"serviceAccountToken": {"path": "token"}}]}}]}})
    c.run(5)
    messages = [e["message"] for e in c.client.list("events", "default")["items"]
                if e["reason"] == "FailedMount"]
    assert messages[0] == ('MountVolume.SetUp failed for volume "t" : failed to fetch token: '
                           'serviceaccounts "default" not found')
