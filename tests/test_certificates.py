"""CertificateSigningRequests: the API (validation.go's cases, the three strategies, the
table), the approver, the signer and the cleaner (pkg/controller/certificates), the kubelets'
client certificates on the anatomy cluster, and `kubectl certificate approve|deny`."""

from __future__ import annotations

import base64
import datetime
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubelab.api.certificates import make_csr, parse_csr, validate_kubelet_client_csr
from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.controllers.certificates.cleaner import CSRCleanerController
from kubelab.controllers.certificates.sarapprove import is_node_client_cert, is_self_node_client_cert
from kubelab.controllers.certificates.signer import is_request_for_signer, signing_duration
from kubelab.kubelet.certificate import digested_name

CLIENT = "kubernetes.io/kube-apiserver-client"
KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"


def request(cn: str = "alice", orgs: tuple[str, ...] = ("devs",), seed: bytes = b"k" * 32) -> str:
    key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    return base64.b64encode(make_csr(key, cn, orgs)).decode()


def csr(name: str = "alice", **spec: Any) -> dict[str, Any]:
    body = {"request": request(), "signerName": CLIENT, "usages": ["client auth"], **spec}
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name}, "spec": {k: v for k, v in body.items() if v is not None}}


@pytest.fixture(scope="module")
def anatomy() -> Cluster:
    c = Cluster(nodes=2, seed=7, anatomy=True)
    c.run(10)
    return c


@pytest.fixture
def plain() -> Cluster:
    return Cluster(nodes=1, seed=1, anatomy=False)  # no kubelet CSRs beside the tests' own


def _error(c: Cluster, obj: dict[str, Any]) -> str:
    with pytest.raises(ApiError) as err:
        c.client.create(obj)
    assert err.value.code == 422
    return err.value.message


# ------------------------------------------------------------------ the API


@pytest.mark.parametrize(("spec", "message"), [
    ({"request": "aGVsbG8="}, 'spec.request: Invalid value: "aGVsbG8=": PEM block type must be '
                              "CERTIFICATE REQUEST"),
    ({"usages": []}, "spec.usages: Required value"),
    ({"usages": ["client auth", "client auth"]}, 'spec.usages[1]: Duplicate value: "client auth"'),
    ({"usages": ["fly"]}, 'spec.usages[0]: Unsupported value: "fly": supported values: "any", '),
    ({"signerName": None}, "spec.signerName: Required value"),
    ({"signerName": "foo"}, "spec.signerName: Invalid value: \"foo\": must be a fully qualified "
                            "domain and path of the form 'example.com/signer-name'"),
    ({"signerName": "example/signer"}, 'spec.signerName: Invalid value: "example": should be a '
                                       "domain with at least two segments separated by dots"),
    ({"signerName": "example.com/Signer"}, 'spec.signerName: Invalid value: "Signer": validating label '
                                           '"Signer": a lowercase RFC 1123 subdomain must consist of'),
    ({"signerName": "kubernetes.io/legacy-unknown"},
     "the legacy signerName is not allowed via this API version"),
    ({"expirationSeconds": 599}, "spec.expirationSeconds: Invalid value: 599: may not specify a "
                                 "duration less than 600 seconds (10 minutes)"),
])
def test_validation_refuses_in_upstreams_words(plain: Cluster, spec: dict[str, Any], message: str) -> None:
    text = _error(plain, csr(**spec))
    assert text.startswith('CertificateSigningRequest.certificates.k8s.io "alice" is invalid: ')
    assert message in text


