"""ServiceAccounts through `kubelab serve`, judged by the real kubectl: the `default` account
and kube-root-ca.crt (the CA kubectl itself trusts), `kubectl create token` and the token as a
bearer credential (`auth whoami`, RBAC for the account), get and describe."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from serve_helpers import KUBECTL, Served, serving

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (make installs it)")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve"), "--nodes", "1", "--speed", "4")


def _eventually(check: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            assert callable(check)
            check()
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _claims(token: str) -> dict[str, object]:
    part = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))))


def test_every_namespace_gets_its_default_account_and_the_servers_ca(served: Served) -> None:
    served.kubectl("create", "namespace", "team")

    def published() -> None:
        rows = served.kubectl("get", "sa", "-n", "team").stdout.splitlines()
        assert rows[0].split() == ["NAME", "SECRETS", "AGE"]
        assert rows[1].split()[:2] == ["default", "0"]
        cm = json.loads(served.kubectl("get", "cm", "kube-root-ca.crt", "-n", "team", "-o", "json").stdout)
        # The CA in the kubeconfig, the one that signed the HTTPS certificate kubectl verified.
        config = yaml.safe_load(Path(served.kubeconfig).read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        assert cm["data"] == {"ca.crt": ca}
    _eventually(published)
    described = served.kubectl("describe", "sa", "default", "-n", "team").stdout
    assert [line.split(":")[0] for line in described.splitlines()] == [
        "Name", "Namespace", "Labels", "Annotations", "Image pull secrets", "Mountable secrets",
        "Tokens", "Events"]


def test_create_token_and_use_it(served: Served) -> None:
    served.kubectl("create", "serviceaccount", "robot")
    token = served.kubectl("create", "token", "robot", "--duration=2h").stdout.strip()
    claims = _claims(token)
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert claims["exp"] == claims["iat"] + 7200  # type: ignore[operator]
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert header["alg"] == "RS256"  # signed with the key kubelab serve made at start
    as_robot = ("--token", token)
    whoami = served.kubectl("auth", "whoami", *as_robot).stdout
    assert "system:serviceaccount:default:robot" in whoami
    assert "system:serviceaccounts:default" in whoami and "system:authenticated" in whoami
    refused = served.kubectl("get", "pods", *as_robot, check=False)
    assert refused.returncode != 0
    assert 'User "system:serviceaccount:default:robot" cannot list resource "pods"' in refused.stderr
    served.kubectl("create", "rolebinding", "robot-view", "--clusterrole=view",
                   "--serviceaccount=default:robot")
    _eventually(lambda: served.kubectl("get", "pods", *as_robot))
    # A token for an account that no longer exists is no credential.
    served.kubectl("delete", "serviceaccount", "robot")
    gone = served.kubectl("get", "pods", *as_robot, check=False)
    assert gone.returncode != 0 and "Unauthorized" in gone.stderr
    missing = served.kubectl("create", "token", "nobody", check=False)
    assert 'serviceaccounts "nobody" not found' in missing.stderr


def test_the_official_python_client_requests_a_token(served: Served) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    api_client = kubernetes.config.new_client_from_config(config_file=str(served.kubeconfig))
    core = kubernetes.client.CoreV1Api(api_client)
    core.create_namespaced_service_account("default", {"metadata": {"name": "py"}})
    answer = core.create_namespaced_service_account_token("py", "default", {
        "spec": {"audiences": ["https://kubernetes.default.svc.cluster.local"],
                 "expirationSeconds": 3600}})
    assert _claims(answer.status.token)["sub"] == "system:serviceaccount:default:py"
    assert answer.status.expiration_timestamp is not None  # a metav1.Time the client parsed
    accounts = [sa.metadata.name for sa in core.list_namespaced_service_account("default").items]
    assert "default" in accounts and "py" in accounts


def test_the_token_in_a_pod_is_its_accounts_credential(served: Served) -> None:
    """The kubelet's token manager filled the volume with a TokenRequest bound to the pod,
    signed with the server's RSA key: kubectl's `auth whoami` with it is the account."""
    served.kubectl("run", "reader", "--image=busybox", "--", "sleep", "3600")
    served.kubectl("wait", "--for=condition=Ready", "pod/reader", "--timeout=60s")
    token = served.kubectl("exec", "reader", "--", "cat",
                           "/var/run/secrets/kubernetes.io/serviceaccount/token").stdout.strip()
    assert json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))["alg"] == "RS256"
    assert _claims(token)["kubernetes.io"]["pod"]["name"] == "reader"  # type: ignore[index]
    whoami = served.kubectl("auth", "whoami", "--token", token).stdout
    assert "system:serviceaccount:default:default" in whoami
    assert "authentication.kubernetes.io/pod-name" in whoami and "[reader]" in whoami
