"""pods/exec, pods/attach and pods/portforward over WebSocket (kubelab/serve/streams.py), with
the real kubectl and the official Python client against c.serve().

The node's kubelet is replaced by a small one written here (ScriptedKubelet), so these tests
check the protocol layer alone: channels, the first empty message, the error channel's Status
and the exit code kubectl exits with, stdin and its v5 close, resize, the port-forward channel
pairs, and the API server's refusals before any upgrade. Its sessions run on the cluster's
virtual clock: nothing ends before the pacer has moved it."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import pty
import select
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.serve.server import kubectl_binary
from kubelab.serve.streams import exit_status

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.stream import portforward, stream  # noqa: E402

KUBECTL = kubectl_binary()
RUNTIME = 0.5  # virtual seconds a scripted command runs


class Session:
    """A scripted process: `echo WORDS`, `sh -c "exit N"`, `cat` (stdin to stdout until EOF),
    `sizes` (prints each resize). Output appears, and the process ends, RUNTIME virtual
    seconds after it started, or after stdin closed for cat."""

    def __init__(self, c: Cluster, command: list[str], stdin: bool, tty: bool) -> None:
        self.c, self.command, self.tty = c, command, tty
        self.started = c.clock.now
        self.out, self.err, self.stdin_closed, self.resizes = b"", b"", False, []
        self._code: int | None = None

    def _due(self) -> bool:
        return self.c.clock.now >= self.started + RUNTIME

    @property
    def exit_code(self) -> int | None:
        if self._code is None and self._due():
            cmd = self.command
            if cmd[:1] == ["echo"]:
                self.out, self._code = " ".join(cmd[1:]).encode() + b"\n", 0
            elif cmd[:2] == ["sh", "-c"] and cmd[2].startswith("exit "):
                self.err, self._code = b"bye\n", int(cmd[2].split()[1])
            elif cmd == ["cat"] and self.stdin_closed:
                self._code = 0
            elif cmd != ["cat"]:
                self.err, self._code = f"sh: {cmd[0]}: not found\n".encode(), 127
        return self._code

    def write(self, data: bytes) -> None:
        if self.command == ["cat"]:
            self.out += data

    def close_stdin(self) -> None:
        self.stdin_closed = True

    def read(self) -> tuple[bytes, bytes]:
        out, err = self.out, self.err
        self.out = self.err = b""
        return out, err

    def resize(self, width: int, height: int) -> None:
        self.resizes.append((width, height))


class Echo:
    """A TCP server in the pod that answers each chunk with its upper case."""

    def __init__(self) -> None:
        self.pending, self.closed, self.error = b"", False, ""

    def write(self, data: bytes) -> None:
        self.pending += data.upper()

    def close_write(self) -> None:
        self.closed = True

    def read(self) -> bytes:
        data, self.pending = self.pending, b""
        if data.endswith(b"BYE\n"):
            self.closed = True
        return data


class ScriptedKubelet:
    def __init__(self, c: Cluster, node: str) -> None:
        self.c, self.runtime = c, c.runtimes[node]
        self.sessions: list[Session] = []

    def read_logs(self, pod_uid: str, name: str, previous: bool = False) -> Any:
        return self.runtime.read_logs(pod_uid, name, previous)

    def has_pod(self, pod_uid: str) -> bool:
        return self.runtime.has_pod(pod_uid)

    def exec(self, pod_uid: str, container: str, command: list[str], stdin: bool,
             tty: bool) -> Session | None:
        if container == "stopped":
            return None
        self.sessions.append(Session(self.c, command, stdin, tty))
        return self.sessions[-1]

    def attach(self, pod_uid: str, container: str, stdin: bool, tty: bool) -> Session | None:
        return self.exec(pod_uid, container, ["cat"], stdin, tty)

    def port_forward(self, pod_uid: str, port: int) -> Echo | str:
        return Echo() if port == 7000 else f"dial tcp4 127.0.0.1:{port}: connect: connection refused"


def _pod(name: str, containers: list[str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": n, "image": "busybox"} for n in containers]}}


def served(tmp: Path, body: Callable[[Cluster, ScriptedKubelet, Path], Coroutine[Any, Any, None]]) -> None:
    c = Cluster(nodes=1, seed=0)
    c.apply(_pod("box", ["box"]))
    c.apply(_pod("two", ["app", "stopped"]))
    c.run(30)
    kubelet = ScriptedKubelet(c, "node-1")
    for server in c.apiservers:
        server.kubelet_connection = lambda node: kubelet

    async def main() -> None:
        c.serve(port=0, speed=5)
        config = Path(c.kubeconfig(str(tmp / "kubeconfig.yaml")))
        try:
            await body(c, kubelet, config)
        finally:
            await c.server.stop()

    asyncio.run(main())


async def kubectl(config: Path, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (make installs it)")
    proc = await asyncio.create_subprocess_exec(
        KUBECTL, "--context", "kubelab", *args, env=dict(os.environ, KUBECONFIG=str(config)),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(stdin), 60)
    return proc.returncode or 0, out.decode(), err.decode()


def test_exit_status_is_the_kubelets() -> None:
    assert exit_status(0, ["true"]) == {"metadata": {}, "status": "Success"}
    failed = exit_status(3, ["sh", "-c", "exit 3"])
    assert failed["reason"] == "NonZeroExitCode"
    assert failed["details"] == {"causes": [{"reason": "ExitCode", "message": "3"}]}
    assert failed["message"] == ("command terminated with non-zero exit code: error executing command "
                                 "[sh -c exit 3], exit code 3")


def test_kubectl_exec_attach_and_their_errors(tmp_path: Path) -> None:
    async def body(c: Cluster, kubelet: ScriptedKubelet, config: Path) -> None:
        start = c.clock.now
        code, out, err = await kubectl(config, "exec", "box", "--", "echo", "hi", "there")
        assert (code, out) == (0, "hi there\n"), err
        assert c.clock.now >= start + RUNTIME  # the answer waited for the virtual clock
        code, out, err = await kubectl(config, "exec", "box", "--", "sh", "-c", "exit 3")
        assert code == 3 and "command terminated with exit code 3" in err and "bye" in err
        code, out, err = await kubectl(config, "exec", "-i", "box", "--", "cat", stdin=b"one\ntwo\n")
        assert (code, out) == (0, "one\ntwo\n"), err
        assert kubelet.sessions[-1].stdin_closed  # the v5 close signal reached the process
        code, out, err = await kubectl(config, "attach", "-i", "box", stdin=b"attached\n")
        assert "attached" in out, err
        # Refused by the API server before any upgrade, in its words.
        code, _, err = await kubectl(config, "exec", "two", "--", "nosuch")
        assert code == 127 and 'Defaulted container "app" out of: app, stopped' in err \
            and "sh: nosuch: not found" in err  # kubectl chose the container itself
        code, _, err = await kubectl(config, "exec", "box", "-c", "nope", "--", "true")
        assert code == 1 and "container nope is not valid for pod box" in err
        code, _, err = await kubectl(config, "exec", "two", "-c", "stopped", "--", "true")
        assert code == 1 and 'container not found ("stopped")' in err
        code, _, err = await kubectl(config, "exec", "ghost", "--", "true")
        assert code == 1 and 'pods "ghost" not found' in err
        code, _, err = await kubectl(config, "--context", "kubelab-viewer", "exec", "box", "--", "true")
        assert code == 1 and 'cannot create resource "pods/exec"' in err, err

    served(tmp_path, body)


def test_python_client_exec_and_portforward(tmp_path: Path) -> None:
    async def body(c: Cluster, kubelet: ScriptedKubelet, config: Path) -> None:
        api = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(config_file=str(config)))
        loop = asyncio.get_running_loop()

        def exec_echo() -> str:
            return str(stream(api.connect_get_namespaced_pod_exec, "box", "default",
                              command=["echo", "from", "python"], stdout=True, stderr=True, stdin=False))

        assert await loop.run_in_executor(None, exec_echo) == "from python\n"

        def refused() -> str:
            with pytest.raises(kubernetes.client.ApiException) as info:
                stream(api.connect_get_namespaced_pod_exec, "two", "default", command=["true"],
                       stdout=True, stderr=True, stdin=False)
            return str(info.value)

        # The API server refuses before the upgrade, with its Status (the handshake's 400).
        assert "a container name must be specified for pod two, choose one of: [app stopped]" \
            in await loop.run_in_executor(None, refused)

        def exec_exit() -> tuple[int | None, str]:
            resp = stream(api.connect_get_namespaced_pod_exec, "box", "default",
                          command=["sh", "-c", "exit 5"], stdout=True, stderr=True, stdin=False,
                          _preload_content=False)
            resp.run_forever(timeout=30)
            return resp.returncode, resp.read_stderr()

        assert await loop.run_in_executor(None, exec_exit) == (5, "bye\n")

        def exec_tty_resize() -> Any:
            resp = stream(api.connect_get_namespaced_pod_exec, "box", "default", command=["cat"],
                          stdout=True, stderr=True, stdin=True, tty=True, _preload_content=False)
            resp.write_channel(4, json.dumps({"Width": 100, "Height": 30}))
            resp.write_stdin("typed\n")
            out = ""
            while "typed" not in out and resp.is_open():
                resp.update(timeout=5)
                out += resp.read_stdout() or ""
            resp.close_channel(0)  # v5: stdin's EOF
            resp.run_forever(timeout=30)
            return out, resp.returncode

        assert await loop.run_in_executor(None, exec_tty_resize) == ("typed\n", 0)
        assert kubelet.sessions[-1].resizes == [(100, 30)]

        def forward() -> tuple[bytes, str | None]:
            pf = portforward(api.connect_get_namespaced_pod_portforward, "box", "default",
                             ports="7000,7001")
            sock = pf.socket(7000)
            sock.setblocking(True)
            sock.sendall(b"hello\nbye\n")
            got = b""
            while not got.endswith(b"BYE\n"):
                chunk = sock.recv(1024)
                if not chunk:
                    break
                got += chunk
            error = pf.error(7001)
            sock.close()
            pf.close()
            return got, error

        got, refused = await loop.run_in_executor(None, forward)
        assert got == b"HELLO\nBYE\n"
        assert refused == "dial tcp4 127.0.0.1:7001: connect: connection refused"

    served(tmp_path, body)


# ---------------------------------------------------------------------------- the real kubelet

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
       "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "nginx", "image": "nginx",
                                                      "ports": [{"containerPort": 80}]}]}}}}
WEB_SVC = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080, "targetPort": 80}]}}
BOX = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
       "spec": {"containers": [{"name": "box", "image": "busybox", "command": ["sleep", "3600"]}]}}


async def _forwarded(config: Path, target: str, path: str = "/") -> tuple[str, str]:
    """kubectl port-forward target :80 (a free local port), one GET through it with urllib,
    then Ctrl-C: (the body or the urllib error, what kubectl printed on stderr)."""
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (make installs it)")
    proc = await asyncio.create_subprocess_exec(
        KUBECTL, "--context", "kubelab", "port-forward", target, ":8080" if "svc" in target else ":80",
        env=dict(os.environ, KUBECONFIG=str(config)), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
    port = int(line.split("127.0.0.1:")[1].split()[0])

    def get() -> str:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
                return f"{r.status} {r.read().decode()}"
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException) as err:
            return f"failed: {err}"

    body = await asyncio.get_running_loop().run_in_executor(None, get)
    await asyncio.sleep(0.2)
    if proc.returncode is None:  # kubectl exits by itself when a connection failed
        proc.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    return body, err.decode()


def test_the_process_model_through_kubectl_and_the_python_client(tmp_path: Path) -> None:
    c = Cluster(nodes=1, seed=0)
    for obj in (WEB, WEB_SVC, BOX):
        c.apply(obj)
    c.run(30)
    web = next(p["metadata"]["name"] for p in c.client.list("pods")["items"]
               if p["metadata"]["name"].startswith("web-"))

    async def main() -> None:
        c.serve(port=0, speed=5)
        config = Path(c.kubeconfig(str(tmp_path / "kubeconfig.yaml")))
        try:
            code, out, err = await kubectl(config, "exec", "box", "--", "sh", "-c",
                                           "echo hello from $HOSTNAME; exit 3")
            assert (code, out) == (3, "hello from box\n") and "command terminated with exit code 3" in err
            code, out, err = await kubectl(config, "exec", "-i", "box", "--", "sh",
                                           stdin=b"echo typed\nexit 4\n")
            assert (code, out) == (4, "typed\n"), err
            code, out, err = await kubectl(config, "exec", "box", "--", "nosuch")
            assert code == 126 and 'exec: "nosuch": executable file not found in $PATH' in out + err

            body, _ = await _forwarded(config, f"pod/{web}")
            assert body.startswith("200 ") and "<h1>Welcome to nginx!</h1>" in body
            body, _ = await _forwarded(config, "svc/web")  # kubectl picks a pod, 8080 -> 80
            assert body.startswith("200 ") and "Welcome to nginx!" in body
            body, _ = await _forwarded(config, f"pod/{web}", "/missing")
            assert "404" in body
            body, err = await _forwarded(config, "pod/box")  # nothing listens on 80 in busybox
            assert body.startswith("failed")
            assert "an error occurred forwarding" in err and "-> 80: error forwarding port 80 to pod " in err
            assert "dial tcp4 127.0.0.1:80: connect: connection refused" in err

            client = kubernetes.config.new_client_from_config(config_file=str(config))
            api = kubernetes.client.CoreV1Api(client)

            def python_client() -> tuple[str, bytes]:
                out = stream(api.connect_get_namespaced_pod_exec, web, "default",
                             command=["sh", "-c", "echo $HOSTNAME"], stdout=True, stderr=True, stdin=False)
                pf = portforward(api.connect_get_namespaced_pod_portforward, web, "default", ports="80")
                sock = pf.socket(80)
                sock.setblocking(True)
                sock.sendall(b"GET / HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n")
                got = b""
                while chunk := sock.recv(65536):
                    got += chunk
                sock.close()
                pf.close()
                return str(out), got

            out, got = await asyncio.get_running_loop().run_in_executor(None, python_client)
            assert out == f"{web}\n"
            assert got.startswith(b"HTTP/1.1 200 OK\r\n") and b"Welcome to nginx!" in got
            assert b"Connection: close\r\n" in got
        finally:
            await c.server.stop()

    asyncio.run(main())


def test_kubectl_logs_follow_streams_lines_as_the_clock_runs(tmp_path: Path) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (make installs it)")
    c = Cluster(nodes=1, seed=0)
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "count"},
             "spec": {"restartPolicy": "Never", "containers": [
                 {"name": "c", "image": "busybox",
                  "command": ["sh", "-c", "for i in 1 2 3 4; do echo line $i; sleep 4; done"]}]}})
    c.run(4)

    def running() -> bool:
        (status,) = c.client.get("pods", "count", namespace="default")["status"]["containerStatuses"]
        return "running" in status["state"]

    async def main() -> None:
        c.serve(port=0, speed=5)
        config = Path(c.kubeconfig(str(tmp_path / "kubeconfig.yaml")))
        try:
            proc = await asyncio.create_subprocess_exec(
                KUBECTL, "--context", "kubelab", "logs", "-f", "count",
                env=dict(os.environ, KUBECONFIG=str(config)), stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            assert proc.stdout is not None
            first = await asyncio.wait_for(proc.stdout.readline(), 30)
            assert first == b"line 1\n" and running()  # it came while the loop still ran
            rest = await asyncio.wait_for(proc.stdout.read(), 60)
            assert rest == b"line 2\nline 3\nline 4\n"
            assert await proc.wait() == 0 and not running()  # -f ends with the container
        finally:
            await c.server.stop()

    asyncio.run(main())


def test_kubectl_exec_it_gives_a_prompt_in_a_terminal(tmp_path: Path) -> None:
    """`kubectl exec -it box -- sh` from a real terminal (a pty): kubectl asks for a tty and
    sends raw keystrokes on stdin; the shell prompts, the tty echoes, and the shell's exit code
    is kubectl's."""
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (make installs it)")
    c = Cluster(nodes=1, seed=0)
    c.apply(BOX)
    c.run(20)

    async def main() -> None:
        c.serve(port=0, speed=5)
        config = Path(c.kubeconfig(str(tmp_path / "kubeconfig.yaml")))
        master, slave = pty.openpty()
        proc = subprocess.Popen([KUBECTL, "--context", "kubelab", "exec", "-it", "box", "--", "sh"],
                                env=dict(os.environ, KUBECONFIG=str(config)), stdin=slave,
                                stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        seen = b""

        async def until(token: bytes) -> bool:
            nonlocal seen
            for _ in range(1000):
                if token in seen:
                    return True
                if select.select([master], [], [], 0)[0]:
                    try:
                        seen += os.read(master, 4096)
                    except OSError:  # kubectl is gone
                        return token in seen
                else:
                    await asyncio.sleep(0.02)
            return False

        try:
            assert await until(b"/ # "), seen
            os.write(master, b"echo tty-ok\r")
            assert await until(b"echo tty-ok\r\ntty-ok\r\n"), seen  # the terminal echoes, then sh
            os.write(master, b"exit 5\r")
            for _ in range(500):
                if proc.poll() is not None:
                    break
                await asyncio.sleep(0.02)
            assert proc.returncode == 5
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(master)
            await c.server.stop()

    asyncio.run(main())


def test_kubectl_run_it_rm_attaches_to_the_shell(tmp_path: Path) -> None:
    """The tutorial classic: `kubectl run -it --rm shell --image=busybox --restart=Never -- sh`
    creates a pod with stdin and a tty, attaches to its shell, and deletes it after."""
    c = Cluster(nodes=1, seed=0)
    c.run(5)

    async def main() -> None:
        c.serve(port=0, speed=5)
        config = Path(c.kubeconfig(str(tmp_path / "kubeconfig.yaml")))
        try:
            code, out, err = await kubectl(config, "run", "-it", "--rm", "shell", "--image=busybox",
                                           "--restart=Never", "--", "sh",
                                           stdin=b"echo attached-ok\nexit 0\n")
            assert code == 0 and "attached-ok\r\n" in out, err
            assert 'pod "shell" deleted' in out + err
            assert not c.exists("pods", "shell", namespace="default")
        finally:
            await c.server.stop()

    asyncio.run(main())
