"""The learner's working tree: JupyterLab's configuration, and a saved notebook leaving git clean.

A learner opens a notebook in the Lab, runs it and saves it (autosave does, every two minutes).
The outputs stay on disk, yet `git status` must stay clean, so that `git pull` of the next course
update does not conflict: nbstripout is the .ipynb clean filter (scripts/git_filters.py) and
jupytext writes no metadata into the paired .py (pyproject.toml [tool.jupytext]).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "scripts" / "jupyter" / "jupyter_server_config.py"


def lab_config(monkeypatch: Any, *, euid: int, env: dict[str, str], platform: str = "linux"
               ) -> Config:
    """Run the Lab's config file as Jupyter does, with this user, environment and platform."""
    for key in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    monkeypatch.setattr(sys, "platform", platform)
    config = Config()  # what Jupyter hands a config file
    exec(compile(CONFIG.read_text(), str(CONFIG), "exec"),
         {"get_config": lambda: config, "__file__": str(CONFIG)})
    return config


def test_the_lab_serves_the_repository_and_allows_root_only_as_root(monkeypatch: Any) -> None:
    as_root = lab_config(monkeypatch, euid=0, env={})
    assert as_root["ServerApp"]["root_dir"] == str(ROOT)
    assert as_root["LabApp"]["default_url"] == "/lab/tree/notebooks/00_tour.ipynb"
    assert (ROOT / "notebooks" / "00_tour.ipynb").exists()
    assert as_root["ServerApp"]["allow_root"] is True
    assert as_root["ServerApp"]["open_browser"] is False  # a container: no display
    user = lab_config(monkeypatch, euid=1000, env={"DISPLAY": ":0"})
    assert user["ServerApp"]["allow_root"] is False and user["ServerApp"]["open_browser"] is True
    assert lab_config(monkeypatch, euid=1000, env={"WAYLAND_DISPLAY": "wayland-0"}
                      )["ServerApp"]["open_browser"] is True
    assert lab_config(monkeypatch, euid=501, env={}, platform="darwin")["ServerApp"]["open_browser"] is True


def test_kernels_and_terminals_find_the_venv_first(monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("SHELL", "/bin/bash")
    config = lab_config(monkeypatch, euid=1000, env={})
    venv_bin = str(Path(sys.executable).parent)
    assert os.environ["PATH"].split(os.pathsep)[:2] == [venv_bin, "/usr/bin"]
    assert (Path(venv_bin) / "kubelab").exists()
    # Not a login shell: /etc/profile would put PATH back to the system's.
    assert config["ServerApp"]["terminado_settings"] == {"shell_command": ["/bin/bash", "-i"]}
    lab_config(monkeypatch, euid=1000, env={})  # a second read does not add it twice
    assert os.environ["PATH"].split(os.pathsep).count(venv_bin) == 1


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def clone_of_the_working_tree(target: Path) -> Path:
    """A git clone of the repository as it is on disk (uncommitted changes included)."""
    files = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "course")
    return target


def test_running_and_saving_a_notebook_leaves_git_status_clean(tmp_path: Path, monkeypatch: Any) -> None:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupytext import TextFileContentsManager  # the Lab's (async) one, in its sync form

    repo = clone_of_the_working_tree(tmp_path / "course")
    setup = subprocess.run([sys.executable, "scripts/git_filters.py", "--python", sys.executable],
                           cwd=repo, capture_output=True, text=True)
    assert setup.returncode == 0 and "set the git filter nbstripout" in setup.stdout, setup
    assert git(repo, "status", "--porcelain") == ""
    # Save as JupyterLab does: through jupytext's contents manager, which writes both files.
    config = lab_config(monkeypatch, euid=os.geteuid(), env={})
    manager = TextFileContentsManager(root_dir=str(repo), config=config)
    path = "notebooks/01_store.ipynb"
    nb = nbformat.from_dict(manager.get(path)["content"])
    spec = KernelSpecManager().get_kernel_spec("python3")  # the Lab records the kernel it ran
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": spec.display_name,
                                 "language": spec.language}
    NotebookClient(nb, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(repo / "notebooks")}}).execute()
    nb.cells[0].metadata["scrolled"] = True  # what scrolling an output does
    manager.save({"type": "notebook", "content": nb}, path)
    saved = nbformat.read(repo / path, as_version=4)
    assert any(c.get("outputs") for c in saved.cells if c.cell_type == "code")  # kept on disk
    assert "widgets" in saved.metadata and "version" in saved.metadata["language_info"]
    assert (repo / path).read_text() != git(repo, "show", f"HEAD:{path}")
    assert git(repo, "status", "--porcelain") == ""  # ... and git sees the committed notebook
    assert git(repo, "diff", "--stat") == ""
    # A real edit is not hidden: both files of the pair show it.
    nb.cells[0].source += "\nA learner's note."
    manager.save({"type": "notebook", "content": nb}, path)
    assert sorted(git(repo, "status", "--porcelain").splitlines()) == [
        " M notebooks/01_store.ipynb", " M notebooks/01_store.py"]


