"""Profile the density run (bench_kubelet's, full kubelets; or bench_scale's hollow one) with cProfile.

Issue 29 asks where the time of the 1,000 x 30 run goes. This runs the same workload for a
bounded span of simulated time under cProfile and prints the top functions by cumulative time
(their share of the whole run) and by own time.

    python -m benchmarks.profile_density 1000 30 60 [hollow] [--out FILE] [--no-profile]
    # nodes, pods per node, simulated seconds after the apply; --no-profile: the same run
    # without cProfile, for its simulated seconds per wall second and peak memory

Not part of `make bench` (a profile slows the run about twofold).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from typing import Any


def workload(nodes: int, pods_per_node: int, seconds: float, hollow: bool) -> dict[str, Any]:
    from benchmarks.bench_scale import apply_pods
    from kubelab.cluster import Cluster

    c = Cluster(nodes=nodes, hollow=hollow)
    c.trace.enabled = False
    c.run(5)
    total = nodes * pods_per_node
    running: set[str] = set()

    def on_event(event: dict[str, Any]) -> None:
        obj = event.get("object") or {}
        if (obj.get("status") or {}).get("phase") == "Running":
            running.add(obj["metadata"]["uid"])
    c.client.watch("pods", on_event)
    start, t0, cpu = time.perf_counter(), c.clock.now, time.process_time()
    apply_pods(c, total)
    while len(running) < total and c.clock.now - t0 < seconds:
        c.run(5.0)
        print(f"  {c.clock.now - t0:.0f} sim s, {len(running)} Running, "
              f"{time.perf_counter() - start:.0f} wall s, {time.process_time() - cpu:.0f} CPU s",
              file=sys.stderr, flush=True)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "simulated": c.clock.now - t0, "running": len(running),
            "total": total}


def top(stats: pstats.Stats, key: str, n: int) -> list[tuple[float, float, str]]:
    total = max(t for (_c, _n, _t, t, _callers) in stats.stats.values())  # type: ignore[attr-defined]
    rows = []
    for (file, line, name), (_cc, _nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{file.split('/kubelab/')[-1]}:{line}({name})"
        rows.append((ct if key == "cumulative" else tt, total, where))
    rows.sort(reverse=True)
    return rows[:n]


def main(argv: list[str]) -> None:
    out = argv[argv.index("--out") + 1] if "--out" in argv else None
    nums = [float(a) for a in argv if a.replace(".", "").isdigit()]
    nodes, per, seconds = int(nums[0]), int(nums[1]), nums[2]
    if "--no-profile" in argv:
        from benchmarks.common import peak_memory_mib

        result = workload(nodes, per, seconds, hollow="hollow" in argv)
        print({**result, "sim_per_wall": result["simulated"] / result["wall"],
               "sim_per_cpu": result["simulated"] / result["cpu"], "max_rss_mib": peak_memory_mib()})
        return
    # The process's CPU clock, not the wall: on a shared machine the wall clock would charge
    # the wait for a core to whichever function was running.
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    result = workload(nodes, per, seconds, hollow="hollow" in argv)
    profile.disable()
    if out:
        profile.dump_stats(out)
    stats = pstats.Stats(profile)
    print(result)
    for key in ("cumulative", "tottime"):
        print(f"top by {key} (share of the profiled run):")
        for value, total, where in top(stats, key, 40):
            print(f"  {100 * value / total:5.1f} %  {value:8.1f} s  {where}")


if __name__ == "__main__":
    main(sys.argv[1:])
