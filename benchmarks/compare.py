"""Two trees in one run: `python -m benchmarks.compare REV [module ...]`.

Runs the named benchmark modules (`store`, `apiserver`, ...; all when none is named) against the
commit REV and against the working tree, alternating ROUNDS times (KUBELAB_COMPARE_ROUNDS,
default 3) so that both meet the same machine, and prints each figure's median in both trees
and their ratio (working tree / REV). A change that moves code without changing its shape
should leave every ratio within the noise, which the reference loop's row shows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(tree: Path, modules: list[str]) -> dict[str, tuple[float, str]]:
    """One `python -m benchmarks` in `tree`, with that tree's own benchmarks and kubelab. An
    older tree may print only the table (no --json): its rows are read back from the text."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    json_flag = ["--json"] if "--json" in (tree / "benchmarks" / "__main__.py").read_text() else []
    out = subprocess.run([sys.executable, "-m", "benchmarks", *json_flag, *modules], cwd=tree, env=env,
                         capture_output=True, text=True, check=True).stdout
    if json_flag:
        rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return {row["name"]: (row["value"], row["unit"]) for row in rows}
    found: dict[str, tuple[float, str]] = {}
    for line in out.splitlines()[2:]:  # the header and its dashes
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 3:
            found[cells[0]] = (float(cells[1].replace(",", "")), cells[2])
    return found


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    rev, modules = argv[0], argv[1:]
    rounds = int(os.environ.get("KUBELAB_COMPARE_ROUNDS", "3"))
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(old), rev], cwd=ROOT, check=True)
        # Both trees are timed by the same harness (this tree's timer and collector settings);
        # each keeps its own benchmark modules, which use its own import paths.
        shutil.copy2(ROOT / "benchmarks" / "common.py", old / "benchmarks" / "common.py")
        try:
            runs: dict[str, list[list[float]]] = {}
            units: dict[str, str] = {}
            for i in range(rounds):
                for side, tree in ((0, old), (1, ROOT)):
                    print(f"round {i + 1}/{rounds}: {'old' if side == 0 else 'new'} tree ...",
                          file=sys.stderr, flush=True)
                    for name, (value, unit) in _run(tree, modules).items():
                        runs.setdefault(name, [[], []])[side].append(value)
                        units[name] = unit
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=True)
    width = max(len(n) for n in runs)
    print(f"{'figure'.ljust(width)}  {rev[:10]:>12}  {'this tree':>12}  ratio  unit")
    for name, (before, after) in runs.items():
        if not before or not after:
            continue
        a, b = statistics.median(before), statistics.median(after)
        ratio = b / a if a else float("nan")
        print(f"{name.ljust(width)}  {a:12,.3f}  {b:12,.3f}  {ratio:5.2f}  {units[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
