"""kubelab's own HTTP transport against `kubelab serve`: the client, a watch, an informer and
notebook 03's sample controller, all in this process, talking HTTPS to the served cluster."""

from __future__ import annotations

import asyncio
import base64
import ssl
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from serve_helpers import Served, serving
from transport_helpers import configmap, error, run, until

from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.client import Client, ResourceEventHandler
from kubelab.samples.sample_controller import ConfigMapCopier
from kubelab.serve import connect
from kubelab.serve.certs import make_serving_certs
from kubelab.serve.transport.clienterrors import ConnectionFailed
from kubelab.serve.transport.restconfig import ConfigError, RestConfig, load_rest_config
from kubelab.serve.transport.transport import HTTPTransport


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("transport"), "--nodes", "1", "--speed", "4")


@pytest.fixture(scope="module")
def client(served: Served) -> Client:
    return Client.from_kubeconfig(served.kubeconfig)


# ---------------------------------------------------------------- requests


def test_crud_and_patch_types_over_https(client: Client) -> None:
    # kubelab serve's cluster has kind's control-plane node beside its one worker.
    assert [n["metadata"]["name"] for n in client.list("nodes")["items"]] == ["control-plane", "node-1"]
    created = client.create(configmap("crud", {"a": "1"}))
    assert created["metadata"]["namespace"] == "default" and created["metadata"]["uid"]
    got = client.get("configmaps", "crud")
    got["data"]["b"] = "2"
    updated = client.update(got)
    assert updated["data"] == {"a": "1", "b": "2"}
    stale = error(lambda: client.update(got))  # got's resourceVersion is gone now
    assert (stale.code, stale.reason) == (409, "Conflict")
    assert stale.message == ('Operation cannot be fulfilled on configmaps "crud": the object has '
                             "been modified; please apply your changes to the latest version and try again")
    client.patch("configmaps", "crud", {"data": {"m": "merge"}})
    client.patch("configmaps", "crud", {"data": {"s": "strategic"}}, patch_type="strategic")
    patched = client.patch("configmaps", "crud", [{"op": "remove", "path": "/data/a"}], patch_type="json")
    assert patched["data"] == {"b": "2", "m": "merge", "s": "strategic"}
    # The Content-Type says the patch type: a strategic merge patch merges containers by name
    # (the port stays), a merge patch replaces the list.
    container = {"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}
    client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "patched"},
                   "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "patched"}},
                            "template": {"metadata": {"labels": {"app": "patched"}},
                                         "spec": {"containers": [container]}}}})
    image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}
    merged = client.patch("deployments", "patched", image, patch_type="strategic")
    assert merged["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"}]
    replaced = client.patch("deployments", "patched", image, patch_type="merge")
    assert "ports" not in replaced["spec"]["template"]["spec"]["containers"][0]
    client.delete("deployments", "patched")
    client.delete("configmaps", "crud", preconditions={"uid": created["metadata"]["uid"]})
    gone = error(lambda: client.get("configmaps", "crud"))
    assert (gone.code, gone.reason, gone.message) == (404, "NotFound", 'configmaps "crud" not found')
    assert gone.details == {"name": "crud", "kind": "configmaps"}


def test_invalid_forbidden_and_dry_run(served: Served, client: Client) -> None:
    bad = error(lambda: client.create(configmap("Bad_Name")))
    assert (bad.code, bad.reason) == (422, "Invalid")
    assert bad.message.startswith('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"')
    assert bad.details["causes"][0]["field"] == "metadata.name"
    viewer = Client.from_kubeconfig(served.kubeconfig, context="kubelab-viewer")
    assert viewer.token != client.token
    denied = error(lambda: viewer.create(configmap("viewer-was-here")))
    assert (denied.code, denied.reason) == (403, "Forbidden")
    assert denied.message == ('configmaps is forbidden: User "viewer" cannot create resource '
                              '"configmaps" in API group "" in the namespace "default"')
    viewer.list("configmaps", "default")  # the view role may read
    dry = client.api.handle(Request("create", "configmaps", namespace="default",
                                    body=configmap("dry"), dry_run=True, token=client.token))
    assert dry["metadata"]["name"] == "dry"
    assert error(lambda: client.get("configmaps", "dry")).code == 404  # nothing was stored


def test_selectors_and_pages_are_query_parameters(client: Client) -> None:
    for i in range(3):
        client.create(configmap(f"page-{i}", tier="paged"))
    client.create(configmap("unpaged", tier="other"))
    everything = client.list("configmaps", "default", label_selector="tier=paged")
    assert sorted(o["metadata"]["name"] for o in everything["items"]) == ["page-0", "page-1", "page-2"]
    first = client.list("configmaps", "default", label_selector="tier in (paged)", limit=2)
    assert len(first["items"]) == 2 and first["metadata"]["continue"]
    rest = client.list("configmaps", "default", label_selector="tier in (paged)", limit=2,
                       continue_token=first["metadata"]["continue"])
    assert [o["metadata"]["name"] for o in first["items"] + rest["items"]] == ["page-0", "page-1", "page-2"]
    named = client.list("configmaps", "default", field_selector="metadata.name=unpaged")
    assert [o["metadata"]["name"] for o in named["items"]] == ["unpaged"]
    transport = client.api
    assert isinstance(transport, HTTPTransport)
    assert transport.url(Request("list", "pods", namespace="ns", label_selector="a=b", limit=5,
                                 resource_version="0")) == \
        "/api/v1/namespaces/ns/pods?labelSelector=a%3Db&limit=5&resourceVersion=0"
    assert transport.url(Request("watch", "deployments", group="apps", resource_version="7",
                                 allow_watch_bookmarks=True)) == \
        "/apis/apps/v1/deployments?allowWatchBookmarks=true&resourceVersion=7&watch=true"


