"""The course frame every notebook keeps: predictions with folded answers, pitfalls, a real
cluster's commands, a challenge, and (from 01 on) a last cell that grades the notebook's own
exercises. Links must open in a Lab rooted at the repository: relative, and to files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from kubelab.grading import EXERCISES

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FOLDED = "<details><summary>Answer</summary>"


def markdown(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_the_course_has_its_notebooks() -> None:
    assert [p.stem.split("_")[0] for p in NOTEBOOKS] == ["00", "01", "02", "03", "04", "05", "06",
                                                         "06b", "07", "07b", "08", "09", "10"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_frame_sections(path: Path) -> None:
    text = markdown(path)
    for heading in ("## Pitfalls", "## On a real cluster", "## Challenge", "## Summary"):
        assert re.search(rf"^{heading}\s*$", text, re.M), f"{path.name}: no {heading!r}"
    real = text.split("## On a real cluster", 1)[1].split("\n## ", 1)[0]
    assert "kubectl " in real and "Where kubelab simplifies" in real, path.name
    assert text.count("**Predict, then run.**") >= 2, path.name
    # each prediction's answer is folded away, right after the question
    for question in text.split("**Predict, then run.**")[1:]:
        assert FOLDED in question.split("</details>", 1)[0], path.name
    assert text.count("<details>") == text.count("</details>"), path.name


def test_tour_has_a_check_of_its_own_and_names_the_release() -> None:
    text = markdown(NOTEBOOKS[0])
    check = text.split("## Check yourself", 1)[1]
    assert check.count(FOLDED) >= 3
    assert "Kubernetes 1.34" in text


# Labs with a letter (07b: a real etcd) have no graded exercise: the grader's sandbox runs no
# real processes. Every numbered notebook from 01 on has one, and so has a lettered notebook that
# the registry names (06b: troubleshooting, exercise 6.3).
GRADED = [p for p in NOTEBOOKS[1:] if p.stem.split("_")[0].isdigit()
          or any(e.notebook == p.stem for e in EXERCISES.values())]


def grade_call(stem: str) -> str:
    """What the grade cell of notebook `stem` says: grade("6") when the notebook has all of its
    number's exercises, else the ids of its own: grade("6.3"), grade(["6.1", "6.2"])."""
    own = [e.id for e in EXERCISES.values() if e.notebook == stem]
    number = str(int(stem[:2]))
    if own == [e.id for e in EXERCISES.values() if e.id.split(".")[0] == number]:
        return f'grade("{number}")'
    return f'grade("{own[0]}")' if len(own) == 1 else "grade([" + ", ".join(f'"{i}"' for i in own) + "])"


@pytest.mark.parametrize("path", GRADED, ids=[p.stem for p in GRADED])
def test_last_code_cell_grades_this_notebooks_exercises(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    # The grade cell is re-run after each change with Shift+Enter, which on a notebook's last
    # cell appends an empty one (the .py and the .ipynb then differ from git's): a short
    # markdown cell follows it, so Shift+Enter moves there and git stays clean.
    after, last, above = nb.cells[-1], nb.cells[-2], nb.cells[-3]
    assert after.cell_type == "markdown" and "Shift+Enter" in after.source
    assert last.cell_type == "code"
    assert "from kubelab.grading import grade" in last.source
    assert re.search(rf"^{re.escape(grade_call(path.stem))}$", last.source, re.M), last.source
    # the markdown above says where the exercises are and what an unsolved report looks like
    assert above.cell_type == "markdown" and "## Check your work" in above.source
    module = next(e.module for e in EXERCISES.values() if e.notebook == path.stem)
    assert f"(../exercises/{module}.py)" in above.source
    assert "Nothing solved yet?" in above.source and "NotImplementedError" in above.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_links_open_in_a_lab_rooted_at_the_repository(path: Path) -> None:
    for target in LINK.findall(markdown(path)):
        if re.match(r"https?://", target):
            continue
        file = (path.parent / target.split("#", 1)[0]).resolve()
        assert file.is_relative_to(ROOT), f"{path.name}: {target} leaves the repository"
        assert file.is_file(), f"{path.name}: {target} is not a file"


def test_readme_names_the_release() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    faithful = readme.split("### How faithful is it?", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"\*\*Which Kubernetes\?\*\*.*\*\*1\.34\*\*", faithful)
