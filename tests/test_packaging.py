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


def test_license_is_an_spdx_expression_and_setuptools_can_read_it() -> None:
    """A `project.license` table makes setuptools warn at every install; PEP 639's SPDX string
    needs setuptools 77 or later."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "Apache-2.0"
    (setuptools,) = [r for r in pyproject["build-system"]["requires"] if _name(r) == "setuptools"]
    minimum = tuple(int(n) for n in setuptools.split(">=")[1].split("."))
    assert minimum >= (77,), setuptools


def test_notebook_outputs_and_jupytext_metadata_stay_out_of_git() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dev = {_name(r) for r in pyproject["project"]["optional-dependencies"]["dev"]}
    assert {"nbstripout", "jupytext"} <= dev
    jupytext = pyproject["tool"]["jupytext"]
    assert jupytext["formats"] == "ipynb,py:percent"
    assert jupytext["notebook_metadata_filter"] == "-all" and jupytext["cell_metadata_filter"] == "-all"
    assert "*.ipynb filter=nbstripout diff=ipynb" in (ROOT / ".gitattributes").read_text().splitlines()
    makefile = (ROOT / "Makefile").read_text()
    assert "venv: $(STAMP) system-deps git-filters" in makefile and "scripts/git_filters.py" in makefile
