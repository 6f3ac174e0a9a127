"""`kubelab release`: write the learner's exercises/ from the hand-written solutions/.

Each solutions/exNN_*.py keeps its signatures, type hints and docstrings; what sits between

    ### BEGIN SOLUTION          and   ### END SOLUTION

becomes `raise NotImplementedError("exercise 4.1: <title>")` inside a function (the exercise is
the top-level function or class whose docstring starts "Exercise 4.1: <title>."), and disappears
in a class or module body (helpers the learner writes themselves). What sits between

    ### BEGIN HIDDEN TESTS      and   ### END HIDDEN TESTS

is the instructor's and disappears. Markers must be alone on their line, balanced and not
nested; anything else is refused with the file and line. `--check` (CI) fails when exercises/
is not exactly what solutions/ generates. A generated file records a digest of itself, so a
release refuses to overwrite a file a learner has changed (unless forced).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MARKERS", "ReleaseError", "release", "render"]

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
MARKERS = {BEGIN_SOLUTION: END_SOLUTION, BEGIN_HIDDEN: END_HIDDEN}
_WORDS = re.compile(r"#+\s*(BEGIN|END)\s+(SOLUTION|HIDDEN)", re.IGNORECASE)
_TITLE = re.compile(r"^Exercise (\d+\.\d+): (.+?)\.?$")
_DIGEST = "# release-digest: "


class ReleaseError(ValueError):
    """solutions/ cannot be turned into exercises/: the message names the file and line."""


@dataclass(frozen=True)
class _Block:
    kind: str   # BEGIN_SOLUTION or BEGIN_HIDDEN
    begin: int  # 1-based line numbers of the two markers
    end: int


def _blocks(lines: list[str], name: str) -> list[_Block]:
    blocks: list[_Block] = []
    opened_kind, opened_at = "", 0
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not _WORDS.match(text):
            continue
        if text not in MARKERS and text not in MARKERS.values():
            raise ReleaseError(f"{name}:{number}: malformed marker {text!r}; markers are exactly "
                               f"{BEGIN_SOLUTION!r}, {END_SOLUTION!r}, {BEGIN_HIDDEN!r}, {END_HIDDEN!r}")
        if text in MARKERS:
            if opened_kind:
                raise ReleaseError(f"{name}:{number}: {text} inside the {opened_kind} block opened at "
                                   f"line {opened_at} (blocks cannot nest)")
            opened_kind, opened_at = text, number
        elif not opened_kind:
            raise ReleaseError(f"{name}:{number}: {text} without a matching BEGIN")
        elif MARKERS[opened_kind] != text:
            raise ReleaseError(f"{name}:{number}: {text} cannot close the {opened_kind} block "
                               f"opened at line {opened_at}")
        else:
            blocks.append(_Block(opened_kind, opened_at, number))
            opened_kind = ""
    if opened_kind:
        raise ReleaseError(f"{name}:{opened_at}: {opened_kind} is never closed")
    return blocks


def _exercise_titles(tree: ast.Module) -> dict[ast.AST, str]:
    """Top-level function or class -> "exercise 1.1: <title>" from its docstring."""
    titles: dict[ast.AST, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = (ast.get_docstring(node) or "").strip().splitlines()
            match = _TITLE.match(doc[0]) if doc else None
            if match:
                titles[node] = f"exercise {match.group(1)}: {match.group(2)}"
    return titles


def _enclosing(tree: ast.Module, line: int) -> tuple[ast.AST | None, ast.AST | None]:
    """(the top-level definition, the innermost function) around `line`."""
    top = next((n for n in tree.body if n.lineno <= line <= (n.end_lineno or n.lineno)), None)
    function = None
    if top is not None:
        for node in ast.walk(top):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.lineno < line <= (node.end_lineno or node.lineno) and \
                    (function is None or node.lineno > function.lineno):
                function = node
    return top, function


def render(text: str, name: str) -> str:
    """The exercise file for one solution file's text (name is used in error messages)."""
    lines = text.splitlines(keepends=True)
    blocks = _blocks(lines, name)
    try:
        tree = ast.parse(text, filename=name)
    except SyntaxError as err:
        raise ReleaseError(f"{name}:{err.lineno}: does not compile: {err.msg}") from None
    titles = _exercise_titles(tree)
    replacement: dict[int, list[str]] = {}
    for block in blocks:
        new: list[str] = []
        if block.kind == BEGIN_SOLUTION:
            top, function = _enclosing(tree, block.begin)
            if function is not None:
                title = titles.get(top) if top is not None else None
                if title is None:
                    raise ReleaseError(f"{name}:{block.begin}: a solution block outside an exercise "
                                       "(no 'Exercise N.M: title' docstring on the function or "
                                       "class around it)")
                marker = lines[block.begin - 1]
                indent = marker[: len(marker) - len(marker.lstrip())]
                new = [f"{indent}raise NotImplementedError({json.dumps(title, ensure_ascii=False)})\n"]
        replacement[block.begin] = new
    out: list[str] = []
    skip_until = 0
    ends = {b.begin: b.end for b in blocks}
    for number, line in enumerate(lines, 1):
        if number <= skip_until:
            continue
        if number in ends:
            out.extend(replacement[number])
            skip_until = ends[number]
            continue
        out.append(line)
    body = "".join(out)
    body = re.sub(r"\n{4,}", "\n\n\n", body).rstrip("\n") + "\n"  # no holes where blocks were
    return _header(name, body) + body


def _header(name: str, body: str) -> str:
    digest = hashlib.sha256(body.encode()).hexdigest()[:16]
    return (f"# Generated from {name} by `kubelab release`. Do the exercises in this file, then\n"
            f"# check them with `kubelab grade` (see the README).\n{_DIGEST}{digest}\n")


def _untouched(text: str) -> bool:
    """Is this exactly a file release wrote (its digest still matches)?"""
    _head, _, body = text.partition("\n" + _DIGEST)
    digest, _, rest = body.partition("\n")
    return bool(body) and hashlib.sha256(rest.encode()).hexdigest()[:16] == digest.strip()


def release(solutions: Path, exercises: Path, *, check: bool = False, force: bool = False
            ) -> list[str]:
    """Write (or, with check, compare) exercises/ from solutions/. Returns the problems found
    in check mode, or the files written; raises ReleaseError on bad markers or an edited file."""
    sources = sorted(solutions.glob("*.py"))
    if not sources:
        raise ReleaseError(f"{solutions}: no solution files (*.py)")
    wanted = {path.name: render(path.read_text(encoding="utf-8"), f"{solutions.name}/{path.name}")
              for path in sources}
    problems, written = [], []
    for file_name, text in wanted.items():
        target = exercises / file_name
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        if check:
            problems.append(f"{exercises.name}/{file_name} is "
                            f"{'missing' if current is None else 'out of date'}: run `kubelab release`")
            continue
        if current is not None and not force and not _untouched(current):
            raise ReleaseError(f"{target} has been edited since it was generated; keep your work "
                               "elsewhere or use --force to overwrite it")
        exercises.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(f"wrote {exercises.name}/{file_name}")
    if check:
        extra = sorted(p.name for p in exercises.glob("*.py") if p.name not in wanted)
        problems += [f"{exercises.name}/{name} has no source in {solutions.name}/" for name in extra]
        return problems
    return written
