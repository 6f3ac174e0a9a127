"""kubectl's command line: a 1 MiB argument (issue 15 measured 23 s in shlex's splitter)."""

from __future__ import annotations

import time

from benchmarks.common import Figure
from kubelab.cluster import Cluster


def run() -> list[Figure]:
    c = Cluster(nodes=1, components=[])
    command = "get pods " + "a" * (1 << 20)
    start = time.perf_counter()
    out = c.kubectl(command)
    seconds = time.perf_counter() - start
    assert out.exit_code == 1 and out.startswith("Error from server (NotFound)")
    return [Figure("kubectl get with a 1 MiB argument", seconds, "s", "< 1")]
