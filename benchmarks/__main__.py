"""`make bench`: run every benchmarks/bench_*.py and print one table.

Each module exposes `run() -> list[Figure]`. Timing lives here, never in tests. The first and
last rows time a fixed reference loop: this machine's speed drifts (see common.machine_speed).
Pass module names (e.g. `python -m benchmarks store`) to run only some; `--json` prints the
figures as JSON lines instead of the table (benchmarks/compare.py reads them). Each module's
wall time is a row, and so is its CPU time (this process's and its children's: the notebooks'
kernels, the grading sandboxes, bench_scale's child runs), which a loaded machine stretches
less than the wall; a module that raises loses its rows, not the table, and the exit status is 1.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import resource
import sys
import time
import traceback

import benchmarks
from benchmarks.common import Figure, machine_speed, table


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and every child it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                   if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if n.removeprefix("bench_") in argv]
    figures = [Figure("machine speed before (reference loop)", machine_speed(), "M steps/s")]
    failed = []
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        start, cpu = time.perf_counter(), cpu_seconds()
        try:  # one module that breaks (say, the grader out of time on a loaded machine) loses
            figures.extend(importlib.import_module(f"benchmarks.{name}").run())  # only its rows
        except Exception:
            traceback.print_exc()
            failed.append(name)
        took, used = time.perf_counter() - start, cpu_seconds() - cpu
        print(f"  {name}: {took:.0f} s ({used:.0f} CPU s){' (failed: no rows)' if name in failed else ''}",
              file=sys.stderr, flush=True)
        figures += [Figure(f"{name} (the whole module)", took, "s wall"),
                    Figure(f"{name} (the whole module, CPU)", used, "CPU s")]
    figures.append(Figure("machine speed after (reference loop)", machine_speed(), "M steps/s"))
    if as_json:
        for figure in figures:
            print(json.dumps(dataclasses.asdict(figure)))
    else:
        print(table(figures))
    if failed:
        print(f"failed: {', '.join(failed)} (tracebacks above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
