"""Every notebook executes top to bottom in a real Jupyter kernel, as CI runs the course."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))


def test_notebooks_match_their_sources() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_notebooks.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_source_is_what_jupytext_writes_from_its_notebook(path: Path) -> None:
    """When an .ipynb is newer than its paired .py (after `make notebooks`), JupyterLab's
    jupytext writes the .py from the notebook and refuses to open it ("File Load Error ... is
    more recent than") unless that equals the .py on disk, blank lines included."""
    import jupytext
    from jupytext.config import load_jupytext_configuration_file

    config = load_jupytext_configuration_file(str(ROOT / "pyproject.toml"))
    written = jupytext.writes(jupytext.read(path), fmt="py:percent", config=config)
    assert written == path.with_suffix(".py").read_text(encoding="utf-8"), (
        f"{path.stem}.py is not in jupytext's own form: write it back from the notebook "
        f"(jupytext --to py:percent) and run `make notebooks`")


def test_notebooks_are_committed_without_outputs() -> None:
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name


# What a notebook must print, beyond running without an error, once it printed the first text:
# notebook 08's kopf handler log came out empty every time kopf ran (the read of kopf's output
# was cancelled when kopf took over 1.5 s to stop, and what it had read was lost). (On a
# machine so loaded that kopf has not started by the end of its section, the notebook says so
# and shows no log.)
MUST_PRINT = {"08_operators": ("Job made by kopf", [
    "kopf.zalando.org/last-handled-configuration", "deleted through kopf's finalizer: True",
    "Handler 'start_night' succeeded.", "Handler 'release_lock' succeeded."])}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    if path.stem == "07b_real_etcd" and shutil.which("etcd") is None and os.geteuid() != 0:
        pytest.skip("07b needs a real etcd: `sudo apt-get install etcd-server etcd-client` "
                    "(make installs them as root)")
    nb = nbformat.read(path, as_version=4)
    # Each cell gets a generous ceiling; benchmarks report the real per-cell figures.
    client = NotebookClient(nb, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", [])
                      if o.get("output_type") == "stream")
    if path.stem in MUST_PRINT and MUST_PRINT[path.stem][0] in printed:
        missing = [text for text in MUST_PRINT[path.stem][1] if text not in printed]
        assert not missing, (missing, printed[-3000:])
