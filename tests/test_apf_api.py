"""The flowcontrol.apiserver.k8s.io/v1 API: validation in upstream's words, kubectl's columns,
and priority and fairness over HTTPS (the X-Kubernetes-PF-* headers, 429 with Retry-After)."""

from __future__ import annotations

import asyncio
import base64
import http.client
import ssl
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.flowcontrol import QueuedRequest
from kubelab.apiserver.flowcontrol.work_estimator import WorkEstimate
from kubelab.serve.server import kubectl_binary

FC = "flowcontrol.apiserver.k8s.io/v1"


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(nodes=1, apf=True)
    c.run(1)
    return c


def _invalid(c: Cluster, obj: dict[str, Any]) -> str:
    with pytest.raises(ApiError) as err:
        c.client.create(obj)
    assert err.value.code == 422
    return err.value.message


def _fs(name: str, **spec: Any) -> dict[str, Any]:
    base = {"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 500,
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "bob"}}],
                       "resourceRules": [{"verbs": ["list"], "apiGroups": [""],
                                          "resources": ["pods"], "namespaces": ["*"]}]}]}
    return {"apiVersion": FC, "kind": "FlowSchema", "metadata": {"name": name},
            "spec": {**base, **spec}}


def test_flow_schema_validation_speaks_upstreams_words(cluster: Cluster) -> None:
    msg = _invalid(cluster, _fs("one", matchingPrecedence=1))
    assert msg == ('FlowSchema.flowcontrol.apiserver.k8s.io "one" is invalid: spec.matchingPrecedence: '
                   "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1")
    msg = _invalid(cluster, _fs("big", matchingPrecedence=10001,
                                distinguisherMethod={"type": "ByGroup"}))
    assert "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000" in msg
    assert 'spec.distinguisherMethod.type: Unsupported value: "ByGroup": supported values: ' \
           '"ByNamespace", "ByUser"' in msg
    msg = _invalid(cluster, _fs("rules", rules=[{"subjects": [{"kind": "User"}],
                                                  "resourceRules": [{"verbs": ["*", "get"]}]}]))
    assert "spec.rules[0].subjects[0].user: Required value: user is required when subject kind " \
           "is 'User'" in msg
    assert "spec.rules[0].resourceRules[0].verbs: Invalid value: " in msg
    assert "if '*' is present, must not specify other verbs" in msg
    assert "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must " \
           "supply at least one api group" in msg
    assert "spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are " \
           "not cluster scoped must supply at least one namespace" in msg
    assert cluster.client.list("flowschemas")["items"][0]["metadata"]["name"] != "one"


def test_mandatory_objects_keep_their_fixed_spec(cluster: Cluster) -> None:
    fs = cluster.client.get("flowschemas", "catch-all", "")
    fs["spec"]["matchingPrecedence"] = 9999
    with pytest.raises(ApiError) as err:
        cluster.client.update(fs)
    assert "spec: Invalid value: " in err.value.message
    assert "spec of 'catch-all' must equal the fixed value" in err.value.message


def test_priority_level_validation_speaks_upstreams_words(cluster: Cluster) -> None:
    def pl(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": FC, "kind": "PriorityLevelConfiguration", "metadata": {"name": name},
                "spec": spec}

    msg = _invalid(cluster, pl("x", {"type": "Exempt"}))
    assert "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is " \
           "'exempt'" in msg
    msg = _invalid(cluster, pl("y", {"type": "Limited", "limited": {
        "nominalConcurrencyShares": -1, "lendablePercent": 101,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 512, "handSize": 8,
                                                       "queueLengthLimit": 5}}}}))
    assert "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative " \
           "integer" in msg
    assert "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, " \
           "inclusive" in msg
    assert "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy " \
           "bits of deckSize 512 and handSize 8 should not be greater than 60" in msg
    msg = _invalid(cluster, pl("z", {"type": "Limited", "limited": {
        "limitResponse": {"type": "Reject", "queuing": {"queues": 1}}}}))
    assert "spec.limited.limitResponse.queuing: Forbidden: must be nil if " \
           "limited.limitResponse.type is not Limited" in msg


