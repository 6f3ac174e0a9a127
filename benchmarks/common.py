"""Shared helpers for benchmarks: a Figure row, a timer, peak memory, and the table printer."""

from __future__ import annotations

import gc
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Figure:
    name: str            # what was measured, e.g. "store put"
    value: float
    unit: str            # "ops/s", "s", "MiB", ...
    target: str = ""     # the target, e.g. ">= 100000"; empty when none is named

    @property
    def verdict(self) -> str:
        if not self.target:
            return ""
        op, _, num = self.target.partition(" ")
        bound = float(num)
        ok = self.value >= bound if op == ">=" else self.value <= bound
        return "ok" if ok else "MISSED"


def rate(n: int, fn: Callable[[], object]) -> float:
    """Operations per wall-clock second for fn(), which performs n operations.

    The cyclic garbage collector runs first: otherwise a full collection of everything the
    benchmark built so far lands inside whichever timed loop happens to allocate when the
    collector's thresholds are crossed, and a few hundred short requests (a kubelet's list of
    its pods) measure that pause instead of themselves."""
    gc.collect()
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    return n / elapsed if elapsed > 0 else float("inf")


def peak_memory_mib() -> float:
    """This process's peak resident memory. ru_maxrss is not enough in a child that the
    benchmark table started: Linux folds the parent's peak into it when the child, forked
    with vfork, execs. VmHWM is the peak of this program's own memory since exec."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def deep_size(objects: object, seen: set[int] | None = None) -> int:
    """Bytes of objects and everything they hold (sys.getsizeof walk over dicts, lists, tuples
    and sets), each Python object counted once: what a cache keeps alive, shared strings once."""
    seen = set() if seen is None else seen
    total, stack = 0, [objects]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
    return total


def machine_speed(rounds: int = 3) -> float:
    """Millions of steps per second of a fixed pure-Python loop (dict, list and str work, the
    kind kubelab does), best of rounds. This machine's speed drifts as much as twofold from one minute
    to the next (a shared VM): the row printed before and after the benchmarks says which
    phase their figures were taken in."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        table: dict[str, list[int]] = {}
        for i in range(200_000):
            key = f"k{i % 1000}"
            table.setdefault(key, []).append(i)
            if len(table[key]) > 8:
                table[key].clear()
        best = min(best, time.perf_counter() - start)
    return 0.2 / best


def table(figures: list[Figure]) -> str:
    rows = [("figure", "value", "unit", "target", "")]
    for f in figures:
        value = f"{f.value:,.0f}" if abs(f.value) >= 100 else f"{f.value:,.3f}"
        rows.append((f.name, value, f.unit, f.target, f.verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if j != 1 else c.rjust(w)
                               for j, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
