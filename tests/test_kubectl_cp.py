"""kubectl cp both ways through the real kubectl against `kubelab serve`: kubectl runs
`tar cf - PATH` and `test -d DIR` / `tar -xmf - -C DIR` through pods/exec (k8s.io/kubectl
pkg/cmd/cp/cp.go), and the container's tar (kubelab/kubelet/process/tar.py) reads and writes
real tar archives in its file system: a file copied into an emptyDir is read by the pod's
other container, a read-only mount refuses it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import KUBECTL, Served, serving

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (make installs it)")

POD = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {key: value}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  volumes:
  - {name: html, emptyDir: {}}
  - {name: cfg, configMap: {name: cfg}}
  containers:
  - name: nginx
    image: nginx:1.27
    volumeMounts:
    - {name: html, mountPath: /usr/share/nginx/html}
    - {name: cfg, mountPath: /etc/config}
  - name: box
    image: busybox:1.36
    command: [sh, -c, "mkdir -p /work/sub && echo one > /work/a.txt &&
              echo two > /work/sub/b.txt && sleep 3600"]
    volumeMounts:
    - {name: html, mountPath: /srv}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    for s in serving(tmp_path_factory.mktemp("serve"), "--speed", "4"):  # stopped by its PID
        s.kubectl("apply", "-f", "-", stdin=POD)
        s.kubectl("wait", "--for=condition=Ready", "pod/web", "--timeout=60s", timeout=90)
        yield s


def test_copy_a_file_and_a_directory_out_of_the_pod(served: Served, tmp_path: Path) -> None:
    done = served.kubectl("cp", "web:/work/a.txt", str(tmp_path / "a.txt"), "-c", "box")
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert (done.stdout, done.stderr) == ("tar: removing leading '/' from member names\n", "")
    served.kubectl("cp", "web:/work", str(tmp_path / "work"), "-c", "box")
    assert (tmp_path / "work" / "a.txt").read_text() == "one\n"
    assert (tmp_path / "work" / "sub" / "b.txt").read_text() == "two\n"
    missing = served.kubectl("cp", "web:/nope", str(tmp_path / "nope"), "-c", "nginx", check=False)
    # GNU tar's words (the nginx image is Debian-based), on kubectl's stdout as cp.go sends
    # them; kubectl is done when the (empty) archive ends, so it may exit before tar's last
    # line and its exit code arrive, and exits 0, as against a real cluster.
    assert missing.returncode == 0
    assert missing.stdout.startswith("tar: /nope: Cannot stat: No such file or directory\n")
    assert not (tmp_path / "nope").exists()


def test_copy_into_the_pod_lands_in_the_shared_volume(served: Served, tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<h1>copied in</h1>\n")
    served.kubectl("cp", str(page), "web:/usr/share/nginx/html/index.html", "-c", "nginx")
    shown = served.kubectl("exec", "web", "-c", "box", "--", "cat", "/srv/index.html")
    assert shown.stdout == "<h1>copied in</h1>\n"
    site = tmp_path / "site"
    (site / "css").mkdir(parents=True)
    (site / "css" / "main.css").write_text("h1 {}\n")
    served.kubectl("cp", str(site), "web:/srv", "-c", "box")   # /srv is a directory: /srv/site
    listed = served.kubectl("exec", "web", "-c", "nginx", "--", "cat",
                            "/usr/share/nginx/html/site/css/main.css")
    assert listed.stdout == "h1 {}\n"


def test_copy_into_a_read_only_mount_fails_as_tar_does(served: Served, tmp_path: Path) -> None:
    local = tmp_path / "x"
    local.write_text("no\n")
    refused = served.kubectl("cp", str(local), "web:/etc/config/x", "-c", "nginx", check=False)
    assert refused.returncode != 0
    assert "tar: x: Cannot open: Read-only file system" in refused.stdout + refused.stderr
    assert served.kubectl("exec", "web", "-c", "nginx", "--", "cat", "/etc/config/key").stdout == "value"