def test_create_takes_the_requestor_from_the_request_and_starts_pending(plain: Cluster) -> None:
    body = csr(expirationSeconds=600, username="mallory", groups=["system:masters"])
    body["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    created = plain.client.create(body)
    assert created["spec"]["username"] == "kubernetes-admin"  # the user who sent it
    assert created["spec"]["groups"] == ["system:masters", "system:authenticated"]
    assert created["status"] == {}  # nobody creates a pre-approved request
    name = plain.kubectl("get csr alice").splitlines()
    assert name[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    assert name[1].split() == ["alice", "0s", CLIENT, "kubernetes-admin", "10m", "Pending"]
    assert plain.kubectl("get certificatesigningrequests -o name") == \
        "certificatesigningrequest.certificates.k8s.io/alice"


def test_each_path_changes_only_its_part(plain: Cluster) -> None:
    plain.client.create(csr())
    # The object: spec and status stay, metadata changes.
    obj = plain.client.get("certificatesigningrequests", "alice", "")
    obj["spec"]["usages"] = ["server auth"]
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    obj["metadata"]["labels"] = {"team": "a"}
    updated = plain.client.update(obj)
    assert updated["spec"]["usages"] == ["client auth"] and updated["status"] == {}
    assert updated["metadata"]["labels"] == {"team": "a"}
    # /status may not decide: the approval stays the approver's.
    obj = plain.client.get("certificatesigningrequests", "alice", "")
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    with pytest.raises(ApiError) as err:
        plain.client.update(obj, subresource="status")
    assert 'status.conditions: Forbidden: updates may not add a condition of type "Approved"' \
        in err.value.message
    # /approval decides, stamps the times, and may not set the certificate (it keeps the old).
    obj["status"] = {"conditions": [{"type": "Approved", "reason": "R"}], "certificate": "eA=="}
    approved = plain.client.update(obj, subresource="approval")
    condition = approved["status"]["conditions"][0]
    assert condition["status"] == "True"  # SetDefaults_CertificateSigningRequestCondition
    assert condition["lastUpdateTime"] == condition["lastTransitionTime"] == \
        approved["metadata"]["creationTimestamp"]
    assert "certificate" not in approved["status"]
    # Approved and Denied together are refused.
    approved["status"]["conditions"].append({"type": "Denied", "status": "True"})
    with pytest.raises(ApiError) as err:
        plain.client.update(approved, subresource="approval")
    assert 'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions ' \
           "are mutually exclusive" in err.value.message
    # /status carries the certificate; once set it may not change, and must be PEM.
    obj = plain.client.get("certificatesigningrequests", "alice", "")
    obj["status"]["certificate"] = "eA=="
    with pytest.raises(ApiError) as err:
        plain.client.update(obj, subresource="status")
    assert 'status.certificate: Invalid value: "<certificate data>": must contain at least one ' \
           "CERTIFICATE PEM block" in err.value.message


def test_the_kubelet_client_rules() -> None:
    kubelet = parse_csr(request("system:node:n1", ("system:nodes",)))
    usages = {"digital signature", "client auth"}
    assert validate_kubelet_client_csr(kubelet, usages) == ""
    assert validate_kubelet_client_csr(kubelet, usages | {"key encipherment"}) == ""
    assert validate_kubelet_client_csr(kubelet, {"client auth"}) == \
        "usages did not match [client auth digital signature key encipherment]"
    assert validate_kubelet_client_csr(parse_csr(request("system:node:n1", ())), usages) == \
        "subject organization is not system:nodes"
    assert validate_kubelet_client_csr(parse_csr(request("n1", ("system:nodes",))), usages) == \
        "subject common name does not begin with system:node:"


# ------------------------------------------------------------------ the controllers


def _kubelet_csr(username: str, cn: str = "system:node:n1", signer: str = KUBELET) -> dict[str, Any]:
    return {"spec": {"request": request(cn, ("system:nodes",)), "signerName": signer,
                     "usages": ["digital signature", "client auth"], "username": username}}


def test_the_approvers_recognizers() -> None:
    assert is_self_node_client_cert(_kubelet_csr("system:node:n1"))
    assert not is_self_node_client_cert(_kubelet_csr("system:bootstrap:abcdef"))
    assert is_node_client_cert(_kubelet_csr("system:bootstrap:abcdef"))
    assert not is_node_client_cert(_kubelet_csr("system:node:n1", signer=CLIENT))


def test_the_signers_duration_and_checks() -> None:
    assert signing_duration(None) == 365 * 24 * 3600  # --cluster-signing-duration
    assert signing_duration(3600) == 3600
    assert signing_duration(10**9) == 365 * 24 * 3600
    bad = _kubelet_csr("x", cn="n1")
    assert is_request_for_signer(KUBELET, bad) == (
        True, "subject common name does not begin with system:node:")
    assert is_request_for_signer(CLIENT, bad) == (False, "")
    assert is_request_for_signer(CLIENT, {**csr(usages=["server auth"])}) == (
        True, "invalid usage for client certificate: server auth")


def test_every_kubelet_has_an_issued_client_certificate(anatomy: Cluster) -> None:
    rows = [line.split() for line in anatomy.kubectl("get csr --no-headers").splitlines()]
    # kubeadm init's node rotates with its own identity (generateName csr-); the nodes that
    # joined bootstrap with kind's token (node-csr-<digest>), as `kubectl get csr` on kind shows.
    assert sorted((r[0].startswith("node-csr-"), r[3], r[-1]) for r in rows) == [
        (False, "system:node:control-plane", "Approved,Issued"),
        (True, "system:bootstrap:abcdef", "Approved,Issued"),
        (True, "system:bootstrap:abcdef", "Approved,Issued")]
    ca = x509.load_pem_x509_certificate(anatomy.root_ca)
    subjects = set()
    for item in anatomy.client.list("certificatesigningrequests", "")["items"]:
        assert item["status"]["conditions"][0]["reason"] == "AutoApproved"
        cert = x509.load_pem_x509_certificate(base64.b64decode(item["status"]["certificate"]))
        cert.verify_directly_issued_by(ca)
        subjects.add(cert.subject.rfc4514_string())
        assert cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value == \
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH])
    assert subjects == {f"CN=system:node:{n},O=system:nodes" for n in ("control-plane", "node-1", "node-2")}
    self_approved = anatomy.client.list("certificatesigningrequests", "")["items"][0]
    assert self_approved["status"]["conditions"][0]["message"] == \
        "Auto approving self kubelet client certificate after SubjectAccessReview."
    # Each kubelet stored it: a restarted kubelet asks no more.
    stored = anatomy.components["kubelet/node-1"].client_certificate.certificate
    assert stored.startswith(b"-----BEGIN CERTIFICATE")


