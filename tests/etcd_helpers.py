"""Real etcd for a test module: one member (or a cluster) per module, closed in a finally.

The real-etcd tests skip only when etcd is absent and cannot be installed (not root), with the
command that installs it; `make test` runs scripts/system_deps.py first, which installs Debian's
etcd-server and etcd-client when it runs as root (CI does).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable

import pytest

from kubelab.sim import Clock


def require_etcd() -> None:
    if shutil.which("etcd") and shutil.which("etcdctl"):
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.fail("etcd is missing although we are root: `make test` installs etcd-server and "
                    "etcd-client first (scripts/system_deps.py)")
    pytest.skip("etcd is not installed and we are not root to install it: run "
                "`sudo apt-get install etcd-server etcd-client`")


def settle(clock: Clock, done: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Run the clock until done() holds, at most `timeout` seconds of wall time (a real etcd's
    watch events arrive on their own time); True if it held."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        clock.run(until=clock.now + 0.02)
    return True