def test_one_keep_alive_connection_serves_many_requests(client: Client) -> None:
    transport = client.api
    assert isinstance(transport, HTTPTransport)
    client.list("namespaces")
    conn = transport._conn
    assert conn is not None and conn.sock is not None
    sock = conn.sock
    for _ in range(3):
        client.get("namespaces", "default")
    assert transport._conn is conn and conn.sock is sock


def test_tls_trusts_the_kubeconfig_ca_only(served: Served) -> None:
    admin = load_rest_config(served.kubeconfig)
    untrusted = Client(HTTPTransport(RestConfig(server=admin.server, token=admin.token)))
    err = error(lambda: untrusted.list("namespaces"))
    assert isinstance(err, ConnectionFailed)
    assert err.kubectl_message() == ("Unable to connect to the server: tls: failed to verify "
                                     "certificate: x509: certificate signed by unknown authority")
    insecure = Client(HTTPTransport(RestConfig(server=admin.server, token=admin.token, insecure=True)))
    assert insecure.get("namespaces", "default")["metadata"]["name"] == "default"


def test_a_kubeconfig_with_files_and_a_client_certificate(served: Served, tmp_path: Any) -> None:
    admin = load_rest_config(served.kubeconfig)
    assert admin.ca_pem is not None
    (tmp_path / "ca.crt").write_bytes(admin.ca_pem)
    pair = make_serving_certs(("client",))  # any certificate and its key will do
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "files",
              "clusters": [{"name": "c", "cluster": {"server": admin.server,
                                                     "certificate-authority": "ca.crt"}}],
              "users": [{"name": "u", "user": {
                  "token": admin.token,
                  "client-certificate-data": base64.b64encode(pair.cert_pem).decode(),
                  "client-key-data": base64.b64encode(pair.key_pem).decode()}}],
              "contexts": [{"name": "files", "context": {"cluster": "c", "user": "u"}}]}
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    loaded = load_rest_config(path)
    assert (loaded.ca_pem, loaded.cert_pem, loaded.namespace) == (admin.ca_pem, pair.cert_pem, "default")
    loaded.ssl_context()  # the pair loads (a key that does not match the certificate would not)
    assert Client.from_kubeconfig(path).get("namespaces", "default")["metadata"]["name"] == "default"
    config["users"][0]["user"]["client-key-data"] = base64.b64encode(make_serving_certs().key_pem).decode()
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ssl.SSLError):
        load_rest_config(path).ssl_context()


def test_kubeconfig_contexts_and_their_errors(served: Served, tmp_path: Any) -> None:
    admin = load_rest_config(served.kubeconfig)
    viewer = load_rest_config(served.kubeconfig, "kubelab-viewer")
    assert admin.server == viewer.server == served.url and admin.ca_pem == viewer.ca_pem
    assert admin.context == "kubelab" and admin.token and admin.token != viewer.token
    with pytest.raises(ConfigError, match=r'^context "nope" does not exist$'):
        load_rest_config(served.kubeconfig, "nope")
    with pytest.raises(ConfigError, match=r"^stat .*missing\.yaml: no such file or directory$"):
        load_rest_config(tmp_path / "missing.yaml")
    plain = yaml.safe_load(served.kubeconfig.read_text())
    plain["clusters"][0]["cluster"] = {"server": admin.server, "certificate-authority": "nowhere.crt"}
    (tmp_path / "no-ca").write_text(yaml.safe_dump(plain))
    with pytest.raises(ConfigError) as info:
        load_rest_config(tmp_path / "no-ca")
    ca = tmp_path / "nowhere.crt"
    assert str(info.value) == (f"invalid configuration: unable to read certificate-authority {ca} "
                               f"for kubelab due to open {ca}: no such file or directory")


def test_an_exec_credential_plugin_supplies_the_token(served: Served, tmp_path: Any) -> None:
    admin = load_rest_config(served.kubeconfig)
    config = yaml.safe_load(served.kubeconfig.read_text())
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": admin.token}}
    script = "import json, os, sys; assert json.loads(os.environ['KUBERNETES_EXEC_INFO'])['kind']; "
    script += f"print(json.dumps({credential!r}) if os.environ['WHO'] == 'me' else sys.exit(3))"
    config["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                           "command": sys.executable, "args": ["-c", script],
                                           "env": [{"name": "WHO", "value": "me"}]}}
    (tmp_path / "exec").write_text(yaml.safe_dump(config))
    assert Client.from_kubeconfig(tmp_path / "exec").get("namespaces", "default")["metadata"]["name"]
    config["users"][0]["user"]["exec"]["env"][0]["value"] = "someone else"
    (tmp_path / "exec").write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match=r"failed with exit code 3$"):
        load_rest_config(tmp_path / "exec")