def test_kubectl_get_prints_upstreams_columns_in_matching_order(cluster: Cluster) -> None:
    out = cluster.kubectl("get flowschemas").splitlines()
    assert out[0].split() == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD",
                              "AGE", "MISSINGPL"]
    rows = [line.split() for line in out[1:]]
    assert [r[0] for r in rows][:3] == ["exempt", "probes", "system-leader-election"]
    assert rows[-1] == ["catch-all", "catch-all", "10000", "ByUser", "1s", "False"]
    assert ["exempt", "exempt", "1", "<none>", "1s", "False"] in rows
    out = cluster.kubectl("get prioritylevelconfigurations").splitlines()
    assert out[0].split() == ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE",
                              "QUEUELENGTHLIMIT", "AGE"]
    rows = [line.split() for line in out[1:]]
    assert ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "1s"] in rows
    assert ["catch-all", "Limited", "5", "<none>", "<none>", "<none>", "1s"] in rows
    assert ["workload-low", "Limited", "100", "128", "6", "50", "1s"] in rows


def test_a_flow_schema_naming_a_missing_level_is_dangling_and_ignored() -> None:
    c = Cluster(nodes=1, apf=True)
    c.client.create(_fs("bobs", priorityLevelConfiguration={"name": "nowhere"}))
    c.run(0.1)
    fs = c.client.get("flowschemas", "bobs", "")
    assert fs["status"]["conditions"] == [{
        "type": "Dangling", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z",
        "reason": "NotFound", "message": 'This FlowSchema references the '
        'PriorityLevelConfiguration object named "nowhere" but there is no such object'}]
    bob = c.client_for("bob")
    with pytest.raises(ApiError):
        bob.list("pods", "default")
    assert c.apiserver.audit[-1].flow_schema == "global-default"


def _ca_and_token(c: Cluster, tmp: Path) -> tuple[str, str]:
    config = yaml.safe_load(Path(c.kubeconfig(str(tmp / "kc.yaml"))).read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    return ca, config["users"][0]["user"]["token"]


def _get(url: str, ca: str, token: str, path: str) -> tuple[int, dict[str, str], bytes]:
    host, port = url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), timeout=10,
                                       context=ssl.create_default_context(cadata=ca))
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    # header names are case-insensitive (Go sends X-Kubernetes-Pf-Flowschema-Uid)
    result = response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    conn.close()
    return result


def test_priority_and_fairness_over_https(tmp_path: Path) -> None:
    c = Cluster(nodes=1, apf=True)
    c.apiserver.add_token("token-bob", "bob", [])
    fc = c.apiserver.flowcontrol
    assert fc is not None

    async def main() -> None:
        url = c.serve(port=0, speed=1)
        ca, admin = _ca_and_token(c, tmp_path)
        loop = asyncio.get_running_loop()
        path = "/api/v1/namespaces/default/configmaps"
        code, headers, _ = await loop.run_in_executor(None, _get, url, ca, "token-bob", path)
        assert code == 403  # classified before authorization: the headers say how
        fs = c.client.get("flowschemas", "global-default", "")
        pl = c.client.get("prioritylevelconfigurations", "global-default", "")
        assert headers["x-kubernetes-pf-flowschema-uid"] == fs["metadata"]["uid"]
        assert headers["x-kubernetes-pf-prioritylevel-uid"] == pl["metadata"]["uid"]
        # Every seat of global-default taken (requests that never end) and every queue full:
        # the next request is refused.
        level = fc.levels["global-default"].queues
        while level.seats_in_use:   # bob's first request is done
            await asyncio.sleep(0.01)
        while level.seats_in_use < level.concurrency_limit:
            level.start_request(QueuedRequest("busy", WorkEstimate(), c.clock.now), 0)
        for queue in level.queues:
            while len(queue.waiting) < level.queue_length_limit:
                busy = QueuedRequest("busy", WorkEstimate(), c.clock.now)
                busy.queue = queue.index
                level.enqueue(busy)
        code, headers, body = await loop.run_in_executor(None, _get, url, ca, "token-bob", path)
        assert (code, body) == (429, b"Too many requests, please try again later.\n")
        assert headers["retry-after"] == "1"
        assert headers["content-type"].startswith("text/plain")
        assert headers["x-kubernetes-pf-prioritylevel-uid"] == pl["metadata"]["uid"]
        code, headers, _ = await loop.run_in_executor(None, _get, url, ca, admin, path)
        exempt = c.client.get("flowschemas", "exempt", "")
        assert code == 200 and headers["x-kubernetes-pf-flowschema-uid"] == exempt["metadata"]["uid"]
        if kubectl_binary():  # the real kubectl prints the server's Table
            out = await c.server.kubectl("get flowschemas,prioritylevelconfigurations")
            assert "flowschema.flowcontrol.apiserver.k8s.io/system-node-high" in out
            assert "MATCHINGPRECEDENCE" in out and "NOMINALCONCURRENCYSHARES" in out
        await c.server.stop()

    asyncio.run(main())
