"""Raw TCP through the real `kubectl port-forward` against `kubelab serve`, and SPDY as a plain
upgrade (kubectl's fallback, forced with KUBECTL_*_WEBSOCKETS=false: serve/spdystreams.py) for
exec, cp and port-forward. The forwarded
connection is a byte stream to the pod's simulated server (kubelab/kubelet/portforward.py), so
a redis client's RESP reaches the redis image's server (kubelab/kubelet/process/redis.py) and
its keys outlive the connection; an HTTP server still answers HTTP."""

from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import KUBECTL, Served, serving

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (make installs it)")

PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: redis}
spec:
  containers: [{name: redis, image: "redis:7", ports: [{containerPort: 6379}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: nginx, image: "nginx:1.27"}]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    for s in serving(tmp_path_factory.mktemp("serve"), "--speed", "4"):  # stopped by its PID
        s.kubectl("apply", "-f", "-", stdin=PODS)
        s.kubectl("wait", "--for=condition=Ready", "pod/redis", "pod/web", "--timeout=60s",
                  timeout=90)
        yield s


class Forward:
    """`kubectl port-forward TARGET :PORT` as a process, stopped by its PID."""

    def __init__(self, served: Served, target: str, port: int, **env: str) -> None:
        assert KUBECTL is not None
        self.proc = subprocess.Popen([KUBECTL, "port-forward", target, f":{port}"],
                                     env={**served.env(), **env}, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # Forwarding from 127.0.0.1:NNNNN -> PORT
        assert "Forwarding from 127.0.0.1:" in line, self.proc.stderr.read() if self.proc.stderr else line
        self.local = int(line.split("127.0.0.1:")[1].split()[0])

    def talk(self, *requests: bytes) -> list[bytes]:
        """Send each request on one connection and read its answer (up to the expected end)."""
        answers = []
        with socket.create_connection(("127.0.0.1", self.local), timeout=20) as conn:
            for request in requests:
                conn.sendall(request)
                answers.append(_reply(conn))
        return answers

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, 2)   # Ctrl-C, by its PID
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _reply(conn: socket.socket) -> bytes:
    """One RESP reply or one HTTP answer with Content-Length."""
    data = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
        if data.startswith(b"HTTP/"):
            head, sep, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            if sep and len(body) >= length:
                return data
        elif data.endswith(b"\r\n") and (data[:1] != b"$" or data.count(b"\r\n") >= 2 or
                                         data.startswith(b"$-1")):
            return data


@pytest.fixture
def forward(served: Served) -> Iterator[list[Forward]]:
    started: list[Forward] = []
    yield started
    for f in started:
        f.stop()


def test_redis_speaks_resp_through_port_forward(served: Served, forward: list[Forward]) -> None:
    forward.append(Forward(served, "pod/redis", 6379))
    f = forward[0]
    assert f.talk(b"PING\r\n", b"*3\r\n$3\r\nSET\r\n$8\r\ngreeting\r\n$5\r\nhello\r\n",
                  b"*2\r\n$4\r\nINCR\r\n$4\r\nhits\r\n", b"NOSUCH a b\r\n") == [
        b"+PONG\r\n", b"+OK\r\n", b":1\r\n",
        b"-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b'\r\n"]
    # a second connection: the same server, the same keys
    assert f.talk(b"*2\r\n$3\r\nGET\r\n$8\r\ngreeting\r\n", b"GET missing\r\n") == [
        b"$5\r\nhello\r\n", b"$-1\r\n"]


def test_http_still_answers_http(served: Served, forward: list[Forward]) -> None:
    forward.append(Forward(served, "pod/web", 80))
    (answer,) = forward[0].talk(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"Welcome to nginx!" in answer


# ---------------------------------------------------------------------- SPDY as a plain upgrade

NO_WS = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false", "KUBECTL_PORT_FORWARD_WEBSOCKETS": "false"}


def _kubectl(served: Served, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, *args], env={**served.env(), **NO_WS}, input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_exec_over_spdy(served: Served) -> None:
    done = _kubectl(served, "exec", "web", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert (done.returncode, done.stdout) == (3, "out\n")
    assert done.stderr == "err\ncommand terminated with exit code 3\n"
    piped = _kubectl(served, "exec", "-i", "web", "--", "cat", stdin="one\ntwo\n")
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, "one\ntwo\n", "")
    missing = _kubectl(served, "exec", "web", "--", "nosuch")
    assert missing.returncode == 126 and 'exec: "nosuch": executable file not found' in missing.stdout


def test_cp_over_spdy(served: Served, tmp_path: Path) -> None:
    local = tmp_path / "page.html"
    local.write_bytes(b"<p>spdy</p>\n")
    into = _kubectl(served, "cp", str(local), "web:/usr/share/nginx/html/")  # a directory: into it
    assert (into.returncode, into.stderr) == (0, "")
    back = tmp_path / "back.html"
    done = _kubectl(served, "cp", "web:/usr/share/nginx/html/page.html", str(back))
    assert done.returncode == 0 and back.read_bytes() == b"<p>spdy</p>\n"


def test_port_forward_over_spdy(served: Served, forward: list[Forward]) -> None:
    forward.append(Forward(served, "pod/redis", 6379, **NO_WS))
    assert forward[0].talk(b"PING\r\n", b"ECHO spdy\r\n") == [b"+PONG\r\n", b"$4\r\nspdy\r\n"]
    forward.append(Forward(served, "pod/web", 80, **NO_WS))
    (answer,) = forward[1].talk(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")


def test_exec_with_a_terminal_over_spdy(served: Served) -> None:
    """`kubectl exec -it` from a pty over SPDY: the stdin, stdout and resize streams (no stderr
    with a tty); the shell prompts, the terminal echoes, and its exit code is kubectl's."""
    assert KUBECTL is not None
    master, slave = pty.openpty()
    proc = subprocess.Popen([KUBECTL, "exec", "-it", "web", "--", "sh"], env={**served.env(), **NO_WS},
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""

    def until(token: bytes) -> bool:
        nonlocal seen
        deadline = time.monotonic() + 30
        while token not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    seen += os.read(master, 4096)
                except OSError:  # kubectl is gone
                    break
        return token in seen

    try:
        assert until(b"/ # "), seen
        os.write(master, b"echo tty-ok\r")
        assert until(b"echo tty-ok\r\ntty-ok\r\n"), seen
        os.write(master, b"exit 5\r")
        assert proc.wait(30) == 5
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, 9)
            proc.wait()
        os.close(master)