# ---------------------------------------------------------------- watch, informer, controller


def test_a_watch_streams_added_modified_deleted_and_errors(served: Served, client: Client) -> None:
    viewer = Client.from_kubeconfig(served.kubeconfig, context="kubelab-viewer")

    async def main() -> None:
        rv = client.list("configmaps", "default")["metadata"]["resourceVersion"]
        events: list[tuple[str, str]] = []
        closed: list[str] = []
        handle = client.watch("configmaps", lambda e: events.append(
            (e["type"], e["object"]["metadata"]["name"])), "default", resource_version=rv,
            label_selector="watched=yes", on_close=lambda: closed.append("admin"))
        client.create(configmap("w", watched="yes"))
        client.patch("configmaps", "w", {"data": {"k": "v"}})
        client.create(configmap("not-watched"))
        client.delete("configmaps", "w")
        await until(lambda: len(events) == 3)
        assert events == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]
        handle.stop()
        # The view role does not read secrets: one ERROR event with the 403 Status, then the end.
        errors: list[dict[str, Any]] = []
        viewer.watch("secrets", errors.append, "default", on_close=lambda: closed.append("viewer"))
        await until(lambda: closed == ["viewer"])
        assert [e["type"] for e in errors] == ["ERROR"]
        assert (errors[0]["object"]["code"], errors[0]["object"]["reason"]) == (403, "Forbidden")
        assert errors[0]["object"]["message"].startswith('secrets is forbidden: User "viewer" cannot watch')
        client.create(configmap("after-stop", watched="yes"))
        await asyncio.sleep(0.2)
        assert len(events) == 3  # a stopped watch delivers nothing, and does not call on_close

    run(main)


def test_an_informer_on_the_paced_clock_follows_the_server(served: Served) -> None:
    async def main() -> None:
        remote = connect(served.kubeconfig, speed=4)
        informer = remote.informers.informer_for("configmaps")
        remote.start()
        try:
            await until(informer.has_synced)
            remote.client.create(configmap("cached", {"v": "1"}))
            lister = informer.lister.by_namespace("default")
            await until(lambda: any(o["metadata"]["name"] == "cached" for o in lister.list()))
            remote.client.patch("configmaps", "cached", {"data": {"v": "2"}})
            await until(lambda: lister.get("cached")["data"] == {"v": "2"})
            remote.client.delete("configmaps", "cached")
            await until(lambda: all(o["metadata"]["name"] != "cached" for o in lister.list()))
            assert remote.clock.now > 0  # the pacer moved the clock with the wall clock
            assert informer.reflector.lists == 1  # one LIST, then the watch did the rest
        finally:
            remote.stop()

    run(main)


def test_the_sample_controller_runs_against_the_served_cluster(served: Served) -> None:
    async def main() -> None:
        remote = connect(served.kubeconfig, speed=4)
        copier = ConfigMapCopier(remote.context("copier"), namespace="default")
        remote.start()
        copier.start()
        client = remote.client

        def copy_uid() -> str:
            try:
                return str(client.get("configmaps", "src-copy")["metadata"]["uid"])
            except ApiError:
                return ""

        try:
            client.create(configmap("src", {"greeting": "hello"}))
            await until(lambda: bool(copy_uid()))
            copy = client.get("configmaps", "src-copy")
            assert copy["data"] == {"greeting": "hello"}
            assert copy["metadata"]["labels"] == {"copied-from": "src"}
            first = copy_uid()
            client.delete("configmaps", "src-copy")
            await until(lambda: copy_uid() not in ("", first))  # it comes back: level-triggered
            client.delete("configmaps", "src")
            await until(lambda: not copy_uid())
        finally:
            copier.stop()
            remote.stop()

    run(main)


def test_a_handler_that_raises_stops_the_clock_and_says_so(served: Served) -> None:
    async def main() -> None:
        reported: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
        remote = connect(served.kubeconfig, speed=4)

        def boom(obj: Any) -> None:
            raise KeyError("a bug in my handler")

        remote.informers.informer_for("namespaces").add_event_handler(ResourceEventHandler(on_add=boom))
        remote.start()
        try:
            await until(lambda: bool(reported))
            assert reported[0]["message"] == ("kubelab.serve.connect: a callback on the clock raised; "
                                              "the clock stopped")
            assert isinstance(reported[0]["exception"], KeyError)
        finally:
            remote.stop()

    run(main)


def test_pod_logs_are_text_over_https(client: Client) -> None:
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "talker"},
                   "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}})

    async def main() -> None:
        def running() -> bool:
            return client.get("pods", "talker").get("status", {}).get("phase") == "Running"
        await until(running)

    run(main)
    logs = client.get_logs("talker", container="app", tail_lines=5)
    assert "[notice] 1#1: start worker processes" in logs  # nginx's own log
    client.delete("pods", "talker", grace_period_seconds=0)
