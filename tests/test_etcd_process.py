"""The etcd processes kubelab starts are stopped by kubelab: on close, at interpreter exit and
when the starting process is killed (a notebook kernel restarted), by their own PIDs; and
`make` / `kubelab doctor` know the Debian packages."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from etcd_helpers import require_etcd

from kubelab.cli import doctor

ROOT = Path(__file__).resolve().parent.parent
START = ("import os, sys; from kubelab.etcd import EtcdCluster; e = EtcdCluster(1); "
         "print(e.members[0].pid, e.dir, flush=True); ")


def _gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie of an orphan is reaped by init; /proc says so before it disappears.
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"):
            return True
        time.sleep(0.05)
    return False


def _run(code: str) -> tuple[int, str, int]:
    done = subprocess.run([sys.executable, "-c", START + code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    pid, data_dir = done.stdout.split()[:2]
    return int(pid), data_dir, done.returncode


def test_etcd_dies_with_the_process_that_started_it_when_that_is_killed() -> None:
    require_etcd()
    pid, data_dir, code = _run("os.kill(os.getpid(), 9)")  # a kernel restart: no atexit
    assert code == -9
    try:
        assert _gone(pid), f"etcd (pid {pid}) outlived the process that started it"
    finally:
        subprocess.run(["rm", "-rf", data_dir], check=False)


def test_etcd_is_stopped_and_its_data_removed_at_interpreter_exit() -> None:
    require_etcd()
    pid, data_dir, code = _run("sys.exit(0)")  # never closed: atexit does it
    assert code == 0 and _gone(pid) and not Path(data_dir).exists()


def test_close_stops_every_member_by_pid_and_removes_the_data() -> None:
    require_etcd()
    from kubelab.etcd import EtcdCluster

    etcd = EtcdCluster(1)
    pid = etcd.members[0].pid
    assert pid is not None and Path(etcd.dir).is_dir()
    etcd.close()
    assert _gone(pid) and not Path(etcd.dir).exists() and "dead" in repr(etcd)


def test_make_installs_the_debian_packages_and_doctor_reports_them(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import system_deps
    finally:
        sys.path.pop(0)
    assert {(cmd, pkg) for cmd, pkg, *_ in system_deps.NEEDED} >= {
        ("etcd", "etcd-server"), ("etcdctl", "etcd-client")}
    lines: list[str] = []
    doctor(lines.append)
    if os.path.exists("/usr/bin/etcd"):
        assert any(line.startswith("etcd ") and "3." in line for line in lines)
    monkeypatch.setenv("PATH", str(tmp_path))
    lines.clear()
    doctor(lines.append)
    (etcd_line,) = [line for line in lines if line.startswith("etcd ")]
    assert "absent" in etcd_line and "apt-get install etcd-server" in etcd_line


def test_a_port_taken_before_etcd_binds_it_means_new_ports_not_a_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    require_etcd()
    import socket

    from kubelab.etcd import EtcdCluster, process

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    real = process._free_ports
    calls: list[list[int]] = []

    def unlucky(count: int) -> list[int]:
        ports = real(count) if calls else [taken.getsockname()[1]] * count
        calls.append(ports)
        return ports

    monkeypatch.setattr(process, "_free_ports", unlucky)
    try:
        with EtcdCluster(1) as etcd:
            assert len(calls) == 2 and etcd.members[0].client_port == calls[1][0]
            assert etcd.leader() == "etcd-1"
    finally:
        taken.close()
