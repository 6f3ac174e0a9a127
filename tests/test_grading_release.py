"""kubelab release: exercises/ is generated from solutions/, markers are checked, edits are kept."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kubelab.grading import EXERCISES, ReleaseError, checks_for, load_checks, release
from kubelab.grading.release import render

ROOT = Path(__file__).resolve().parent.parent
TITLE = re.compile(r"^Exercise (\d+\.\d+): (.+?)\.$")
META = re.compile(r"Notebook (\S+), sections? (.+)\. (Easy|Medium|Hard), (\d+) points\.")

SOLUTION = '''"""A module."""


def add(a: int, b: int) -> int:
    """Exercise 9.1: Add two numbers.

    Return a + b.
    """
    ### BEGIN SOLUTION
    total = a + b
    return total
    ### END SOLUTION


class Counter:
    """Exercise 9.2: A counter."""

    def __init__(self) -> None:
        self.n = 0

    def bump(self) -> int:
        ### BEGIN SOLUTION
        self.n += 1
        return self.n
        ### END SOLUTION

    ### BEGIN SOLUTION
    def _helper(self) -> None:
        pass
    ### END SOLUTION


### BEGIN HIDDEN TESTS
assert add(1, 2) == 3
### END HIDDEN TESTS
'''


def test_the_repository_exercises_are_generated_from_solutions() -> None:
    """What CI runs: `kubelab release --check` fails when exercises/ differs from solutions/."""
    result = subprocess.run([sys.executable, "-m", "kubelab", "release", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert release(ROOT / "solutions", ROOT / "exercises", check=True) == []


def test_render_keeps_signatures_and_docstrings_and_stubs_the_bodies() -> None:
    out = render(SOLUTION, "solutions/ex09.py")
    tree = ast.parse(out)
    add = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert ast.unparse(add.args) == "a: int, b: int" and ast.unparse(add.returns) == "int"  # type: ignore[arg-type]
    assert ast.get_docstring(add) == "Exercise 9.1: Add two numbers.\n\nReturn a + b."
    assert 'raise NotImplementedError("exercise 9.1: Add two numbers")' in out
    assert 'raise NotImplementedError("exercise 9.2: A counter")' in out
    assert "total = a + b" not in out and "_helper" not in out and "assert add" not in out
    assert "self.n = 0" in out  # code outside the markers stays
    assert "### " not in out
    namespace: dict[str, object] = {}
    exec(compile(out, "ex09.py", "exec"), namespace)  # the stub imports and runs
    with pytest.raises(NotImplementedError, match=r"exercise 9\.1: Add two numbers"):
        namespace["add"](1, 2)  # type: ignore[operator]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("### BEGIN SOLUTION\nx = 1\n", 1, "### BEGIN SOLUTION is never closed"),
    ("x = 1\n### END SOLUTION\n", 2, "### END SOLUTION without a matching BEGIN"),
    ("### BEGIN SOLUTION\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS\n### END SOLUTION\n", 2,
     "inside the ### BEGIN SOLUTION block opened at line 1"),
    ("### BEGIN HIDDEN TESTS\n### END SOLUTION\n", 2, "cannot close the ### BEGIN HIDDEN TESTS block"),
    ("x = 1\n## BEGIN SOLUTION\n", 2, "malformed marker"),
    ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", 2,
     "a solution block outside an exercise"),
    ("def f(:\n    pass\n", 1, "does not compile"),
])
def test_bad_markers_are_refused_with_file_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ReleaseError) as err:
        render(text, "solutions/ex09.py")
    assert str(err.value).startswith(f"solutions/ex09.py:{line}: ")
    assert message in str(err.value)


def test_release_writes_checks_and_never_overwrites_a_learners_work(tmp_path: Path) -> None:
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    solutions.mkdir()
    (solutions / "ex09.py").write_text(SOLUTION)
    missing = ["exercises/ex09.py is missing: run `kubelab release`"]
    assert release(solutions, exercises, check=True) == missing
    assert release(solutions, exercises) == ["wrote exercises/ex09.py"]
    assert release(solutions, exercises, check=True) == []
    (solutions / "ex09.py").write_text(SOLUTION.replace("Return a + b.", "Return their sum."))
    stale = ["exercises/ex09.py is out of date: run `kubelab release`"]
    assert release(solutions, exercises, check=True) == stale
    assert release(solutions, exercises) == ["wrote exercises/ex09.py"]  # untouched: regenerated
    target = exercises / "ex09.py"
    target.write_text(target.read_text().replace('raise NotImplementedError("exercise 9.1: Add two numbers")',
                                                 "return a + b"))
    with pytest.raises(ReleaseError, match="has been edited since it was generated"):
        release(solutions, exercises)
    assert "return a + b" in target.read_text()
    release(solutions, exercises, force=True)
    assert "return a + b" not in target.read_text()
    (exercises / "stray.py").write_text("")
    assert release(solutions, exercises, check=True) == ["exercises/stray.py has no source in solutions/"]


def test_every_exercise_is_documented_as_registered() -> None:
    """solutions/ is the learner-facing source: its docstrings must say what the grader uses."""
    load_checks()
    seen = set()
    for path in sorted((ROOT / "solutions").glob("ex*.py")):
        for node in ast.parse(path.read_text()).body:
            doc = ast.get_docstring(node) if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else None
            match = TITLE.match((doc or "").splitlines()[0]) if doc else None
            if not match:
                continue
            ex = EXERCISES[match.group(1)]
            seen.add(ex.id)
            assert (path.stem, node.name, match.group(2)) == (ex.module, ex.symbol, ex.title)
            meta = META.search(" ".join(doc.split()))  # type: ignore[union-attr]
            assert meta, f"{ex.id}: the docstring should name notebook, section, difficulty, points"
            assert (meta.group(1), meta.group(3).lower(), int(meta.group(4))) == \
                (ex.notebook, ex.difficulty, ex.points)
            assert sum(c.points for c in checks_for(ex.id)) == ex.points
    assert seen == set(EXERCISES)
    notebooks = {ex.notebook[:2] for ex in EXERCISES.values()}
    assert notebooks == {"01", "02", "03", "04", "05", "06", "07", "08", "09", "10"}
    assert all(sum(ex.notebook.startswith(n) for ex in EXERCISES.values()) >= 2
               for n in notebooks - {"10"})
    # issue 23's fair queue, issue 31's HPA replica calculation
    assert [ex.id for ex in EXERCISES.values() if ex.notebook.startswith("10")] == ["10.1", "10.2"]
