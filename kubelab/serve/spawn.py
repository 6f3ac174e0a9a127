"""A served cluster in a process of its own: `kubelab serve`, started and stopped from Python.

    served = kubelab.serve.spawn(nodes=1, speed=4)   # waits until it listens
    remote = kubelab.serve.connect(served.kubeconfig)
    ...
    served.stop()                                    # SIGTERM to its PID; it shuts down cleanly

A notebook uses it to run its own controller against "another cluster" over HTTPS (notebook
03), and the tests use it to drive the real kubectl. The child is the `kubelab serve` command
itself, its kubeconfig is written in a private temporary folder, and its output is read on a
daemon thread so that its pipe never fills. Stopped by its own PID, also when the Python
process exits.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["Spawned", "spawn"]


class Spawned:
    """A running `kubelab serve` child: its URL, kubeconfig, PID and what it printed."""

    def __init__(self, proc: subprocess.Popen[str], url: str, kubeconfig: Path, home: Path,
                 output: list[str]) -> None:
        self.proc, self.url, self.kubeconfig, self.home, self.output = proc, url, kubeconfig, home, output

    @property
    def pid(self) -> int:
        return self.proc.pid

    def env(self) -> dict[str, str]:
        """An environment for real clients: KUBECONFIG, and HOME for kubectl's cache."""
        return dict(os.environ, KUBECONFIG=str(self.kubeconfig), HOME=str(self.home))

    def stop(self, timeout: float = 20) -> str:
        """SIGTERM to the server's PID; returns everything it printed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        time.sleep(0.1)  # the reader thread takes the last lines
        return "".join(self.output)


def _drain(proc: subprocess.Popen[str], lines: list[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)


def spawn(*args: str, nodes: int = 1, speed: float = 1.0, home: str | Path | None = None,
          timeout: float = 60) -> Spawned:
    """Start `kubelab serve --port 0` with these options (plus any of its flags in args)."""
    folder = Path(home) if home is not None else Path(tempfile.mkdtemp(prefix="kubelab-serve-"))
    kubeconfig = folder / "kubeconfig.yaml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubelab", "serve", "--port", "0", "--nodes", str(nodes),
         "--speed", str(speed), "--kubeconfig", str(kubeconfig), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, HOME=str(folder)))
    assert proc.stdout is not None
    lines: list[str] = []
    url, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "serving the Kubernetes API on " in line:
            url = line.rsplit(" ", 1)[1].strip()
        if line.startswith("export KUBECONFIG="):
            threading.Thread(target=_drain, args=(proc, lines), daemon=True).start()
            spawned = Spawned(proc, url, kubeconfig, folder, lines)
            atexit.register(spawned.stop)
            return spawned
    proc.kill()
    proc.wait()
    raise RuntimeError("kubelab serve did not start:\n" + "".join(lines))