def test_a_restarted_kubelet_finds_its_certificate_and_asks_no_more() -> None:
    c = Cluster(nodes=1, seed=4, anatomy=True)
    c.run(3)
    before = c.client.list("certificatesigningrequests", "")["items"]
    c.faults.crash("kubelet/node-1")
    c.faults.restart("kubelet/node-1")
    c.run(3)
    assert c.client.list("certificatesigningrequests", "")["items"] == before


def test_the_bootstrap_name_is_the_digest_of_key_subject_and_usages() -> None:
    name = digested_name(b"key", "system:node:n1", ("system:nodes",), ("digital signature", "client auth"))
    assert name == digested_name(b"key", "system:node:n1", ("system:nodes",),
                                 ("digital signature", "client auth"))
    assert name.startswith("node-csr-") and len(name) == len("node-csr-") + 43
    assert name != digested_name(b"key", "system:node:n", ("1system:nodes",),
                                 ("digital signature", "client auth"))


def test_same_seed_same_requests() -> None:
    names = []
    for _ in range(2):
        c = Cluster(nodes=1, seed=11, anatomy=True)
        c.run(3)
        items = c.client.list("certificatesigningrequests", "")["items"]
        names.append(sorted(i["metadata"]["name"] for i in items))
    assert names[0] == names[1] and len(names[0]) == 2


def test_approve_signs_deny_refuses_and_the_cleaner_deletes(anatomy: Cluster) -> None:
    c = anatomy
    c.client.create(csr("alice", expirationSeconds=3600))
    c.client.create(csr("bob", request=request("bob", (), b"b" * 32)))
    c.client.create(csr("carol", request=request("carol", (), b"c" * 32)))
    c.run(2)
    assert c.kubectl("get csr alice --no-headers").split()[-1] == "Pending"  # not a kubelet's
    assert c.kubectl("certificate approve alice") == \
        "certificatesigningrequest.certificates.k8s.io/alice approved"
    assert c.kubectl("certificate deny bob") == "certificatesigningrequest.certificates.k8s.io/bob denied"
    out = c.kubectl("certificate approve bob")
    assert out == 'error: certificate signing request "bob" is already Denied'
    c.run(2)
    assert [c.kubectl(f"get csr {n} --no-headers").split()[-1] for n in ("alice", "bob", "carol")] == \
        ["Approved,Issued", "Denied", "Pending"]
    alice = c.client.get("certificatesigningrequests", "alice", "")
    assert alice["status"]["conditions"][0]["reason"] == "KubectlApprove"
    cert = x509.load_pem_x509_certificate(base64.b64decode(alice["status"]["certificate"]))
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(c.root_ca))
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert lifetime == datetime.timedelta(hours=1)  # expirationSeconds, backdated 5 minutes
    described = c.kubectl("describe csr alice")
    assert "Requesting User:     kubernetes-admin" in described
    assert "Status:              Approved,Issued" in described and "Organization:   devs" in described


