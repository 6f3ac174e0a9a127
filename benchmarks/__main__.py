"""`make bench`: run every benchmarks/bench_*.py and print one table.

Each module exposes `run() -> list[Figure]`. Timing lives here, never in tests. The first and
last rows time a fixed reference loop: this machine's speed drifts (see common.machine_speed).
Pass module names (e.g. `python -m benchmarks store`) to run only some; `--json` prints the
figures as JSON lines instead of the table (benchmarks/compare.py reads them).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import sys

import benchmarks
from benchmarks.common import Figure, machine_speed, table


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                   if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if n.removeprefix("bench_") in argv]
    figures = [Figure("machine speed before (reference loop)", machine_speed(), "M steps/s")]
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"running {name} ...", file=sys.stderr, flush=True)
        figures.extend(module.run())
    figures.append(Figure("machine speed after (reference loop)", machine_speed(), "M steps/s"))
    if as_json:
        for figure in figures:
            print(json.dumps(dataclasses.asdict(figure)))
    else:
        print(table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
