"""Start `kubelab serve` for a test module, and run the real kubectl against it.

kubelab.serve.spawn starts the server the way a learner does (the kubelab command), on a free
loopback port, with its kubeconfig and kubectl's cache in a temporary folder, and stops it by
its own PID with SIGTERM; the tests check that it says it stopped cleanly.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubelab.serve import Spawned, spawn
from kubelab.serve.server import kubectl_binary

KUBECTL = kubectl_binary()


class Served(Spawned):
    def kubectl(self, *args: str, check: bool = True, stdin: str | None = None,
                timeout: float = 30) -> subprocess.CompletedProcess[str]:
        if KUBECTL is None:
            pytest.skip("kubectl is not installed (make installs it)")
        done = subprocess.run([KUBECTL, *args], env=self.env(), input=stdin, capture_output=True,
                              text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{done.stderr}")
        return done


def start_server(tmp: Path, *args: str) -> Served:
    spawned = spawn(*args, home=tmp)
    return Served(spawned.proc, spawned.url, spawned.kubeconfig, spawned.home, spawned.output)


def serving(tmp: Path, *args: str) -> Iterator[Served]:
    """A test module's served cluster: started, yielded, stopped by its PID; it must stop
    cleanly (exit 0, and say so)."""
    server = start_server(tmp, *args)
    yield server
    output = server.stop()
    assert server.proc.returncode == 0 and "kubelab: stopped" in output, output
