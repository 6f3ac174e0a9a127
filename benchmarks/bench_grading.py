"""The grader: how long a learner waits for `kubelab grade`, and what a class costs.

- grading every solution (all exercises, every check, every seed) and every stub, wall seconds;
- one sandbox started from a fresh interpreter vs forked from the zygote;
- calls per second across the wire (a filter plugin is called once per pod per node).
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.common import Figure, rate
from kubelab.grading import grade
from kubelab.grading.exercises import Exercise
from kubelab.grading.launch import Sandbox
from kubelab.grading.prune import plan, write
from kubelab.grading.source import Source
from kubelab.grading.zygote import Zygote

ROOT = Path(__file__).resolve().parent.parent
PROBE = "def echo(x):\n    return x\n"
_ECHO = Exercise("0.0", "echo", "probe", "echo", "00_tour", "", "easy", 0)


def _sandbox(folder: Path, seconds: int) -> Sandbox:
    return Sandbox(Source(folder / "probe.py", PROBE), _ECHO, deadline=time.monotonic() + seconds,
                   output_limit=1 << 16, cpu_seconds=seconds)


def _wall(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def _sandbox_start(folder: Path, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        box = _sandbox(folder, 30)
        box.start()
        best = min(best, time.perf_counter() - start)
        box.close()
    return best


def run() -> list[Figure]:
    import tempfile

    graded = []
    solutions = _wall(lambda: graded.append(grade(submission=ROOT / "solutions")))
    stubs = _wall(lambda: grade(submission=ROOT / "exercises"))
    points = sum(c.max_points for c in graded[0].checks())
    figures = [Figure(f"grade all solutions ({points} points)", solutions, "s", "<= 30"),
               Figure("grade all stubs (exercises/)", stubs, "s", "<= 15")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "probe.py").write_text(PROBE)
        figures.append(Figure("sandbox start, new interpreter", _sandbox_start(folder), "s"))
        tree = folder / "sandbox-kubelab"  # the sandbox's own kubelab, as a grading process makes it
        Sandbox.zygote = Zygote(str(write(plan(_ECHO.forbidden_imports), tree)))
        Sandbox.zygote.ready()
        try:
            figures.append(Figure("sandbox start, forked from the zygote", _sandbox_start(folder), "s"))
            box = _sandbox(folder, 60)
            echo = box.start().target
            figures.append(Figure("calls across the wire", rate(5000, lambda: [echo(i) for i in range(5000)]),
                                  "calls/s", ">= 5000"))
            box.close()
        finally:
            Sandbox.zygote.close()
            Sandbox.zygote = None
    return figures
