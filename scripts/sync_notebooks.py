"""Write each notebook's .ipynb from its one source, notebooks/NN_name.py (jupytext percent).

`python scripts/sync_notebooks.py` regenerates; `--check` exits 1 when an .ipynb is missing or
differs from its source (tests run it). The .ipynb files are committed without outputs so a
learner can open them straight away; CI executes every one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def render(source: Path) -> str:
    notebook = jupytext.read(source, fmt="py:percent")
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "jupytext": {"formats": "ipynb,py:percent"},
    }
    for cell in notebook.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    for index, cell in enumerate(notebook.cells):
        cell.id = f"{source.stem.split('_')[0]}-{index:03d}"  # stable ids: no churn in diffs
    return nbformat.writes(notebook) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for source in sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.py")):
        target = source.with_suffix(".ipynb")
        text = render(source)
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        if check:
            stale.append(target.name)
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(NOTEBOOKS.parent)}")
    orphans = [p.name for p in NOTEBOOKS.glob("*.ipynb") if not p.with_suffix(".py").exists()]
    if stale or orphans:
        for name in stale:
            print(f"{name} differs from its .py source: run `make notebooks`")
        for name in orphans:
            print(f"{name} has no .py source next to it")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
