"""A pod's containers share its emptyDir live (kubelab/kubelet/process/filesystem.py): what one
container's program writes, the other's reads, as two bind mounts of one directory do; writes to
read-only mounts fail with busybox's EROFS wording. All on the virtual clock."""

from __future__ import annotations

import pytest

from kubelab import Cluster
from kubelab.kubelet.process import FileSystem, Mount, ReadOnlyFileSystem

SHIPPER = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shipper"},
    "spec": {
        "volumes": [{"name": "logs", "emptyDir": {}},
                    {"name": "config", "configMap": {"name": "cfg"}},
                    {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
                    {"name": "shared-ro", "emptyDir": {}}],
        "containers": [
            {"name": "app", "image": "busybox:1.36",
             "command": ["sh", "-c", "while true; do echo line-$HOSTNAME >> /var/log/app.log; "
                                     "sleep 2; done"],
             "volumeMounts": [{"name": "logs", "mountPath": "/var/log"},
                              {"name": "config", "mountPath": "/etc/config"},
                              {"name": "token", "mountPath": "/var/run/token"},
                              {"name": "shared-ro", "mountPath": "/ro", "readOnly": True}]},
            {"name": "shipper", "image": "busybox:1.36",
             "command": ["tail", "-f", "/logs/app.log"],
             "volumeMounts": [{"name": "logs", "mountPath": "/logs"},
                              {"name": "shared-ro", "mountPath": "/rw"}]}]}}


def run(c: Cluster, container: str, script: str) -> tuple[int | None, str, str]:
    s = c.client.exec("shipper", ["sh", "-c", script], container=container)
    c.run(1)
    out, err = s.read()
    return s.exit_code, out.decode(), err.decode()


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(nodes=1, seed=3)
    c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
             "data": {"key": "value"}})
    c.apply(SHIPPER)
    c.run(20)
    assert c.get("pods", "shipper")["status"]["phase"] == "Running"
    return c


def test_a_file_one_container_writes_the_other_reads(cluster: Cluster) -> None:
    assert run(cluster, "app", "echo hi > /var/log/x; echo more >> /var/log/x") == (0, "", "")
    code, out, err = run(cluster, "shipper", "cat /logs/x")
    assert (code, out, err) == (0, "hi\nmore\n", "")
    assert run(cluster, "shipper", "rm /logs/x && echo gone > /logs/y") == (0, "", "")
    assert run(cluster, "app", "cat /var/log/x")[1:] == (
        "", "cat: can't open '/var/log/x': No such file or directory\n")
    assert run(cluster, "app", "cat /var/log/y")[1] == "gone\n"
    # a path outside the volume stays the container's own
    run(cluster, "app", "echo mine > /tmp/own")
    assert run(cluster, "shipper", "cat /tmp/own")[0] == 1


def test_the_log_shipper_follows_what_the_app_appends(cluster: Cluster) -> None:
    before = [line for _, line in cluster.runtimes["node-1"].read_logs(
        cluster.get("pods", "shipper")["metadata"]["uid"], "shipper")]
    cluster.run(10)
    after = [line for _, line in cluster.runtimes["node-1"].read_logs(
        cluster.get("pods", "shipper")["metadata"]["uid"], "shipper")]
    shipped = after[len(before):]
    assert len(shipped) >= 4 and set(shipped) == {"line-shipper"}
    appended = run(cluster, "app", "cat /var/log/app.log")[1].splitlines()
    assert after == appended[:len(after)]


@pytest.mark.parametrize(("script", "message"), [
    ("echo x > /etc/config/x", "sh: can't create /etc/config/x: Read-only file system\n"),
    ("echo x >> /etc/config/key", "sh: can't create /etc/config/key: Read-only file system\n"),
    ("echo x > /var/run/token/t", "sh: can't create /var/run/token/t: Read-only file system\n"),
    ("echo x > /ro/f", "sh: can't create /ro/f: Read-only file system\n"),
    ("rm /etc/config/key", "rm: can't remove '/etc/config/key': Read-only file system\n"),
    ("touch /etc/config/new", "touch: /etc/config/new: Read-only file system\n"),
    ("mkdir /etc/config/d", "mkdir: can't create directory '/etc/config/d': Read-only file system\n"),
])
def test_writes_to_read_only_mounts_fail_as_on_linux(cluster: Cluster, script: str,
                                                     message: str) -> None:
    code, out, err = run(cluster, "app", script)
    assert (code, out, err) == (1, "", message)
    assert run(cluster, "app", "cat /etc/config/key")[1] == "value"


def test_a_read_only_mount_of_a_writable_volume_sees_the_writers_files(cluster: Cluster) -> None:
    assert run(cluster, "shipper", "echo from-rw > /rw/f")[0] == 0
    assert run(cluster, "app", "cat /ro/f")[1] == "from-rw\n"


def test_the_deepest_mount_wins_and_sub_paths_show_part_of_a_volume() -> None:
    outer: dict[str, bytes] = {"a": b"outer", "inner/b": b"hidden"}
    inner: dict[str, bytes] = {"b": b"inner"}
    data: dict[str, bytes] = {"conf/app.conf": b"x=1", "conf/other": b"y"}
    fs = FileSystem({"/etc/hosts": b"h", "/data/img": b"shadowed"},
                    [Mount("/data", outer), Mount("/data/inner", inner, read_only=True),
                     Mount("/app.conf", data, sub_path="conf/app.conf"),
                     Mount("/conf", data, sub_path="conf")])
    assert fs["/data/inner/b"] == b"inner" and fs["/data/a"] == b"outer"
    assert "/data/img" not in fs and fs["/app.conf"] == b"x=1" and fs["/conf/other"] == b"y"
    assert sorted(fs) == ["/app.conf", "/conf/app.conf", "/conf/other", "/data/a",
                          "/data/inner/b", "/etc/hosts"]
    fs["/data/new"] = b"n"
    fs["/conf/third"] = b"z"
    assert outer["new"] == b"n" and data["conf/third"] == b"z"
    with pytest.raises(ReadOnlyFileSystem):
        fs["/data/inner/c"] = b"no"
    del fs["/data/a"]
    assert "a" not in outer and inner == {"b": b"inner"}
