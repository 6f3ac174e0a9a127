"""The whole course, executed: every notebook in notebooks/, top to bottom, in a real kernel.

Two figures, with the issue's targets: the course's wall time (kernel start-up included, as a
learner or CI pays it) and the slowest single cell (from nbclient's per-cell timing: the
kernel's execute_input to its execute_reply). `python -m benchmarks course` prints the slowest
cells of each notebook too. KUBELAB_BENCH_QUICK=1 runs two notebooks at a time (one kernel per
core of a 2-core machine), so the first row is then the wall time of the whole course run that
way, not the sum of the notebooks' times, and the slowest cell may wait for a core.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
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
    quick = bool(os.environ.get("KUBELAB_BENCH_QUICK"))
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    start = time.perf_counter()
    # Each notebook in a fresh child process (spawned: the benchmark process may hold threads).
    with ProcessPoolExecutor(max_workers=2 if quick else 1,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        runs = list(pool.map(execute, paths))
    total = time.perf_counter() - start if quick else sum(wall for wall, _ in runs)
    slowest, where = 0.0, ""
    for path, (wall, cells) in zip(paths, runs, strict=True):
        top = sorted(cells, reverse=True)[:3]
        print(f"  {path.name}: {wall:.1f} s; slowest cells "
              + ", ".join(f"#{i} {s:.2f} s" for s, i in top), file=sys.stderr)
        if top and top[0][0] > slowest:
            slowest, where = top[0][0], f"{path.stem} cell {top[0][1]}"
    how = "two at a time, wall" if quick else "wall"
    return [Figure(f"course: every notebook executed ({how})", total, "s", "" if quick else "<= 120"),
            Figure(f"course: slowest cell ({where})", slowest, "s", "<= 3")]
