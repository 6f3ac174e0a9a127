"""A submission's file is read once, within limits, and only from inside the submission folder;
its one parse is bounded; and a grader without namespaces says so in the report."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import kubelab.grading.source as source
from kubelab.grading.source import MAX_SOURCE, Source, find_module, forbidden_name, read_source, scan

ROOT = Path(__file__).resolve().parent.parent


def test_a_plain_file_is_read_and_what_it_imports_is_found(tmp_path: Path) -> None:
    (tmp_path / "ex04_scheduler.py").write_text(
        "import kubelab.api\nfrom kubelab.scheduler import plugins\nNAME = 'kubelab.client.workqueue'\n")
    path = find_module(tmp_path, "ex04_scheduler")
    assert path == tmp_path / "ex04_scheduler.py"
    got = read_source(tmp_path, path)
    assert (got.refused, got.text.startswith("import kubelab.api")) == ("", True)
    names, why = scan(got)
    assert why == "" and names is not None
    assert forbidden_name(names, ("kubelab.scheduler.plugins",)) == "kubelab.scheduler.plugins"
    assert forbidden_name(names, ("kubelab.client.workqueue",)) == "kubelab.client.workqueue"
    assert forbidden_name(names, ("kubelab.controllers",)) is None
    assert scan(Source(path, "def broken(:\n")) == (None, "")  # the sandbox reports it, with its line


def test_links_and_files_outside_the_folder_are_refused(tmp_path: Path) -> None:
    student = tmp_path / "student"
    (student / "exercises").mkdir(parents=True)
    (student / "ex01_store.py").symlink_to(ROOT / "solutions" / "ex01_store.py")
    linked = read_source(student, student / "ex01_store.py")
    assert (linked.refused, linked.text) == ("ex01_store.py is a symbolic link: hand in the file itself", "")
    other = tmp_path / "other"
    other.mkdir()
    (other / "ex03_watch.py").write_text("x = 1\n")
    outside = read_source(student, other / "ex03_watch.py")
    assert outside.refused == "ex03_watch.py resolves outside the submission folder student/"
    os.mkfifo(student / "exercises" / "ex02_apiserver.py")  # a FIFO would block a plain open()
    fifo = read_source(student, student / "exercises" / "ex02_apiserver.py")
    assert fifo.refused == "ex02_apiserver.py is not a regular file"


def test_too_large_and_not_utf8_are_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(b"#" * (MAX_SOURCE + 1))
    assert read_source(tmp_path, tmp_path / "big.py").refused == (
        f"big.py is too large to grade: {MAX_SOURCE + 1} bytes, the limit is {MAX_SOURCE} bytes (512 KiB)")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")
    assert read_source(tmp_path, tmp_path / "latin.py").refused == "latin.py is not UTF-8 text (byte 5)"
    (tmp_path / "exact.py").write_bytes(b"#" * MAX_SOURCE)
    assert read_source(tmp_path, tmp_path / "exact.py").refused == ""


def test_a_parse_that_does_not_end_is_stopped_by_its_cpu_limit(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    def endless(text: str) -> list[str]:
        while True:
            pass

    monkeypatch.setattr(source, "_names", endless)
    monkeypatch.setattr(source, "PARSE_SECONDS", 1)
    names, why = scan(Source(tmp_path / "ex01_store.py", "x = 1\n"))
    assert names is None
    assert why == "ex01_store.py could not be parsed within 1 s of CPU and 1 GiB of memory"


def test_without_namespaces_the_report_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubelab.grading.grader as grader
    import kubelab.grading.jobs as jobs
    from kubelab.grading import grade

    degraded = ((), "not contained: no PID namespace for the grading processes (a test)")
    monkeypatch.setattr(jobs, "containment", lambda: degraded)
    monkeypatch.setattr(grader, "containment", lambda: degraded)
    report = grade("1.1", submission=ROOT / "solutions", check="updates_a_key")
    assert report.total == 2
    assert report.notes == [degraded[1]]
    assert report.text().splitlines()[1] == f"note: {degraded[1]}"
