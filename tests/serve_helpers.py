"""Start `kubelab serve` for a test module, and run the real kubectl against it.

The server is started the way a learner starts it (the kubelab command), on a free loopback
port, with its kubeconfig and kubectl's cache in a temporary folder; it is stopped by its own
PID with SIGTERM, and must say that it stopped cleanly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kubelab.serve.server import kubectl_binary

KUBECTL = kubectl_binary()


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    kubeconfig: Path
    home: Path
    output: list[str] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        return dict(os.environ, KUBECONFIG=str(self.kubeconfig), HOME=str(self.home))

    def kubectl(self, *args: str, check: bool = True, stdin: str | None = None,
                timeout: float = 30) -> subprocess.CompletedProcess[str]:
        if KUBECTL is None:
            pytest.skip("kubectl is not installed (make installs it as root)")
        done = subprocess.run([KUBECTL, *args], env=self.env(), input=stdin, capture_output=True,
                              text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{done.stderr}")
        return done

    def stop(self) -> str:
        """SIGTERM by PID; returns everything the server printed."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=20)
        time.sleep(0.1)  # the drain thread reads the last lines
        return "".join(self.output)


def _drain(proc: subprocess.Popen[str], lines: list[str]) -> None:
    """Keep reading the server's output, so that its pipe never fills and blocks it."""
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)


def start_server(tmp: Path, *args: str) -> Served:
    kubeconfig = tmp / "kubeconfig.yaml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubelab", "serve", "--port", "0", "--kubeconfig", str(kubeconfig), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, HOME=str(tmp)))
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    url = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "serving the Kubernetes API on " in line:
            url = line.rsplit(" ", 1)[1].strip()
        if line.startswith("export KUBECONFIG="):
            served = Served(proc, url, kubeconfig, tmp, lines)
            threading.Thread(target=_drain, args=(proc, lines), daemon=True).start()
            return served
    proc.kill()
    proc.wait()
    raise AssertionError("kubelab serve did not start:\n" + "".join(lines))
