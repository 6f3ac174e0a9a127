"""The whole course, executed: every notebook in notebooks/, top to bottom, in a real kernel.

Two figures, with the issue's targets: the course's wall time (kernel start-up included, as a
learner or CI pays it) and the slowest single cell (from nbclient's per-cell timing: the
kernel's execute_input to its execute_reply). `python -m benchmarks course` prints the slowest
cells of each notebook too.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from benchmarks.common import Figure

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _seconds(cell: nbformat.NotebookNode) -> float:
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not start or not end:
        return 0.0
    parse = datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def execute(path: Path) -> tuple[float, list[tuple[float, int]]]:
    """Run one notebook; returns its wall time and (seconds, cell index) for each code cell."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=True,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - start
    cells = [(_seconds(cell), i) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    return wall, cells


def run() -> list[Figure]:
    total, slowest, where = 0.0, 0.0, ""
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        wall, cells = execute(path)
        total += wall
        top = sorted(cells, reverse=True)[:3]
        print(f"  {path.name}: {wall:.1f} s; slowest cells "
              + ", ".join(f"#{i} {s:.2f} s" for s, i in top), file=sys.stderr)
        if top and top[0][0] > slowest:
            slowest, where = top[0][0], f"{path.stem} cell {top[0][1]}"
    return [Figure("course: every notebook executed (wall)", total, "s", "<= 120"),
            Figure(f"course: slowest cell ({where})", slowest, "s", "<= 3")]
