"""The sandbox's kubelab (kubelab/grading/prune.py): what each exercise's copy leaves out, and
that what it keeps still imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubelab.grading import EXERCISES
from kubelab.grading.contain import runtime_paths
from kubelab.grading.prune import SANDBOX_MODULES, plan, write
from kubelab.grading.remote import VALUE_TYPES

SETS = sorted({e.forbidden_imports for e in EXERCISES.values()})


def _paths(forbidden: tuple[str, ...]) -> set[str]:
    layout = plan(forbidden)
    return set(layout.copy) | set(layout.rewrite)


@pytest.mark.parametrize("forbidden", SETS, ids=lambda f: ",".join(f) or "none")
def test_the_reference_the_checks_and_the_grader_are_absent(forbidden: tuple[str, ...]) -> None:
    paths = _paths(forbidden)
    for module in forbidden:
        stem = module.replace(".", "/")
        assert not [p for p in paths if p == stem + ".py" or p.startswith(stem + "/")], module
    grading = {p for p in paths if p.startswith("kubelab/grading/")}
    assert grading == {"kubelab/grading/__init__.py",
                       *(m.replace(".", "/") + ".py" for m in SANDBOX_MODULES)}
    assert "kubelab/grading/__init__.py" in plan(forbidden).rewrite  # without its imports


@pytest.mark.parametrize(("exercise", "importer"), [
    ("4.1", "kubelab/scheduler/config.py"),     # imports every plugin
    ("6.1", "kubelab/cluster/cluster.py"),      # starts kubelets
    ("7.2", "kubelab/store/raft/raft.py"),      # DEFAULT_RULES
    ("7.1", "kubelab/client/leaderelection/component.py"),
    ("10.1", "kubelab/apiserver/server.py"),    # flowcontrol
])
def test_what_imports_the_reference_is_absent_too(exercise: str, importer: str) -> None:
    assert Path(importer).name and (Path(__file__).parents[1] / importer).exists()
    assert importer in _paths(())
    assert importer not in _paths(EXERCISES[exercise].forbidden_imports)


@pytest.mark.parametrize("forbidden", SETS, ids=lambda f: ",".join(f) or "none")
def test_what_the_sandbox_kubelab_keeps_imports(forbidden: tuple[str, ...], tmp_path: Path) -> None:
    layout = plan(forbidden)
    write(layout, tmp_path)
    packages = [p[:-len("/__init__.py")].replace("/", ".") for p in layout.rewrite]
    values = sorted({v.partition(":")[0] for v in VALUE_TYPES})
    wanted = [m for m in values + packages + ["kubelab.grading.sandbox", "kubelab.api.errors"]
              if not any(m == f or m.startswith(f + ".") for f in forbidden)]
    code = ("import importlib, sys\n"
            "sys.path[:] = sys.argv[1:]\n"
            f"for name in {wanted!r}:\n"
            "    importlib.import_module(name)\n"
            "bad = [n for n in sys.modules if n.startswith('kubelab.grading.') and n not in "
            f"{sorted(SANDBOX_MODULES)!r}]\n"
            "print(bad)\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(tmp_path), *runtime_paths()[1]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_a_bridged_venvs_packages_are_part_of_the_runtime(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A workshop learner's Python is a bridge venv whose .pth adds the instructor's venv's
    site-packages (kubelab/workshop/hub.py): the zygote searches it, or it cannot import
    kubelab's dependencies and every check says "the zygote is gone". The repository and
    PYTHONPATH stay out."""
    bridged = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    repo = tmp_path / "repo"
    bridged.mkdir(parents=True)
    repo.mkdir()
    monkeypatch.setattr(sys, "path", [str(repo), *sys.path, str(bridged)])
    binds, search = runtime_paths()
    assert str(bridged) in search and str(bridged) in binds
    assert str(repo) not in search and str(repo) not in binds


def test_the_sandbox_kubelab_carries_bytecode_its_sources_accept(tmp_path: Path) -> None:
    """Every copied module brings its .pyc, valid for the copy (same size and mtime), so a
    zygote imports compiled code instead of compiling kubelab for every job; a rewritten
    __init__ has none (its bytecode would be of another text)."""
    import importlib.util

    from kubelab.grading.prune import _fresh

    layout = plan(("kubelab.scheduler.plugins",))
    write(layout, tmp_path)
    stale = [rel for rel in layout.copy
             if not _fresh(str(tmp_path / rel), importlib.util.cache_from_source(str(tmp_path / rel)))]
    assert layout.copy and not stale, stale[:5]
    for rel in layout.rewrite:
        assert not Path(importlib.util.cache_from_source(str(tmp_path / rel))).exists(), rel