class _Clock:
    now = 0.0


class _Deletes:
    def __init__(self) -> None:
        self.names: list[str] = []

    def delete(self, resource: str, name: str, namespace: str) -> None:
        self.names.append(name)


@pytest.mark.parametrize(("age", "deleted"), [(3599, set()), (3601, {"issued", "denied", "failed"}),
                                             (24 * 3600 + 1, {"issued", "denied", "failed", "pending"})])
def test_the_cleaners_deadlines(age: float, deleted: set[str]) -> None:
    def at(t: float) -> str:
        return (datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=t)) \
            .strftime("%Y-%m-%dT%H:%M:%SZ")

    def condition(kind: str) -> dict[str, Any]:
        return {"type": kind, "status": "True", "lastUpdateTime": at(0)}
    cert = base64.b64encode(b"issued").decode()  # (not PEM: isIssuedExpired cannot tell)
    cases = {
        "issued": {"conditions": [condition("Approved")], "certificate": cert},
        "approved": {"conditions": [condition("Approved")]},  # not issued: left for the signer
        "denied": {"conditions": [condition("Denied")]},
        "failed": {"conditions": [condition("Approved"), condition("Failed")]},
        "pending": {},
    }
    cleaner = CSRCleanerController.__new__(CSRCleanerController)
    cleaner.clock, cleaner.client = _Clock(), _Deletes()  # type: ignore[assignment]
    cleaner.clock.now = age
    for name, status in cases.items():
        cleaner.handle({"metadata": {"name": name, "creationTimestamp": at(0)}, "status": status})
    assert set(cleaner.client.names) == deleted  # type: ignore[attr-defined]


def test_approving_and_signing_need_the_signer_verbs(plain: Cluster) -> None:
    c = plain
    c.client.create(csr("alice"))
    for obj in ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": "csr-clerk"},
                 "rules": [{"apiGroups": ["certificates.k8s.io"], "verbs": ["get", "update"],
                            "resources": ["certificatesigningrequests",
                                          "certificatesigningrequests/approval",
                                          "certificatesigningrequests/status"]}]},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": "csr-clerk"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": "csr-clerk"},
                 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}):
        c.client.create(obj)
    assert c.kubectl("certificate approve alice --as=bob") == (
        'Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "alice" is '
        'forbidden: user not permitted to approve requests with signerName '
        '"kubernetes.io/kube-apiserver-client"')
    role = c.client.get("clusterroles", "csr-clerk", "")
    role["rules"].append({"apiGroups": ["certificates.k8s.io"], "verbs": ["approve"],
                          "resources": ["signers"], "resourceNames": ["kubernetes.io/*"]})
    c.client.update(role)
    assert c.kubectl("certificate approve alice --as=bob").endswith("alice approved")
    # system:masters may not be asked of the client signer (CertificateSubjectRestriction).
    with pytest.raises(ApiError) as err:
        c.client.create(csr("root", request=request("root", ("system:masters",))))
    assert err.value.message == (
        'certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed")


def test_without_the_anatomy_only_the_garbage_collector_looks_at_csrs() -> None:
    # Nothing asks for a certificate and no CSR controller runs; the garbage collector
    # monitors every deletable kind, CSRs too (as upstream's), so its list and watch are all
    # the trace of a cluster without the anatomy gains.
    c = Cluster(nodes=1, seed=2, anatomy=False)
    c.run(5)
    seen = {(r.component, r.verb) for r in c.trace.filter(object_prefix="certificatesigningrequests")}
    assert seen == {("apiserver", "list"), ("apiserver", "watch"), ("controller-manager/reflector", "list"),
                    ("controller-manager/reflector", "watch")}
    assert c.client.list("certificatesigningrequests", "")["items"] == []
