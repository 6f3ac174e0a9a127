"""kubelab's own HTTPS client impersonates as client-go does (rest.Config.Impersonate).

The headers follow client-go's transport/round_trippers_test.go (TestImpersonationRoundTripper,
TestHeaderEscapeRoundTrip); against `kubelab serve` the server acts as the impersonated user,
or refuses with a 403 the requestor that may not impersonate, in the same words as for the real
kubectl's --as, --as-group, --as-uid and a kubeconfig user's `as`, `as-uid`, `as-groups` and
`as-user-extra` (where kubectl is installed, both must print the same).
"""

from __future__ import annotations

import asyncio
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml
from serve_helpers import KUBECTL, Served, serving
from transport_helpers import configmap, error, run, until

from kubelab.api.request import Impersonation
from kubelab.client import Client
from kubelab.serve import connect
from kubelab.serve.transport.restconfig import ConfigError, load_rest_config
from kubelab.serve.transport.transport import header_key_escape, impersonation_headers

RBAC = "rbac.authorization.k8s.io"


@pytest.mark.parametrize(("wanted", "expected"), [
    (Impersonation("user", ("one", "two"), "uid-a", (("first", ("A", "a")), ("second", ("B", "b")))),
     {"Impersonate-User": ["user"], "Impersonate-Uid": ["uid-a"], "Impersonate-Group": ["one", "two"],
      "Impersonate-Extra-First": ["A", "a"], "Impersonate-Extra-Second": ["B", "b"]}),
    (Impersonation("user", ("one", "two"), extra=(("first", ("A", "a")), ("second", ("B", "b")))),
     {"Impersonate-User": ["user"], "Impersonate-Group": ["one", "two"],
      "Impersonate-Extra-First": ["A", "a"], "Impersonate-Extra-Second": ["B", "b"]}),
    (Impersonation("user", extra=(("test.example.com/thing.thing%20another.thing", ("A", "a")),)),
     {"Impersonate-User": ["user"],
      "Impersonate-Extra-Test.example.com%2fthing.thing%2520another.thing": ["A", "a"]}),
    (Impersonation(groups=("devs",)), {"Impersonate-User": [""], "Impersonate-Group": ["devs"]}),
])
def test_the_headers_are_client_gos(wanted: Impersonation, expected: dict[str, list[str]]) -> None:
    headers: dict[str, list[str]] = defaultdict(list)
    for name, value in impersonation_headers(wanted):
        headers[name].append(value)
    assert headers == expected


@pytest.mark.parametrize("key", [
    "alphabetical", "alph4num3r1c", "percent%20encoded", "almost%zzpercent%xxencoded",
    "example.com/percent%20encoded", "example.com/ᛒᚥᛏᛖᚥᚢとロビン", "abc123!#$+.-_*\\^`~|'", "@=:",
])
def test_an_extra_key_survives_its_escape(key: str) -> None:
    escaped = header_key_escape(key)
    assert escaped.isascii() and unquote(escaped) == key


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The served cluster, where viewer may also impersonate the user someone, nothing else."""
    for server in serving(tmp_path_factory.mktemp("impersonation"), "--nodes", "1", "--speed", "4"):
        admin = Client.from_kubeconfig(server.kubeconfig)
        admin.create({"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
                      "metadata": {"name": "impersonate-someone"},
                      "rules": [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"],
                                 "resourceNames": ["someone"]}]})
        admin.create({"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
                      "metadata": {"name": "viewer-impersonates-someone"},
                      "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "impersonate-someone"},
                      "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "viewer"}]})
        yield server


def _kubectl(served: Served, *args: str, kubeconfig: Path | None = None) -> tuple[int, str]:
    """The real kubectl's exit code and what it printed on stderr."""
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (make installs it)")
    env = served.env() if kubeconfig is None else {**served.env(), "KUBECONFIG": str(kubeconfig)}
    done = subprocess.run([KUBECTL, *args], env=env, capture_output=True, text=True, timeout=30)
    return done.returncode, done.stderr.strip()


