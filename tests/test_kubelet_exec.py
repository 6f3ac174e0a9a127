"""pods/exec and pods/attach in the simulation: the ExecSession seam, and the API server's and
the kubelet's refusals in upstream's words (pod/strategy.go streamLocation, kubelet_pods.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.endpoints.subresources import ExecSession


def pod(name: str, *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": list(containers), **spec}}


def running(c: Cluster, *pods: dict[str, Any]) -> Cluster:
    for p in pods:
        c.apply(p)
    c.run(20)
    return c


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    return running(Cluster(nodes=1),
                   pod("web", {"name": "nginx", "image": "nginx:1.27",
                               "env": [{"name": "GREETING", "value": "hello"}]}),
                   pod("two", {"name": "a", "image": "nginx:1.27"}, {"name": "b", "image": "nginx:1.27"},
                       initContainers=[{"name": "setup", "image": "busybox:1.36"}]),
                   pod("done", {"name": "c", "image": "busybox:1.36", "command": ["true"]},
                       restartPolicy="Never"))


def test_exec_runs_the_command_in_the_container_on_the_clock(cluster: Cluster) -> None:
    s = cluster.client.exec("web", ["sh", "-c", "echo $GREETING from $(hostname); echo first; "
                                    "sleep 5; echo second >&2; exit 3"])
    assert isinstance(s, ExecSession)
    assert s.read() == (b"hello from web\nfirst\n", b"") and s.exit_code is None  # $(...) ran
    cluster.run(5.1)
    assert s.read() == (b"", b"second\n") and s.exit_code == 3
    s = cluster.client.exec("web", ["sh", "-c", "echo $GREETING; sleep 5; echo late >&2; exit 3"])
    assert s.read() == (b"hello\n", b"") and s.exit_code is None
    cluster.run(4.9)
    assert s.exit_code is None
    cluster.run(0.2)
    assert s.read() == (b"", b"late\n") and s.exit_code == 3


def test_exec_with_stdin_and_a_tty_runs_line_by_line(cluster: Cluster) -> None:
    s = cluster.client.exec("web", ["sh"], stdin=True, tty=True)
    assert s.read() == (b"/ # ", b"")
    s.write(b"cat /etc/hostname; nope\r")
    out, err = s.read()
    assert out == b"cat /etc/hostname; nope\r\nweb\r\nsh: nope: not found\r\n/ # " and err == b""
    s.write(b"exit 7\n")
    assert s.exit_code == 7
    piped = cluster.client.exec("web", ["cat"], stdin=True)
    piped.write(b"a\nb")
    piped.close_stdin()
    assert piped.read() == (b"a\nb\n", b"") and piped.exit_code == 0


def test_exec_files_are_the_containers_own(cluster: Cluster) -> None:
    s = cluster.client.exec("web", ["sh", "-c", "echo saved > /tmp/f"])
    assert s.exit_code == 0
    assert cluster.client.exec("web", ["cat", "/tmp/f"]).read() == (b"saved\n", b"")
    other = cluster.client.exec("two", ["cat", "/tmp/f"], container="a")
    assert other.read() == (b"", b"cat: can't open '/tmp/f': No such file or directory\n")
    assert other.exit_code == 1
    hosts = cluster.client.exec("web", ["cat", "/etc/hosts"]).read()[0].decode()
    ip = cluster.get("pods", "web")["status"]["podIP"]
    assert hosts.startswith("# Kubernetes-managed hosts file.") and f"{ip}\tweb\n" in hosts


@pytest.mark.parametrize(("name", "options", "code", "message"), [
    ("two", {}, 400, "a container name must be specified for pod two, choose one of: [a b] or one "
                     "of the init containers: [setup]"),
    ("web", {"container": "x"}, 400, "container x is not valid for pod web"),
    ("two", {"container": "setup"}, 500, 'unable to upgrade connection: container not found ("setup")'),
    ("nope", {}, 404, 'pods "nope" not found'),
])
def test_exec_refusals(cluster: Cluster, name: str, options: dict[str, str], code: int,
                       message: str) -> None:
    with pytest.raises(ApiError) as err:
        cluster.client.exec(name, ["ls"], **options)
    assert (err.value.code, err.value.message) == (code, message)


def test_exec_into_a_pod_without_a_node_or_a_running_container() -> None:
    c = Cluster(nodes=1, components=[])
    c.apply(pod("pending", {"name": "c", "image": "nginx:1.27"}))
    with pytest.raises(ApiError) as err:
        c.client.exec("pending", ["ls"])
    assert err.value.message == "pod pending does not have a host assigned"


def test_a_completed_pod_has_no_container_to_exec_into(cluster: Cluster) -> None:
    assert cluster.get("pods", "done")["status"]["phase"] == "Succeeded"
    with pytest.raises(ApiError) as err:
        cluster.client.exec("done", ["ls"])
    assert err.value.message == 'unable to upgrade connection: container not found ("c")'


def test_attach_joins_the_main_process() -> None:
    c = running(Cluster(nodes=1), pod("loop", {"name": "c", "image": "busybox:1.36", "command": [
        "sh", "-c", "while true; do echo tick; sleep 10; done"]}),
        pod("shell", {"name": "c", "image": "busybox:1.36", "stdin": True}))
    s = c.client.attach("loop")
    assert s.read() == (b"", b"")  # only what it prints from now on
    c.run(10)
    assert s.read() == (b"tick\n", b"")
    shell = c.client.attach("shell", stdin=True)
    shell.write(b"echo hi; exit 5\n")
    assert shell.read() == (b"hi\n", b"") and shell.exit_code == 5
    c.run(1)
    status = c.get("pods", "shell")["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 5 or \
        status["state"].get("terminated", {}).get("exitCode") == 5
    with pytest.raises(ApiError) as err:
        c.client.attach("loop", container="c2")
    assert err.value.message == "container c2 is not valid for pod loop"


def test_kubectl_exec_prints_output_and_ends_with_the_commands_exit_code(cluster: Cluster) -> None:
    out = cluster.kubectl("exec web -- sh -c 'echo out; echo err >&2; exit 3'")
    assert (out, out.exit_code) == ("out\nerr\ncommand terminated with exit code 3", 3)
    assert cluster.kubectl("exec web -i -- cat", stdin="typed\n") == "typed"
    missing = cluster.kubectl("exec web -- foo")
    assert (missing, missing.exit_code) == (
        'OCI runtime exec failed: exec failed: unable to start container process: exec: "foo": '
        "executable file not found in $PATH: unknown\ncommand terminated with exit code 126", 126)
    slow = cluster.kubectl("exec web -- sh -c 'sleep 30; echo awake'")  # virtual time passes
    assert (slow, slow.exit_code) == ("awake", 0)
    assert cluster.kubectl("exec two -- hostname") == ('Defaulted container "a" out of: a, b, setup '
                                                       "(init)\ntwo")
    assert cluster.kubectl("exec two -c b -- hostname") == "two"
    assert cluster.kubectl("exec done -- ls") == ("error: cannot exec into a container in a completed "
                                                  "pod; current phase is Succeeded")
    assert cluster.kubectl("exec web") == ("error: you must specify at least one command for the "
                                           "container")
    assert cluster.kubectl("exec web ls").startswith("error: exec [POD] [COMMAND] is not supported "
                                                     "anymore. Use exec [POD] -- [COMMAND] instead")


def test_kubectl_logs_follow_waits_for_the_container_to_end() -> None:
    c = running(Cluster(nodes=1), pod("count", {"name": "c", "image": "busybox", "command": [
        "sh", "-c", "for i in 1 2 3; do echo $i; sleep 10; done"]}, restartPolicy="Never"))
    assert c.kubectl("logs count") == "1\n2"
    assert c.kubectl("logs -f count") == "1\n2\n3"
    assert c.get("pods", "count")["status"]["phase"] == "Succeeded"
