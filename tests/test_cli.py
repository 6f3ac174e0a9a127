"""`kubelab doctor` and `python -m kubelab`: say what is installed and what is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kubelab.cli import doctor, main


def test_doctor_lists_every_part_and_passes_when_all_is_installed() -> None:
    lines: list[str] = []
    assert shutil.which("dot"), "make test installs Graphviz first"
    assert doctor(lines.append) == 0
    text = "\n".join(lines)
    for name in ("Python", "kubelab", "jupyterlab", "ipywidgets", "pyyaml", "networkx", "graphviz",
                 "dot"):
        assert any(line.startswith(name) for line in lines), name
    assert "MISSING" not in text and "make lab" in text


def test_doctor_says_how_to_install_a_missing_dot(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH: no `dot`
    lines: list[str] = []
    assert doctor(lines.append) == 1
    text = "\n".join(lines)
    assert "dot          MISSING" in text
    assert "sudo apt-get install graphviz" in text and "conda install" in text


def test_python_dash_m_kubelab_runs_the_same_command() -> None:
    result = subprocess.run([sys.executable, "-m", "kubelab", "doctor"], capture_output=True,
                            text=True, env={**os.environ}, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "jupyterlab" in result.stdout
    bad = subprocess.run([sys.executable, "-m", "kubelab", "fly"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "invalid choice: 'fly'" in bad.stderr


def test_main_dispatches_doctor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor"]) == 0
    assert "Everything the course needs is installed" in capsys.readouterr().out
