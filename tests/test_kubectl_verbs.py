"""kubectl's verbs for seed 002's command list (create, get with several kinds, jsonpath,
custom-columns, version, api-resources) and its usage errors, word for word."""

from __future__ import annotations

import pytest

from kubelab.cluster import Cluster
from kubelab.kubectl import split_command
from tests.controllers_helpers import settle

HELP = "See 'kubectl {} -h' for help and examples"


@pytest.fixture
def c() -> Cluster:
    return Cluster(nodes=2, seed=1, components=["scheduler", "controller-manager"])


@pytest.mark.parametrize(("command", "stdin", "message"), [
    ("cordon", "", f"error: USAGE: cordon NODE [flags]\n{HELP.format('cordon')}"),
    ("uncordon", "", f"error: USAGE: uncordon NODE [flags]\n{HELP.format('uncordon')}"),
    ("label deploy web", "", "error: at least one label update is required"),
    ("annotate deploy web a", "", "error: at least one annotation update is required"),
    ("label deploy web a=b c", "", "error: all resources must be specified before label changes: c"),
    ("label pod web a=b a-", "", "error: can not both modify and remove a label in the same command"),
    ("apply -f -", "", "error: no objects passed to apply"),
    ("apply -f - extra", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n",
     f"error: Unexpected args: [extra]\n{HELP.format('apply')}"),
    ("apply", "", "error: must specify one of -f and -k"),
    ("create namespace", "", f"error: exactly one NAME is required, got 0\n"
                             f"{HELP.format('create namespace')}"),
    ("create namespace a b", "", f"error: exactly one NAME is required, got 2\n"
                                 f"{HELP.format('create namespace')}"),
    ("create deployment web", "", 'error: required flag(s) "image" not set'),
    ("create configmap cfg --from-literal=novalue", "",
     "error: invalid literal source novalue, expected key=value"),
    ("version extra", "", "error: extra arguments: [extra]"),  # version.go Validate: no usage hint
    ("describe", "", 'error: You must specify the type of resource to describe. Use "kubectl '
                     'api-resources" for a complete list of supported resources.'),
    ("run web", "", "error: --image is required"),
    ("get pods --bogus", "", "error: unknown flag: --bogus\nSee 'kubectl get --help' for usage."),
    ("dance", "", 'error: unknown command "dance" for "kubectl"'),
    ("", "", "error: You must specify a command: kubectl <command> [flags]"),
    ("get pods 'web", "", "error: No closing quotation"),
])
def test_usage_errors_fail_in_kubectls_words_and_change_nothing(
        c: Cluster, command: str, stdin: str, message: str) -> None:
    before = c.store.revision
    out = c.kubectl(command, stdin=stdin)
    assert (out, out.exit_code) == (message, 1)
    assert c.store.revision == before


def test_get_without_a_type_prints_kubectls_hint(c: Cluster) -> None:
    out = c.kubectl("get")
    assert out.exit_code == 1
    assert out.splitlines()[0] == ('You must specify the type of resource to get. Use "kubectl '
                                   'api-resources" for a complete list of supported resources.')
    assert out.splitlines()[2] == "error: Required resource not specified."
    assert out.endswith(HELP.format("get"))


def test_create_namespace_deployment_and_configmap(c: Cluster) -> None:
    assert c.kubectl("create namespace team") == "namespace/team created"
    assert c.kubectl("create deployment web --image=nginx:1.27 --replicas=2 --port=80 -n team") == \
        "deployment.apps/web created"
    d = c.get("deployments", "web", namespace="team")
    assert d["metadata"]["labels"] == {"app": "web"}
    assert d["spec"]["selector"] == {"matchLabels": {"app": "web"}} and d["spec"]["replicas"] == 2
    assert d["spec"]["template"]["spec"]["containers"][0]["name"] == "nginx"  # named after the image
    assert d["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80,
                                                                        "protocol": "TCP"}]
    assert c.kubectl("create configmap cfg --from-literal=a=1 --from-literal=b=x=y") == \
        "configmap/cfg created"
    assert c.get("configmaps", "cfg")["data"] == {"a": "1", "b": "x=y"}
    out = c.kubectl("create namespace team")
    assert (out, out.exit_code) == ('Error from server (AlreadyExists): namespaces "team" already exists', 1)