def test_every_exercise_link_in_every_notebook_opens_a_file_in_the_lab() -> None:
    """The Lab is rooted at the repository and resolves a notebook's relative link against the
    notebook's folder: ../exercises/ex01_store.py from notebooks/ is exercises/ex01_store.py.
    (tests/test_browser.py clicks one in Chromium.)"""
    import re

    links = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                links += [(path.name, target) for target in re.findall(r"\]\(([^)\s]+)\)", cell.source)
                          if "exercises/" in target or "solutions/" in target]
    assert len({name for name, _ in links}) >= 6, links  # 01..06 each link their exercises
    for name, target in links:
        assert not target.startswith(("/", "http")), (name, target)
        resolved = (ROOT / "notebooks" / target.split("#")[0]).resolve()
        assert resolved.is_file() and ROOT in resolved.parents, (name, target)


def test_doctor_says_what_set_up_changed(tmp_path: Path, monkeypatch: Any) -> None:
    from kubelab.cli import SETUP_LOG, doctor

    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    (tmp_path / SETUP_LOG).write_text(
        "2026-12-01 06:49:05Z installed kubelab and its dependencies into .venv\n"
        "2026-12-01 06:49:07Z set the git filter nbstripout for *.ipynb in .git/config\n")
    lines: list[str] = []
    doctor(lines.append)
    at = lines.index(f"What set-up changed here (newest last, from {tmp_path / SETUP_LOG}):")
    assert lines[at + 1:at + 3] == [
        "  - 2026-12-01 06:49:05Z installed kubelab and its dependencies into .venv",
        "  - 2026-12-01 06:49:07Z set the git filter nbstripout for *.ipynb in .git/config"]
    assert any(line.startswith("git filter") for line in lines)


def test_the_kernel_make_installs_has_the_venv_first_on_path_and_the_committed_name() -> None:
    """`!kubelab grade 1.1` in a cell finds the venv's kubelab however the Lab was started, and
    saving a notebook keeps its committed kernelspec ("Python 3")."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    venv_bin = str(Path(sys.executable).parent)
    assert spec.display_name == "Python 3"
    assert spec.env["PATH"].split(os.pathsep)[0] == venv_bin and spec.env["PATH"].endswith("${PATH}")
    committed = nbformat.read(ROOT / "notebooks" / "00_tour.ipynb", as_version=4).metadata["kernelspec"]
    assert committed["display_name"] == spec.display_name and committed["name"] == "python3"


def test_the_notebook_filter_is_nbstripout_without_its_slow_import(tmp_path: Path) -> None:
    """The clean filter git runs (for every save in the Lab, twice: the post-save hook) gives
    nbstripout's own output, without importing rfc3987_syntax, whose Lark parsers cost 3 to 4 s
    of CPU per run (scripts/git_filters.py: a save that slow let the next one find the file
    changed, "File Changed ... Overwrite?")."""
    git(tmp_path, "init", "-q")
    setup = subprocess.run([sys.executable, str(ROOT / "scripts" / "git_filters.py"), "--python",
                            sys.executable], cwd=tmp_path, capture_output=True, text=True)
    assert setup.returncode == 0, setup
    clean = git(tmp_path, "config", "--get", "filter.nbstripout.clean").strip()
    nb = nbformat.read(ROOT / "notebooks" / "01_store.ipynb", as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
    code.execution_count = 7
    nb.metadata["widgets"] = {"state": {}}
    text = nbformat.writes(nb)
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, shell=True, input=text, cwd=tmp_path, env=env,
                              capture_output=True, text=True)

    ours = run(clean)
    theirs = run(f"{sys.executable} -m nbstripout --keep-id")
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr[-2000:], theirs.stderr[-2000:])
    assert ours.stdout == theirs.stdout == git(ROOT, "show", "HEAD:notebooks/01_store.ipynb")
    def imported(run: subprocess.CompletedProcess[str]) -> set[str]:
        return {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines()}

    assert {"nbformat", "jsonschema"} <= imported(ours)
    assert not {"rfc3987_syntax.syntax_helpers", "lark"} & imported(ours)  # tried, refused
    if importlib.util.find_spec("rfc3987_syntax"):  # what plain nbstripout pays
        assert {"rfc3987_syntax.syntax_helpers", "lark"} <= imported(theirs)
