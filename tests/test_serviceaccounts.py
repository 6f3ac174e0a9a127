"""ServiceAccounts in the anatomy (Cluster(anatomy=True)), in-process: the serviceaccount
controller, the root-CA publisher, the ServiceAccount admission plugin with its projected
volume, TokenRequest and the service account tokens as credentials, `kubectl create token`.
Without the anatomy none of it runs, so other clusters keep their objects and traces."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography import x509

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.client.client import Client
from kubelab.cluster.pki import cluster_ca_pem
from kubelab.controllers.certificates.rootcacertpublisher import DESCRIPTION

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


@pytest.fixture(scope="module")
def kind() -> Cluster:
    c = Cluster(nodes=1, anatomy=True)
    c.run(3)
    return c


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "busybox", "command": ["sleep", "3600"]}],
                     **spec}}


def _claims(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))))


def test_without_the_anatomy_pods_and_namespaces_stay_as_they_were() -> None:
    c = Cluster(nodes=1, anatomy=False)
    c.run(3)
    pod = c.client.create(_pod("plain"))
    assert "serviceAccountName" not in pod["spec"] and "volumes" not in pod["spec"]
    assert c.client.list("serviceaccounts")["items"] == []
    assert not c.exists("configmaps", "kube-root-ca.crt")
    manager = c.components["controller-manager"]
    assert "serviceaccount-controller" not in manager.controllers


def test_every_namespace_has_default_and_gets_it_back(kind: Cluster) -> None:
    for namespace in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert kind.exists("serviceaccounts", "default", namespace)
    kind.kubectl("create namespace team")
    kind.run(1)
    first = kind.client.get("serviceaccounts", "default", "team")
    kind.kubectl("delete serviceaccount default -n team")
    kind.run(1)
    again = kind.client.get("serviceaccounts", "default", "team")
    assert again["metadata"]["uid"] != first["metadata"]["uid"]  # a new one


def test_kube_root_ca_is_published_and_restored(kind: Cluster) -> None:
    kind.kubectl("create namespace certs")
    kind.run(1)
    cm = kind.client.get("configmaps", "kube-root-ca.crt", "certs")
    assert cm["data"] == {"ca.crt": kind.root_ca.decode()}
    assert cm["metadata"]["annotations"] == {"kubernetes.io/description": DESCRIPTION}
    cm["data"] = {"ca.crt": "forged", "extra": "x"}
    cm["metadata"]["annotations"] = {}
    kind.client.update(cm)
    kind.run(1)
    restored = kind.client.get("configmaps", "kube-root-ca.crt", "certs")
    assert restored["data"] == {"ca.crt": kind.root_ca.decode()}
    assert restored["metadata"]["annotations"]["kubernetes.io/description"] == DESCRIPTION
    kind.kubectl("delete configmap kube-root-ca.crt -n certs")
    kind.run(1)
    assert kind.exists("configmaps", "kube-root-ca.crt", "certs")


def test_the_in_process_ca_is_a_real_certificate_fixed_by_the_seed() -> None:
    pem = cluster_ca_pem(7)
    cert = x509.load_pem_x509_certificate(pem)
    assert cert.subject.rfc4514_string() == "CN=kubernetes" == cert.issuer.rfc4514_string()
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert pem == cluster_ca_pem(7) != cluster_ca_pem(8)


def test_a_new_ca_is_published_everywhere(kind: Cluster) -> None:
    old = kind.root_ca
    try:
        kind.set_root_ca(cluster_ca_pem(99))
        kind.run(1)
        for cm in kind.client.list("configmaps", field_selector="metadata.name=kube-root-ca.crt")["items"]:
            assert cm["data"]["ca.crt"] == cluster_ca_pem(99).decode()
    finally:
        kind.set_root_ca(old)
        kind.run(1)


def test_admission_defaults_the_account_and_mounts_the_token_volume(kind: Cluster) -> None:
    pod = kind.client.create(_pod("mounted", initContainers=[
        {"name": "init", "image": "busybox", "command": ["true"]}]))
    spec = pod["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [volume] = [v for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
    assert len(volume["name"]) == len("kube-api-access-") + 5
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}
    for container in (*spec["containers"], *spec["initContainers"]):
        assert container["volumeMounts"] == [{"name": volume["name"], "readOnly": True,
                                              "mountPath": MOUNT}]


def test_the_container_reads_its_namespace_and_ca(kind: Cluster) -> None:
    kind.kubectl("run reader --image=busybox -- sleep 3600")
    kind.run(15)
    assert kind.kubectl(f"exec reader -- cat {MOUNT}/namespace").strip() == "default"
    assert kind.kubectl(f"exec reader -- cat {MOUNT}/ca.crt").strip() == kind.root_ca.decode().strip()
    assert kind.kubectl(f"exec reader -- ls {MOUNT}").split() == ["ca.crt", "namespace", "token"]


@pytest.mark.parametrize(("pod_says", "account_says", "mounted"), [
    (None, None, True), (False, None, False), (None, False, False), (True, False, True),
    (False, True, False)])
def test_should_automount(kind: Cluster, pod_says: bool | None, account_says: bool | None,
                          mounted: bool) -> None:
    name = f"auto-{pod_says}-{account_says}".lower()
    sa: dict[str, Any] = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
    if account_says is not None:
        sa["automountServiceAccountToken"] = account_says
    kind.client.create(sa)
    extra: dict[str, Any] = {"serviceAccountName": name}
    if pod_says is not None:
        extra["automountServiceAccountToken"] = pod_says
    pod = kind.client.create(_pod(name, **extra))
    volumes = [v["name"] for v in pod["spec"].get("volumes") or []]
    assert any(v.startswith("kube-api-access-") for v in volumes) is mounted


def test_a_missing_account_refuses_the_pod(kind: Cluster) -> None:
    with pytest.raises(ApiError) as err:
        kind.client.create(_pod("lost", serviceAccountName="robot"))
    assert (err.value.code, err.value.message) == (403, 'pods "lost" is forbidden: error looking up '
                                                   'service account default/robot: serviceaccount '
                                                   '"robot" not found')


def test_image_pull_secrets_come_from_the_account_and_a_mount_is_kept(kind: Cluster) -> None:
    kind.client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "puller"},
                        "imagePullSecrets": [{"name": "regcred"}]})
    pod = _pod("pulls", serviceAccountName="puller",
               volumes=[{"name": "mine", "emptyDir": {}}])
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "mine", "mountPath": MOUNT}]
    spec = kind.client.create(pod)["spec"]
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "mine", "mountPath": MOUNT}]


def test_static_pods_mirror_pods_are_left_alone(kind: Cluster) -> None:
    mirror = kind.client.get("pods", "kube-scheduler-control-plane", "kube-system")
    assert "serviceAccountName" not in mirror["spec"] and not mirror["spec"].get("volumes")


def test_token_request_and_the_token_as_a_credential(kind: Cluster) -> None:
    kind.client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot"}})
    answer = kind.client.create_token("bot", "default", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": ["https://kubernetes.default.svc.cluster.local"],
                 "expirationSeconds": 600}})
    assert (answer["kind"], answer["apiVersion"]) == ("TokenRequest", "authentication.k8s.io/v1")
    token = answer["status"]["token"]
    claims = _claims(token)
    sa = kind.client.get("serviceaccounts", "bot")
    assert claims["sub"] == "system:serviceaccount:default:bot"
    assert claims["kubernetes.io"] == {"namespace": "default", "serviceaccount": {
        "name": "bot", "uid": sa["metadata"]["uid"]}}
    assert (claims["exp"] - claims["iat"], claims["nbf"]) == (600, claims["iat"])
    review = Client(kind.endpoint("bot"), token).create({
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    info = review["status"]["userInfo"]
    assert info["username"] == "system:serviceaccount:default:bot"
    assert info["uid"] == sa["metadata"]["uid"]
    assert info["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default",
                              "system:authenticated"]
    assert info["extra"] == {"authentication.kubernetes.io/credential-id": [f"JTI={claims['jti']}"]}
    # A forged signature, an expired token and a recreated account are all 401.
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    for bad in (forged, "a.b.c", "not-a-jwt"):
        with pytest.raises(ApiError) as err:
            Client(kind.endpoint("bot"), bad).create({
                "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        assert err.value.code == 401
    kind.client.delete("serviceaccounts", "bot")
    kind.client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot"}})
    with pytest.raises(ApiError) as err:
        Client(kind.endpoint("bot"), token).list("pods", "default")
    assert err.value.code == 401


def test_a_token_expires_on_the_clusters_clock() -> None:
    c = Cluster(nodes=1, anatomy=True, components=[])
    token = c.kubectl("create token default --duration=10m").strip()
    client = Client(c.endpoint("sa"), token)
    client.create({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    c.run(601)
    with pytest.raises(ApiError) as err:
        client.create({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert err.value.code == 401


def test_a_token_bound_to_a_pod_dies_with_it(kind: Cluster) -> None:
    kind.client.create(_pod("holder"))
    token = kind.kubectl("create token default --bound-object-kind=Pod "
                         "--bound-object-name=holder").strip()
    pod = kind.client.get("pods", "holder")
    assert _claims(token)["kubernetes.io"]["pod"] == {"name": "holder", "uid": pod["metadata"]["uid"]}
    client = Client(kind.endpoint("holder"), token)
    extra = client.create({"apiVersion": "authentication.k8s.io/v1",
                           "kind": "SelfSubjectReview"})["status"]["userInfo"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["holder"]
    kind.client.delete("pods", "holder", "default", grace_period_seconds=0)
    kind.run(2)
    with pytest.raises(ApiError) as err:
        client.list("pods", "default")
    assert err.value.code == 401


@pytest.mark.parametrize(("flags", "error"), [
    # kubectl's own cases (pkg/cmd/create/create_token_test.go)
    ("--duration=-1s", "error: --duration must be greater than or equal to 0"),
    ("--duration=1500ms", "error: --duration cannot be expressed in units less than seconds"),
    ("--audience=test --audience=", "error: --audience must not be an empty string"),
    ("--bound-object-name=x", "error: --bound-object-name can only be set if --bound-object-kind "
                              "is provided"),
    ("--bound-object-uid=x", "error: --bound-object-uid can only be set if --bound-object-kind "
                             "is provided"),
    ("--bound-object-kind=Foo", "error: supported --bound-object-kind values are Node, Pod, Secret"),
    ("--bound-object-kind=Pod", "error: --bound-object-name is required if --bound-object-kind "
                                "is provided"),
])
def test_kubectl_create_token_validates_its_flags(kind: Cluster, flags: str, error: str) -> None:
    assert kind.kubectl(f"create token default {flags}").strip() == error


def test_kubectl_create_token_as_the_server_answers(kind: Cluster) -> None:
    assert kind.kubectl("create token nobody").strip() == \
        'Error from server (NotFound): serviceaccounts "nobody" not found'
    assert kind.kubectl("create token default --duration=5m").strip() == (
        'The TokenRequest "" is invalid: spec.expirationSeconds: Invalid value: 300: may not '
        "specify a duration less than 10 minutes")
    answer = json.loads(kind.kubectl("create token default --duration=1h -o json"))
    assert answer["spec"] == {"audiences": ["https://kubernetes.default.svc.cluster.local"],
                              "expirationSeconds": 3600}
    assert _claims(answer["status"]["token"])["sub"] == "system:serviceaccount:default:default"
    assert kind.kubectl("get sa default").splitlines()[0].split() == ["NAME", "SECRETS", "AGE"]


def _field(number: int, value: bytes | int) -> bytes:
    """One protobuf field: a varint (wire type 0) or length-delimited bytes (wire type 2)."""
    def varint(n: int) -> bytes:
        out = b""
        while True:
            byte, n = n & 0x7F, n >> 7
            out += bytes([byte | (0x80 if n else 0)])
            if not n:
                return out
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def test_kubectls_protobuf_token_request_reads_as_its_json() -> None:
    """What `kubectl create token robot --audience=a --audience=b --duration=1h
    --bound-object-kind=Pod --bound-object-name=web` sends (authentication/v1 generated.proto)."""
    from kubelab.apiserver.endpoints.protobuf import decode_protobuf

    bound = _field(1, b"Pod") + _field(2, b"v1") + _field(3, b"web")
    spec = _field(1, b"a") + _field(1, b"b") + _field(3, bound) + _field(4, 3600)
    raw = _field(1, b"") + _field(2, spec)  # an empty ObjectMeta, then the spec
    body = b"k8s\x00" + _field(1, _field(1, b"authentication.k8s.io/v1") + _field(2, b"TokenRequest")) \
        + _field(2, raw)
    assert decode_protobuf(body) == {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": ["a", "b"], "expirationSeconds": 3600,
                 "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web"}}}


def test_the_same_seed_gives_the_same_volumes_and_tokens() -> None:
    def run() -> tuple[str, str, str]:
        c = Cluster(nodes=1, anatomy=True, seed=3, components=[])
        pod = c.client.create(_pod("same"))
        token = c.kubectl("create token default").strip()
        ca = c.client.get("configmaps", "kube-root-ca.crt")["data"]["ca.crt"]
        return pod["spec"]["volumes"][0]["name"], token, ca
    assert run() == run()


def test_describe_serviceaccount(kind: Cluster) -> None:
    kind.client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "kept"}})
    kind.client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "desc"},
                        "secrets": [{"name": "kept"}, {"name": "gone"}],
                        "imagePullSecrets": [{"name": "regcred"}, {"name": "other"}]})
    assert kind.kubectl("describe sa desc").splitlines() == [
        "Name:                desc",
        "Namespace:           default",
        "Labels:              <none>",
        "Annotations:         <none>",
        "Image pull secrets:  regcred",
        "                     other",
        "Mountable secrets:   kept",
        "                     gone (not found)",
        "Tokens:              <none>",
        "Events:              <none>"]
    assert kind.kubectl("get sa desc --no-headers").split()[:2] == ["desc", "2"]
