"""The `kubelab` command: `kubelab doctor` checks that the course can run here.

Later issues add `kubelab grade` and `kubelab release`.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version

__all__ = ["doctor", "main"]

# (distribution name, what it is for)
PYTHON_PACKAGES = [
    ("kubelab", "this course's package"),
    ("jupyterlab", "runs the notebooks"),
    ("ipywidgets", "failure-injection buttons and live views"),
    ("pyyaml", "reads manifests"),
    ("networkx", "the object-hierarchy graph"),
    ("graphviz", "Python side of the pictures"),
]


def _dist_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _dot_version() -> str | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    try:
        out = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # `dot -V` prints e.g. "dot - graphviz version 2.42.2 (0)" on stderr.
    text = (out.stderr or out.stdout).strip()
    return text.split("version", 1)[-1].strip() or text


def doctor(out: Callable[[str], None] = print) -> int:
    """Print what is installed; return 0 when everything the course needs is there."""
    missing: list[str] = []
    out(f"{'Python':<12} {platform.python_version()}  ({sys.executable})")
    for dist, purpose in PYTHON_PACKAGES:
        found = _dist_version(dist)
        if found is None:
            missing.append(f"{dist} ({purpose}): run `make lab`, or `pip install -e .` in the repo")
        out(f"{dist:<12} {found or 'MISSING'}")
    dot = _dot_version()
    out(f"{'dot':<12} {dot or 'MISSING'}")
    if dot is None:
        missing.append("Graphviz's `dot` (draws every picture): run "
                       "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` "
                       "(macOS) or `conda install -c conda-forge graphviz`")
    if missing:
        out("")
        out("Missing:")
        for item in missing:
            out(f"  - {item}")
        return 1
    out("")
    out("Everything the course needs is installed. Start it with `make lab`.")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kubelab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check Python, JupyterLab, ipywidgets and Graphviz")
    args = parser.parse_args(argv)
    if args.command == "doctor":
        return doctor()
    parser.error(f"unknown command {args.command}")  # argparse exits; keeps mypy happy
    return 2
