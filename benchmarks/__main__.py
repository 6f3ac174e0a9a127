"""`make bench`: run every benchmarks/bench_*.py and print one table.

Each module exposes `run() -> list[Figure]`. Timing lives here, never in tests.
Pass module names (e.g. `python -m benchmarks store`) to run only some.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks
from benchmarks.common import Figure, table


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                   if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if n.removeprefix("bench_") in argv]
    figures: list[Figure] = []
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"running {name} ...", file=sys.stderr, flush=True)
        figures.extend(module.run())
    print(table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