def test_the_server_acts_as_the_impersonated_user(served: Served) -> None:
    as_viewer = Client.from_kubeconfig(served.kubeconfig, impersonate=Impersonation("viewer"))
    assert as_viewer.list("configmaps", "default")["kind"] == "ConfigMapList"  # viewer may view
    refused = error(lambda: as_viewer.create(configmap("by-viewer")))
    assert (refused.code, refused.message) == (403, 'configmaps is forbidden: User "viewer" cannot '
                                               'create resource "configmaps" in API group "" in the '
                                               'namespace "default"')
    # The groups arrive too: nobody in system:masters may do anything.
    master = Client.from_kubeconfig(served.kubeconfig, impersonate=Impersonation(
        "nobody", ("system:masters",)))
    assert master.create(configmap("by-nobody"))["metadata"]["name"] == "by-nobody"
    # A Client's own impersonation, the in-process way, goes over HTTPS the same way.
    admin = Client.from_kubeconfig(served.kubeconfig)
    again = error(lambda: admin.impersonating(Impersonation("viewer")).delete("configmaps", "by-nobody"))
    assert again.message == ('configmaps "by-nobody" is forbidden: User "viewer" cannot delete resource '
                             '"configmaps" in API group "" in the namespace "default"')
    assert _kubectl(served, "create", "configmap", "by-kubectl", "--as", "viewer") == (
        1, f"error: failed to create configmap: {refused.message}")
    remote = connect(served.kubeconfig, impersonate=Impersonation("viewer"))  # kubelab.serve.connect
    assert error(lambda: remote.client.create(configmap("by-remote"))).message == refused.message


@pytest.mark.parametrize(("wanted", "message"), [
    (Impersonation("nobody"), 'users "nobody" is forbidden: User "viewer" cannot impersonate '
                              'resource "users" in API group "" at the cluster scope'),
    (Impersonation("someone", ("devs",)), 'groups "devs" is forbidden: User "viewer" cannot '
                                          'impersonate resource "groups" in API group "" at the '
                                          "cluster scope"),
    (Impersonation("someone", uid="u-1"), 'uids.authentication.k8s.io "u-1" is forbidden: User '
                                          '"viewer" cannot impersonate resource "uids" in API group '
                                          '"authentication.k8s.io" at the cluster scope'),
    (Impersonation("someone", extra=(("example.com/team", ("blue",)),)),
     'userextras.authentication.k8s.io "blue" is forbidden: User "viewer" cannot impersonate '
     'resource "userextras/example.com/team" in API group "authentication.k8s.io" at the cluster '
     "scope"),
])
def test_a_requestor_that_may_not_impersonate_gets_a_403(served: Served, wanted: Impersonation,
                                                         message: str, tmp_path: Path) -> None:
    viewer = Client.from_kubeconfig(served.kubeconfig, context="kubelab-viewer", impersonate=wanted)
    refused = error(lambda: viewer.list("pods", "default"))
    assert (refused.code, refused.reason, refused.message) == (403, "Forbidden", message)
    # The same impersonation written in the kubeconfig's user, for kubelab and the real kubectl.
    kubeconfig = _with_user(served.kubeconfig, tmp_path, "viewer", {
        "as": wanted.user, "as-groups": list(wanted.groups), "as-uid": wanted.uid,
        "as-user-extra": {k: list(v) for k, v in wanted.extra}})
    from_file = Client.from_kubeconfig(kubeconfig, context="kubelab-viewer")
    assert error(lambda: from_file.list("pods", "default")).message == message
    if KUBECTL is not None:
        assert _kubectl(served, "--context", "kubelab-viewer", "get", "pods", kubeconfig=kubeconfig) == (
            1, f"Error from server (Forbidden): {message}")


def _with_user(kubeconfig: Path, folder: Path, user: str, settings: dict[str, Any]) -> Path:
    """A copy of the kubeconfig whose user has these settings (the empty ones left out)."""
    config = yaml.safe_load(kubeconfig.read_text())
    for entry in config["users"]:
        if entry["name"] == user:
            entry["user"].update({k: v for k, v in settings.items() if v})
    path = folder / "kubeconfig.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_groups_without_a_user_are_refused_before_anything_is_sent(served: Served,
                                                                   tmp_path: Path) -> None:
    kubeconfig = _with_user(served.kubeconfig, tmp_path, "viewer", {"as-groups": ["devs"]})
    with pytest.raises(ConfigError) as refused:
        load_rest_config(kubeconfig, context="kubelab-viewer")
    assert str(refused.value) == ("requesting uid, groups or user-extra for viewer without "
                                  "impersonating a user")
    if KUBECTL is not None:
        assert _kubectl(served, "--context", "kubelab-viewer", "get", "pods", kubeconfig=kubeconfig) == (
            1, f"error: {refused.value}")


def test_a_watch_impersonates_too(served: Served) -> None:
    viewer = Client.from_kubeconfig(served.kubeconfig, context="kubelab-viewer",
                                    impersonate=Impersonation("someone", ("devs", "ops")))

    async def main() -> None:
        events: list[dict[str, Any]] = []
        closed: list[bool] = []
        viewer.watch("configmaps", events.append, "default", on_close=lambda: closed.append(True))
        await until(lambda: bool(closed))
        assert [e["type"] for e in events] == ["ERROR"]
        assert events[0]["object"]["message"] == (
            'groups "devs" is forbidden: User "viewer" cannot impersonate resource "groups" in API '
            'group "" at the cluster scope')
        await asyncio.sleep(0)

    run(main)
