"""The two install routes (pip via pyproject.toml, conda via environment.yml) must agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

# conda-forge names for PyPI packages whose names differ.
CONDA_NAME = {"graphviz": "python-graphviz"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0].strip().lower()


def test_environment_yml_lists_the_runtime_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "conda-forge" in env["channels"]
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)}
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    assert pip_sections == [["-e ."]], "environment.yml must install kubelab itself with pip"
    assert {CONDA_NAME.get(n, n) for n in runtime} <= conda
    # Nothing extra sneaks in: every conda package is a runtime dependency or the toolchain.
    toolchain = {"python", "pip", "graphviz"}
    assert conda - toolchain == {CONDA_NAME.get(n, n) for n in runtime}
    python = next(d for d in env["dependencies"] if isinstance(d, str) and _name(d) == "python")
    assert python.replace(" ", "") == "python>=3.11"
    assert project["requires-python"] == ">=3.11"


def test_requested_packages_are_runtime_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    assert {"jupyterlab", "ipywidgets", "pyyaml", "networkx", "graphviz"} <= runtime


def test_required_layout_exists() -> None:
    for path in ("notebooks", "kubelab", "exercises", "solutions", "environment.yml", "README.md",
                 "pyproject.toml", "Makefile", "tests", "benchmarks", ".ci/run"):
        assert (ROOT / path).exists(), path


def test_ci_runs_make_test() -> None:
    assert "make test" in (ROOT / ".ci" / "run").read_text()
