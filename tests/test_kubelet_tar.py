"""The container's tar (kubelab/kubelet/process/tar.py) and the in-process `c.kubectl("cp ...")`
(kubelab/kubectl/cp.py, k8s.io/kubectl pkg/cmd/cp/cp.go): real tar archives in and out of a
container's file system, busybox's or GNU tar's words by image, and kubectl cp's own errors."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from kubelab import Cluster

BOX = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
       "spec": {"volumes": [{"name": "data", "emptyDir": {}}],
                "containers": [
                    {"name": "busybox", "image": "busybox:1.36", "command": ["sleep", "3600"],
                     "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
                    {"name": "nginx", "image": "nginx:1.27",
                     "volumeMounts": [{"name": "data", "mountPath": "/usr/share/nginx/html",
                                       "readOnly": True}]}]}}


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(nodes=1, seed=2)
    c.apply(BOX)
    c.run(20)
    return c


def run(c: Cluster, container: str, argv: list[str], stdin: bytes | None = None
        ) -> tuple[int | None, bytes, bytes]:
    s = c.client.exec("box", argv, container=container, stdin=stdin is not None)
    if stdin is not None:
        s.write(stdin)
        s.close_stdin()
    c.run(1)
    out, err = s.read()
    return s.exit_code, out, err


def archive(**files: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tw:
        for name, data in files.items():
            info = tarfile.TarInfo(name.replace("__", "/"))
            info.size = len(data)
            tw.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_create_then_extract_round_trips_through_a_shared_volume(cluster: Cluster) -> None:
    run(cluster, "busybox", ["sh", "-c", "mkdir /data/d; echo a > /data/d/a; echo b > /data/b"])
    code, out, err = run(cluster, "busybox", ["tar", "cf", "-", "/data"])
    assert (code, err) == (0, b"tar: removing leading '/' from member names\n")
    with tarfile.open(fileobj=io.BytesIO(out)) as tr:
        members = {m.name: (m.type, m.mode, m.uname) for m in tr.getmembers()}
        assert members == {"data": (tarfile.DIRTYPE, 0o755, "root"),
                           "data/b": (tarfile.REGTYPE, 0o644, "root"),
                           "data/d": (tarfile.DIRTYPE, 0o755, "root"),
                           "data/d/a": (tarfile.REGTYPE, 0o644, "root")}
    binary = bytes(range(256)) * 4   # stdin is bytes, not lines
    assert run(cluster, "busybox", ["tar", "-xmf", "-", "-C", "/data"],
               archive(blob=binary, new__deep=b"x\n")) == (0, b"", b"")
    assert run(cluster, "nginx", ["cat", "/usr/share/nginx/html/blob"])[1] == binary
    assert run(cluster, "busybox", ["tar", "tf", "-"], archive(one=b"1", two=b"2"))[1] == b"one\ntwo\n"


@pytest.mark.parametrize(("container", "argv", "stdin", "code", "err"), [
    ("busybox", ["tar", "cf", "-", "/nope"], None, 1,
     b"tar: /nope: No such file or directory\ntar: error exit delayed from previous errors\n"),
    ("nginx", ["tar", "cf", "-", "/nope"], None, 2,
     b"tar: /nope: Cannot stat: No such file or directory\ntar: Exiting with failure status due to "
     b"previous errors\n"),
    ("busybox", ["tar", "-xf", "-", "-C", "/nope"], b"", 1,
     b"tar: can't change directory to '/nope': No such file or directory\n"),
    ("busybox", ["tar", "xf", "-"], b"not a tar archive" * 40, 1, b"tar: invalid tar magic\n"),
    ("nginx", ["tar", "-xmf", "-", "-C", "/usr/share/nginx/html"], b"", 0, b""),
    ("busybox", ["tar", "cf", "-"], None, 1, b"tar: empty archive\n"),
    ("busybox", ["tar", "-czf", "-", "/data"], None, 1, b"tar: invalid option -- 'z'\n"),
])
def test_tar_fails_in_its_own_words(cluster: Cluster, container: str, argv: list[str],
                                    stdin: bytes | None, code: int, err: bytes) -> None:
    got_code, _out, got_err = run(cluster, container, argv, stdin)
    assert (got_code, got_err) == (code, err)


def test_extracting_into_a_read_only_mount_is_refused(cluster: Cluster) -> None:
    code, _out, err = run(cluster, "nginx", ["tar", "-xmf", "-", "-C", "/usr/share/nginx/html"],
                          archive(x=b"no"))
    assert (code, err) == (2, b"tar: x: Cannot open: Read-only file system\ntar: Exiting with "
                              b"failure status due to previous errors\n")
    assert run(cluster, "busybox", ["cat", "/data/x"])[0] == 1


def test_kubectl_cp_in_process_both_ways(cluster: Cluster, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<h1>hi</h1>\n")
    assert cluster.kubectl("cp site box:/data -c busybox") == ""
    assert run(cluster, "nginx", ["cat", "/usr/share/nginx/html/site/index.html"])[1] == \
        b"<h1>hi</h1>\n"
    out = cluster.kubectl("cp box:/data/site copied -c busybox")
    assert out == "tar: removing leading '/' from member names"
    assert (tmp_path / "copied" / "index.html").read_text() == "<h1>hi</h1>\n"
    defaulted = cluster.kubectl("cp box:/data/site/index.html one.html")
    assert defaulted.startswith('Defaulted container "busybox" out of: busybox, nginx\n')
    assert (tmp_path / "one.html").read_text() == "<h1>hi</h1>\n"
    refused = cluster.kubectl("cp one.html box:/usr/share/nginx/html/x -c nginx")
    assert (refused, refused.exit_code) == (
        "tar: x: Cannot open: Read-only file system\ntar: Exiting with failure status due to "
        "previous errors\ncommand terminated with exit code 2", 2)


@pytest.mark.parametrize(("command", "message"), [
    ("cp a", "error: source and destination are required"),
    ("cp box:/a box:/b", "error: one of src or dest must be a local file specification"),
    ("cp a b", "error: one of src or dest must be a remote file specification"),
    ("cp :a b", "error: filespec must match the canonical format: [[namespace/]pod:]file/path"),
    ("cp a/b/c:/x y", "error: filespec must match the canonical format: [[namespace/]pod:]file/path"),
    ("cp box: y", "error: filepath can not be empty"),
    ("cp /nowhere/at-all box:/data", "error: /nowhere/at-all doesn't exist in local filesystem"),
    ("cp nope:/x y", 'Error from server (NotFound): pods "nope" not found'),
])
def test_kubectl_cp_refusals(cluster: Cluster, command: str, message: str) -> None:
    out = cluster.kubectl(command)
    assert (out, out.exit_code) == (message, 1)


def test_exec_output_keeps_the_order_it_was_written_in(cluster: Cluster) -> None:
    s = cluster.client.exec("box", ["sh", "-c", "echo a; echo b >&2; echo c > /data/c; cat /data/c; "
                                               "tar cf - /data/c"],
                            container="busybox")
    cluster.run(1)
    frames = s.read_frames()  # type: ignore[attr-defined]
    assert [(name, data[:2]) for name, data in frames] == [
        ("stdout", b"a\n"), ("stderr", b"b\n"), ("stdout", b"c\n"),
        ("stderr", b"ta"), ("stdout", b"da")]   # tar's warning, then its archive
    assert s.read() == (b"", b"")


def test_spdy_protocol_negotiation() -> None:
    from kubelab.serve.spdystreams import EXEC_PROTOCOLS, negotiate

    assert negotiate(["v4.channel.k8s.io", "v3.channel.k8s.io"], EXEC_PROTOCOLS) == (
        "v4.channel.k8s.io", "")
    assert negotiate(["v9.channel.k8s.io", "v2.channel.k8s.io"], EXEC_PROTOCOLS) == (
        "v2.channel.k8s.io", "")
    assert negotiate([], EXEC_PROTOCOLS) == ("", "")
    assert negotiate(["v9.channel.k8s.io"], ["portforward.k8s.io"]) == (
        "", "unable to upgrade: unable to negotiate protocol: client supports [v9.channel.k8s.io], "
            "server supports [portforward.k8s.io]")
