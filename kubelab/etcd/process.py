"""Real etcd members on loopback, started and stopped by kubelab, by their own PIDs.

`EtcdCluster(members=3)` starts three `etcd` processes (Debian's etcd-server 3.4) with one
cluster token, a client and a peer port each on 127.0.0.1, and their data in one temporary
directory. It stops them, and removes that directory, on close(), at interpreter exit (atexit),
and when the Python process that started them dies without either (a notebook kernel that is
restarted or killed): every member is started with PR_SET_PDEATHSIG, so the kernel kills it
when its parent goes. Tests close their cluster in a fixture's finally.

etcd's own timing defaults, which the lab notebook (07b) shows at work: --heartbeat-interval
100 ms, --election-timeout 1000 ms (a follower that hears no heartbeat for a randomised 1-2 s
campaigns), and a proposal that cannot commit fails after 5 s + 2 x election timeout = 7 s
with "etcdserver: request timed out" (server/etcdserver/server.go ReqTimeout).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import http.client
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["INSTALL_HINT", "EtcdCluster", "EtcdMember", "etcd_binary"]

INSTALL_HINT = ("etcd is not installed: run `make` as root (it installs Debian's etcd-server and "
                "etcd-client), or `sudo apt-get install etcd-server etcd-client`")
_PR_SET_PDEATHSIG = 1
# Loaded here, not in the child: after fork only async-signal-safe work is sound.
_LIBC = ctypes.CDLL(None, use_errno=True)
_START_ATTEMPTS = 3
PROGRESS_NOTIFY = "500ms"  # a quiet watch hears etcd's revision this often (see watch.py)


def etcd_binary(name: str = "etcd") -> str:
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(INSTALL_HINT)
    return found


def _free_ports(count: int) -> list[int]:
    """Ports the kernel says are free now; all held open together, so none repeats."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent(parent: int) -> None:
    """In the child, before exec: SIGKILL me when my parent dies (and now, if it already has)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


@dataclass
class EtcdMember:
    name: str
    client_port: int
    peer_port: int
    data_dir: str
    log_path: str
    argv: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.running and self.process else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class EtcdCluster:
    """`members` etcd processes forming one cluster (one member: a single-node etcd)."""

    def __init__(self, members: int = 1, *, token: str = "kubelab-etcd",
                 extra_args: tuple[str, ...] = (), start_timeout: float = 15.0,
                 base_dir: str | None = None) -> None:
        if members < 1:
            raise ValueError(f"etcd_members must be >= 1, got {members}")
        binary = etcd_binary()
        self.token = token
        # base_dir="/dev/shm" puts the data on tmpfs, where fsync costs nothing: etcd 3.4 has
        # no --unsafe-no-fsync (3.5 added it), so this is how to see what the disk costs.
        self.dir = tempfile.mkdtemp(prefix="kubelab-etcd-", dir=base_dir)
        self.members: list[EtcdMember] = []
        atexit.register(self.close)
        try:
            # A port that was free when chosen may be taken before etcd binds it (another
            # program's luck): then start again on new ports, in a clean directory.
            for attempt in range(_START_ATTEMPTS):
                self._plan(binary, members, extra_args)
                for m in self.members:
                    self._spawn(m)
                try:
                    self.wait_healthy(start_timeout)
                    return
                except RuntimeError as err:
                    if "address already in use" not in str(err) or \
                            attempt == _START_ATTEMPTS - 1:
                        raise
                    self._stop_all()
                    for m in self.members:
                        shutil.rmtree(m.data_dir, ignore_errors=True)
        except BaseException:
            self.close()
            raise

    def _plan(self, binary: str, members: int, extra_args: tuple[str, ...]) -> None:
        """Name the members, choose their ports and write their command lines."""
        ports = _free_ports(2 * members)
        self.members = [EtcdMember(f"etcd-{i + 1}", ports[2 * i], ports[2 * i + 1],
                                   os.path.join(self.dir, f"etcd-{i + 1}"),
                                   os.path.join(self.dir, f"etcd-{i + 1}.log"))
                        for i in range(members)]
        initial = ",".join(f"{m.name}=http://127.0.0.1:{m.peer_port}" for m in self.members)
        for m in self.members:
            m.argv = [binary, "--name", m.name, "--data-dir", m.data_dir,
                      "--listen-client-urls", m.endpoint, "--advertise-client-urls", m.endpoint,
                      "--listen-peer-urls", f"http://127.0.0.1:{m.peer_port}",
                      "--initial-advertise-peer-urls", f"http://127.0.0.1:{m.peer_port}",
                      "--initial-cluster", initial, "--initial-cluster-token", self.token,
                      "--initial-cluster-state", "new",
                      "--experimental-watch-progress-notify-interval", PROGRESS_NOTIFY,
                      "--logger", "zap", *extra_args]

    @property
    def endpoints(self) -> list[str]:
        return [m.endpoint for m in self.members]

    @property
    def url(self) -> str:
        """etcd://host:port,... : what Cluster(store=...) takes to reach these members."""
        return "etcd://" + ",".join(f"127.0.0.1:{m.client_port}" for m in self.members)

    def member(self, name: str) -> EtcdMember:
        for m in self.members:
            if m.name == name:
                return m
        raise ValueError(f"no etcd member {name!r}; members: "
                         f"{', '.join(m.name for m in self.members)}")

    def _spawn(self, m: EtcdMember) -> None:
        with open(m.log_path, "ab") as log:
            parent = os.getpid()
            m.process = subprocess.Popen(m.argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=log, start_new_session=True,
                                         preexec_fn=lambda: _die_with_parent(parent))

    def wait_healthy(self, timeout: float = 15.0, names: list[str] | None = None) -> None:
        """Wait until every running member (or those named) answers /health with true."""
        deadline = time.monotonic() + timeout
        waiting = [m for m in self.members if m.running and (names is None or m.name in names)]
        while waiting:
            for m in list(waiting):
                if not m.running:
                    raise RuntimeError(f"etcd member {m.name} exited: {self.log_tail(m)}")
                if _healthy(m.endpoint):
                    waiting.remove(m)
            if waiting and time.monotonic() > deadline:
                raise TimeoutError(f"etcd member(s) {', '.join(m.name for m in waiting)} not "
                                   f"healthy within {timeout} s: {self.log_tail(waiting[0])}")
            if waiting:
                time.sleep(0.05)

    def log_tail(self, m: EtcdMember, lines: int = 3) -> str:
        with contextlib.suppress(OSError), open(m.log_path, encoding="utf-8",
                                                errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-lines:])
        return "(no log)"

    # -- breaking and mending it ----------------------------------------------------------

    def kill(self, name: str) -> int:
        """SIGKILL one member, as a crash would; returns the PID that was killed."""
        m = self.member(name)
        if m.process is None or not m.running:
            raise ValueError(f"etcd member {name} is not running")
        pid = m.process.pid
        m.process.kill()
        m.process.wait()
        return pid

    def pause(self, name: str) -> int:
        """SIGSTOP one member: it keeps its connections and answers nothing, as an etcd whose
        disk has stalled; returns its PID. resume() lets it go on."""
        return self._signal(name, signal.SIGSTOP)

    def resume(self, name: str) -> int:
        return self._signal(name, signal.SIGCONT)

    def _signal(self, name: str, sig: signal.Signals) -> int:
        m = self.member(name)
        if m.process is None or not m.running:
            raise ValueError(f"etcd member {name} is not running")
        m.process.send_signal(sig)
        stopped = sig == signal.SIGSTOP
        deadline = time.monotonic() + 2.0
        while _stopped(m.process.pid) != stopped and time.monotonic() < deadline:
            time.sleep(0.01)  # a signal is delivered asynchronously
        return m.process.pid

    def restart(self, name: str) -> None:
        """Start a killed member again on its own data: it rejoins and catches up."""
        m = self.member(name)
        if m.running:
            raise ValueError(f"etcd member {name} is already running")
        self._spawn(m)

    def status(self) -> list[dict[str, Any]]:
        """Each running member's Maintenance.Status: its id, the leader's id, term and index."""
        out = []
        for m in self.members:
            if not m.running:
                continue
            answer = _post(m.endpoint, "/v3/maintenance/status", {}, timeout=2.0)
            if answer is None:
                continue
            header: dict[str, Any] = answer.get("header") or {}
            out.append({"name": m.name, "endpoint": m.endpoint,
                        "member_id": header.get("member_id"), "leader": answer.get("leader"),
                        "raft_term": int(answer.get("raftTerm", header.get("raft_term", 0))),
                        "raft_index": int(answer.get("raftIndex", 0))})
        return out

    def leader(self) -> str | None:
        """The name of the member the running members agree leads, or None (no quorum)."""
        status = self.status()
        ids = {s["member_id"]: s["name"] for s in status}
        leaders = {s["leader"] for s in status}
        if len(leaders) == 1:
            found = ids.get(leaders.pop())
            return str(found) if found is not None else None
        return None

    def etcdctl(self, command: str, *, show: bool = True, timeout: float = 20.0) -> str:
        """Run `etcdctl <command>` against the running members (ETCDCTL_API=3); print the
        command as you would type it (show=True) and return etcdctl's output."""
        endpoints = ",".join(m.endpoint for m in self.members if m.running) or self.endpoints[0]
        argv = [etcd_binary("etcdctl"), f"--endpoints={endpoints}", *shlex.split(command)]
        if show:
            print("$ ETCDCTL_API=3 etcdctl " + shlex.join(argv[1:]))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "ETCDCTL_API": "3"})
        return (done.stdout + done.stderr).rstrip("\n")

    def close(self) -> None:
        """Stop every member (SIGKILL by its PID) and remove the data directory."""
        self._stop_all()
        shutil.rmtree(self.dir, ignore_errors=True)
        atexit.unregister(self.close)

    def _stop_all(self) -> None:
        for m in self.members:
            if m.process is not None and m.process.poll() is None:
                m.process.kill()  # SIGKILL ends a paused (SIGSTOPped) member too
                m.process.wait()

    def __enter__(self) -> EtcdCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        alive = [f"{m.name}(pid {m.pid})" if m.running else f"{m.name}(dead)"
                 for m in self.members]
        return f"<EtcdCluster {' '.join(alive)} token={self.token}>"


def _post(endpoint: str, path: str, body: dict[str, Any], timeout: float
          ) -> dict[str, Any] | None:
    host, port = endpoint.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        reply = conn.getresponse()
        answer = json.loads(reply.read() or b"{}")
        return answer if reply.status == 200 and isinstance(answer, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        conn.close()


def _stopped(pid: int) -> bool:
    """Is the process stopped (state T in /proc/<pid>/stat)?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return False


def _healthy(endpoint: str) -> bool:
    host, port = endpoint.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=1.0)
    try:
        conn.request("GET", "/health")
        return bool(json.loads(conn.getresponse().read()).get("health") == "true")
    except (OSError, ValueError):
        return False
    finally:
        conn.close()
