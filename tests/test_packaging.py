"""The two install routes (pip via pyproject.toml, conda via environment.yml) must agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

# conda-forge names for PyPI packages whose names differ.
CONDA_NAME = {"graphviz": "python-graphviz", "kubernetes": "python-kubernetes"}
# What `make lab` installs beyond the runtime that a learner's notebooks and git use (pyproject's
# dev extra: the rest of it is the test toolchain), with its conda-forge name.
LEARNER_TOOLS = {"ipykernel": "ipykernel", "nbstripout": "nbstripout", "jupytext": "jupytext",
                 "kopf": "kopf", "kubernetes": "python-kubernetes"}
# The programs scripts/system_deps.py installs (apt, or pip for kubectl), by the conda-forge
# package that provides each. Chromium is only the browser test's, not a learner's.
PROGRAMS = {"dot": "graphviz", "etcd": "etcd", "etcdctl": "etcd", "kubectl": "kubernetes-client"}
NOT_FOR_LEARNERS = {"chromium"}


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
    # Nothing extra sneaks in: every conda package is a runtime dependency, the toolchain, or
    # what the learner's loop needs as `make lab` gives it (the test below).
    toolchain = {"python", "pip", "graphviz"}
    assert conda - toolchain - set(LEARNER_TOOLS.values()) - set(PROGRAMS.values()) == {
        CONDA_NAME.get(n, n) for n in runtime}
    python = next(d for d in env["dependencies"] if isinstance(d, str) and _name(d) == "python")
    # `python=3.11` (conda: any 3.11.x): repo2docker, building Binder's image from this file,
    # reads the version only in that form (`python>=3.11` would give it its default, 3.10).
    assert python.split("#")[0].replace(" ", "") == "python=3.11"
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


def test_the_conda_route_is_as_complete_as_make_lab() -> None:
    """Everything `make lab` puts on a learner's machine, environment.yml installs too: the
    notebooks' dev dependencies (git's nbstripout filter, kopf, the Python client, jupytext)
    and every program scripts/system_deps.py installs (etcd, etcdctl, kubectl, dot)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("system_deps", ROOT / "scripts" / "system_deps.py")
    assert spec is not None and spec.loader is not None
    system_deps = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(system_deps)
    programs = {cmd for cmd, *_ in system_deps.NEEDED} | set(system_deps.VENV_TOOLS)
    assert programs - NOT_FOR_LEARNERS == set(PROGRAMS), "a program make lab installs, not named here"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dev = {_name(r) for r in pyproject["project"]["optional-dependencies"]["dev"]}
    assert set(LEARNER_TOOLS) <= dev
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)}
    missing = (set(LEARNER_TOOLS.values()) | set(PROGRAMS.values())) - conda
    assert not missing, f"environment.yml lacks {sorted(missing)}"
    # the git filter the README's next step sets runs `python -m nbstripout`: the same python
    assert "nbstripout" in (ROOT / "scripts" / "git_filters.py").read_text()


def test_binder_files_follow_repo2docker_conventions() -> None:
    """apt.txt: one Ubuntu package a line (the Debian names make lab installs); postBuild and
    start are executable; the Zero to JupyterHub values name an image and pull the course."""
    import os

    apt = [ln.strip() for ln in (ROOT / "apt.txt").read_text().splitlines()
           if ln.strip() and not ln.startswith("#")]
    assert {"graphviz", "etcd-server", "etcd-client"} <= set(apt)
    for script in ("postBuild", "start"):
        path = ROOT / script
        assert path.read_text().startswith("#!/bin/bash") and os.access(path, os.X_OK), script
    assert "ipykernel install --sys-prefix --name python3" in (ROOT / "postBuild").read_text()
    assert 'exec "$@"' in (ROOT / "start").read_text()
    values = yaml.safe_load((ROOT / "docs" / "workshop" / "values.yaml").read_text())
    single = values["singleuser"]
    assert single["image"]["name"] and single["image"]["tag"]
    assert "gitpuller" in " ".join(single["lifecycleHooks"]["postStart"]["exec"]["command"])
    assert single["extraEnv"]["KUBELAB_COURSE"].endswith("/kubelab")
