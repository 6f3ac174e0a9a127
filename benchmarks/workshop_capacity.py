"""How many learners this machine serves: one notebook run by N learners at once.

    python -m benchmarks.workshop_capacity [--learners 1,2,4,6] [NOTEBOOK ...]

Each learner is a kernel of its own (as a workshop's Labs each start theirs), executing the
whole notebook with nbclient, all N at once; the table gives the slowest learner's time, the
time one learner alone takes, and each kernel's peak memory. A notebook is "usable" for a room
while the slowest learner's run stays within a few times the lone one (the course's cells are
written to take seconds). README.md ("A workshop on one machine") quotes the numbers measured
here, with the browser test's (tests/test_workshop_browser.py: three learners, one running the
tour in Chromium) beside them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_learner(notebook: Path) -> tuple[float, float]:
    """Run the notebook in a fresh kernel in a child process: (seconds, peak MiB of the kernel)."""
    code = ("import nbformat, resource, sys, time; from nbclient import NotebookClient\n"
            "nb = nbformat.read(sys.argv[1], as_version=4); start = time.monotonic()\n"
            "NotebookClient(nb, timeout=600, kernel_name='python3',\n"
            "               resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
            "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
            "print(time.monotonic() - start, peak)\n")
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run([sys.executable, "-c", code, str(notebook), str(notebook.parent)],
                              capture_output=True, text=True, cwd=scratch,
                              env=dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1"))
    if done.returncode != 0:
        raise RuntimeError(f"{notebook.name}: {done.stderr[-2000:]}")
    seconds, mib = done.stdout.split()[-2:]
    return float(seconds), float(mib)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", default=["00_tour"])
    parser.add_argument("--learners", default="1,2,4,6")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.learners.split(",")]
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 30
    print(f"{os.cpu_count()} cores; {memory} GiB")
    print(f"{'notebook':<16} {'learners':>8} {'slowest s':>10} {'alone s':>8} {'x alone':>8} "
          f"{'MiB/kernel':>11}")
    for name in args.notebooks:
        notebook = next((ROOT / "notebooks").glob(f"{name}*.ipynb"))
        one_learner(notebook)  # warm: compiled caches, fonts, the first import of everything
        alone = 0.0
        for count in counts:
            start = time.monotonic()
            with ThreadPoolExecutor(count) as pool:
                runs = list(pool.map(one_learner, [notebook] * count))
            slowest = max(s for s, _ in runs)
            alone = alone or slowest
            print(f"{notebook.stem:<16} {count:>8} {slowest:>10.1f} {alone:>8.1f} "
                  f"{slowest / alone:>8.1f} {max(m for _, m in runs):>11.0f}"
                  f"   (wall {time.monotonic() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
