"""Issue 30's faithful bodies: a Secret as the API server stores it, and metav1.Time/MicroTime.

A Secret's stringData is converted into data and never stored (pkg/apis/core/v1/conversion.go),
an untyped Secret is Opaque (SetDefaults_Secret), ValidateSecret/ValidateSecretUpdate and
ValidateConfigMapUpdate refuse what upstream refuses. Times are parsed as RFC 3339 with any
offset and fraction and stored in UTC (meta/v1 time.go, micro_time.go), so an event written with
"+02:00" (as kopf writes them) reads back as `kubectl get events` expects; garbage is a 400."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster


@pytest.fixture(scope="module")
def c() -> Cluster:
    return Cluster(nodes=1)


def secret(name: str, **body: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, **body}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_string_data_is_written_into_data_over_the_same_key_and_never_returned(c: Cluster) -> None:
    c.client.create(secret("s1", stringData={"x": "héllo", "z": ""}, data={"x": b64("old"), "y": b64("y")}))
    got = c.get("secrets", "s1")
    assert got["data"] == {"x": b64("héllo"), "y": b64("y"), "z": ""}
    assert "stringData" not in got and got["type"] == "Opaque"
    c.client.patch("secrets", "s1", {"stringData": {"y": "new"}})
    assert c.get("secrets", "s1")["data"]["y"] == b64("new")


@pytest.mark.parametrize(("body", "message"), [
    ({"type": "kubernetes.io/tls", "data": {"tls.crt": ""}}, "data[tls.key]: Required value"),
    ({"type": "kubernetes.io/basic-auth"},
     "[data[%s][username]: Required value, data[%s][password]: Required value]"),
    ({"type": "kubernetes.io/ssh-auth"}, "data[%s][ssh-privatekey]: Required value"),
    ({"type": "kubernetes.io/dockerconfigjson", "stringData": {".dockerconfigjson": "{bad"}},
     'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character '
     "'b' looking for beginning of object key string"),
    ({"type": "kubernetes.io/dockercfg", "stringData": {".dockercfg": ""}},
     'data[.dockercfg]: Invalid value: "<secret contents redacted>": unexpected end of JSON input'),
    ({"type": "kubernetes.io/service-account-token"},
     "metadata.annotations[kubernetes.io/service-account.name]: Required value"),
    ({"data": {"a b": ""}}, "data[a b]: Invalid value: \"a b\": a valid config key must consist"),
    ({"data": {"big": b64("x" * (1024 * 1024 + 1))}}, "data: Too long: may not be more than 1048576 bytes"),
])
def test_validate_secret_refuses_what_upstream_refuses(c: Cluster, body: dict[str, Any],
                                                     message: str) -> None:
    with pytest.raises(ApiError) as err:
        c.client.create(secret("bad", **body))
    assert err.value.code == 422 and message in err.value.message
    assert err.value.message.startswith('Secret "bad" is invalid: ')


def test_typed_secrets_with_their_keys_are_accepted(c: Cluster) -> None:
    c.client.create(secret("tls", type="kubernetes.io/tls", stringData={"tls.crt": "c", "tls.key": "k"}))
    c.client.create(secret("auth", type="kubernetes.io/basic-auth", stringData={"password": ""}))
    c.client.create(secret("pull", type="kubernetes.io/dockerconfigjson",
                           stringData={".dockerconfigjson": '{"auths": {}}'}))
    assert c.get("secrets", "pull")["type"] == "kubernetes.io/dockerconfigjson"


def test_a_secrets_type_never_changes_and_immutable_objects_keep_their_data(c: Cluster) -> None:
    c.client.create(secret("im", immutable=True, data={"a": b64("a")}))
    with pytest.raises(ApiError) as err:
        c.client.patch("secrets", "im", {"type": "Other", "data": {"a": b64("b")}})
    assert err.value.message == ('Secret "im" is invalid: [type: Invalid value: "Other": field is '
                                 "immutable, data: Forbidden: field is immutable when `immutable` is set]")
    with pytest.raises(ApiError, match="immutable: Forbidden: field is immutable when `immutable` is set"):
        c.client.patch("secrets", "im", {"immutable": False})
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
                     "immutable": True, "data": {"k": "v"}})
    with pytest.raises(ApiError, match="data: Forbidden: field is immutable when `immutable` is set"):
        c.client.patch("configmaps", "cm", {"data": {"k": "w"}})
    c.client.patch("configmaps", "cm", {"metadata": {"labels": {"ok": "yes"}}})  # metadata may change


def event(name: str, **times: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "x", "namespace": "default"}, **times}


@pytest.mark.parametrize(("sent", "time", "micro"), [
    ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00.000000Z"),
    ("2024-01-01T10:00:00+00:00", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00.000000Z"),
    ("2024-01-01T10:00:00.5+02:00", "2024-01-01T08:00:00Z", "2024-01-01T08:00:00.500000Z"),
    ("2024-01-01T00:30:00.123456789-01:00", "2024-01-01T01:30:00Z", "2024-01-01T01:30:00.123456Z"),
])
def test_times_are_read_with_any_offset_and_stored_in_utc(c: Cluster, sent: str, time: str,
                                                        micro: str) -> None:
    name = "t" + re.sub("[^0-9a-z]", "-", sent.lower())
    c.client.create(event(name, lastTimestamp=sent, eventTime=sent))
    got = c.get("events", name)
    assert (got["lastTimestamp"], got["eventTime"]) == (time, micro)
    assert "pod/x" in c.kubectl("get events")  # the printer reads what was stored


@pytest.mark.parametrize(("sent", "why"), [
    ("nope", 'parsing time "nope" as "2006-01-02T15:04:05Z07:00": cannot parse "nope" as "2006"'),
    ("2024-01-01 10:00:00Z", 'cannot parse "2024-01-01 10:00:00Z" as "2006"'),
    ("2024-13-01T00:00:00Z", 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2024-02-30T00:00:00Z", 'parsing time "2024-02-30T00:00:00Z": day out of range'),
    ("2024-01-01T24:00:00Z", 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
])
def test_a_time_that_is_not_rfc3339_is_a_bad_request(c: Cluster, sent: str, why: str) -> None:
    with pytest.raises(ApiError) as err:
        c.client.create(event("bad", firstTimestamp=sent))
    assert err.value.code == 400
    assert err.value.message.startswith('Event in version "v1" cannot be handled as a Event: ')
    assert why in err.value.message