def test_get_several_kinds_and_all(c: Cluster) -> None:
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=2")
    c.kubectl("create configmap cfg")
    settle(c)
    out = c.kubectl("get deploy,cm")
    blocks = out.split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].splitlines()[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert blocks[0].splitlines()[1].startswith("deployment.apps/web ")
    assert [line.split()[0] for line in blocks[1].splitlines()] == ["NAME", "configmap/cfg",
                                                                    "configmap/kube-root-ca.crt"][:len(
                                                                        blocks[1].splitlines())]
    everything = c.kubectl("get all").split("\n\n")
    assert [b.splitlines()[1].split("/")[0] for b in everything] == ["pod", "deployment.apps",
                                                                     "replicaset.apps"]
    assert c.kubectl("get all -n kube-public") == "No resources found in kube-public namespace."
    names = c.kubectl("get deploy,rs -o name").splitlines()
    assert names[0] == "deployment.apps/web" and names[1].startswith("replicaset.apps/web-")


def test_jsonpath_and_custom_columns(c: Cluster) -> None:
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=2")
    settle(c)
    pods = sorted(p["metadata"]["name"] for p in c.get("pods"))
    assert c.kubectl("get pods -o jsonpath={.items[*].metadata.name}").split(" ") == pods
    out = c.kubectl("get pods -o jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}"
                    "{.spec.containers[0].image}{\"\\n\"}{end}'")
    assert out.splitlines() == [f"{p}\tnginx:1.27" for p in pods]
    assert c.kubectl("get deploy web -o jsonpath={.spec.replicas}") == "2"
    assert c.kubectl("get deploy web -o jsonpath={.metadata.labels}") == '{"app":"web"}'
    assert c.kubectl("get deploy web -o jsonpath={.spec.nothing}") == ""
    assert c.kubectl("get pods -o jsonpath='{.items[?(@.metadata.name==\"" + pods[0] +
                     "\")].metadata.name}'") == pods[0]
    table = c.kubectl("get pods -o custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[*].image,"
                      "DISK:.spec.nodeSelector.disk").splitlines()
    assert table[0].split() == ["NAME", "IMAGE", "DISK"]
    assert [row.split() for row in table[1:]] == [[p, "nginx:1.27", "<none>"] for p in pods]
    out = c.kubectl("get pods -o custom-columns=NAME")
    assert out == "error: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"


def test_version_and_api_resources(c: Cluster) -> None:
    assert c.kubectl("version") == ("Client Version: v1.34.0\nKustomize Version: v5.7.1\n"
                                    "Server Version: v1.34.0")
    rows = c.kubectl("api-resources").splitlines()
    assert rows[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    # kind's list starts with bindings (not served here), then these two, as kubelab's does
    assert [r.split() for r in rows[1:3]] == [
        ["componentstatuses", "cs", "v1", "false", "ComponentStatus"],
        ["configmaps", "cm", "v1", "true", "ConfigMap"]]
    assert ["deployments", "deploy", "apps/v1", "true", "Deployment"] in [r.split() for r in rows]
    groups = [row.split()[-3] for row in rows[1:]]
    assert groups.index("apps/v1") > groups.index("v1")  # sorted by group, the core group first
    c.faults.crash("apiserver")
    out = c.kubectl("version")
    assert out == ("Client Version: v1.34.0\nKustomize Version: v5.7.1\nThe connection to the server "
                   "kube-apiserver:6443 was refused - did you specify the right host or port?")
    assert out.exit_code == 1


def test_a_one_mebibyte_argument_is_split_as_the_shell_splits_it() -> None:
    """shlex grew each token a character at a time; split_command reads in one pass."""
    word = "a" * (1 << 20)
    assert split_command(f"get pods {word}") == ["get", "pods", word]
    assert split_command("""label pod web 'a b'="c d" x\\ y "q\\"uote" ''""") == [
        "label", "pod", "web", "a b=c d", "x y", 'q"uote', ""]


def test_a_long_name_is_refused_by_the_server_not_by_a_crash(c: Cluster) -> None:
    out = c.kubectl("get pods " + "a" * (1 << 20))
    assert out.exit_code == 1 and out.startswith('Error from server (NotFound): pods "aaaa')


def test_get_prints_what_it_found_then_what_is_missing(c: Cluster) -> None:
    c.kubectl("create configmap a")
    out = c.kubectl("get cm a b")
    assert out.splitlines()[1].split()[0] == "a"
    assert out.splitlines()[-1] == 'Error from server (NotFound): configmaps "b" not found'
    assert out.exit_code == 1
